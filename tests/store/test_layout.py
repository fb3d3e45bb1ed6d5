"""Where sessions live: the root, pi's layout, ids, and paths that must not escape the root."""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path

import pytest
from session_builders import append, assistant, header, msg, new_session, service, stored_at, user, write_session

from sidecar import wire
from sidecar.errors import InvalidSessionId, PathOutsideRoot, SessionExists, SessionNotFound
from sidecar.store.files.layout import ROOT_ENV, default_root, encode_cwd
from sidecar.store.ids import new_session_id


def test_root_comes_from_the_environment_else_the_platform_data_folder(monkeypatch, tmp_path):
    monkeypatch.setenv(ROOT_ENV, str(tmp_path / "home"))
    assert default_root() == tmp_path / "home"
    monkeypatch.delenv(ROOT_ENV)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_root() == tmp_path / "xdg" / "session-sidecar" / "sessions"


@pytest.mark.parametrize(
    ("cwd", "folder"),
    [
        ("/Users/me/code/app", "--Users-me-code-app--"),
        ("C:\\work\\x", "--C--work-x--"),
        ("\\srv\\a", "--srv-a--"),
        ("rel/dir", "--rel-dir--"),
    ],
)
def test_cwd_folder_names_match_pi(cwd, folder):
    assert encode_cwd(cwd) == folder


def test_a_session_file_is_laid_out_as_pi_does(sessions_root):
    svc = service(sessions_root)
    created = svc.create(wire.CreateParams(cwd="/work/proj"))
    path = Path(created.path)
    # On PostgreSQL the session's location is where export-root writes it: pi's layout all the same.
    assert path.parent == stored_at(svc, sessions_root / "--work-proj--")
    stamp = created.header["timestamp"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stamp)
    assert path.name == f"{stamp.replace(':', '-').replace('.', '-')}_{created.sessionId}.jsonl"
    assert list(created.header) == ["type", "version", "id", "timestamp", "cwd"]


def test_new_session_ids_are_uuid7_and_sort_by_creation():
    ids = []
    for _ in range(5):
        ids.append(new_session_id())
        time.sleep(0.002)
    assert all(uuid.UUID(i).version == 7 and uuid.UUID(i).variant == uuid.RFC_4122 for i in ids)
    assert ids == sorted(ids) and len(set(ids)) == 5


@pytest.mark.parametrize("good", ["a", "A9", "my.session_1-x", "x" * 64, "0" + "-" * 62 + "z"])
def test_caller_given_ids_that_follow_the_rule_are_accepted(sessions_root, good):
    svc = service(sessions_root)
    assert svc.create(wire.CreateParams(cwd="/p", sessionId=good)).sessionId == good


@pytest.mark.parametrize(
    "bad", ["", "-a", "a-", ".a", "a.", "_a", "x" * 65, "a/b", "../x", "a b", "é", "a\\b", "a\x00b"]
)
def test_caller_given_ids_that_break_the_rule_are_refused(sessions_root, bad):
    svc = service(sessions_root)
    with pytest.raises(InvalidSessionId):
        svc.create(wire.CreateParams(cwd="/p", sessionId=bad))
    with pytest.raises(InvalidSessionId):
        svc.open(wire.OpenParams(sessionId=bad))
    assert list(sessions_root.iterdir()) == []


def test_a_taken_id_cannot_be_created_twice(sessions_root):
    svc = service(sessions_root)
    svc.create(wire.CreateParams(cwd="/p", sessionId="dup"))
    with pytest.raises(SessionExists):
        svc.create(wire.CreateParams(cwd="/other", sessionId="dup"))


def outside_file(tmp_path) -> Path:
    return write_session(tmp_path / "elsewhere" / "s.jsonl", header("outside"), [])


def test_an_absolute_path_outside_the_root_is_refused_by_default(sessions_root, tmp_path):
    path = outside_file(tmp_path)
    with pytest.raises(PathOutsideRoot):
        service(sessions_root).open(wire.OpenParams(path=str(path)))


def test_an_absolute_path_outside_the_root_opens_when_allowed(sessions_root, tmp_path):
    path = outside_file(tmp_path)
    opened = service(sessions_root, allowExternalPaths=True).open(wire.OpenParams(path=str(path)))
    assert opened.sessionId == "outside" and opened.path == str(path)


def test_relative_paths_resolve_below_the_root_and_may_not_climb_out(sessions_root, tmp_path):
    write_session(sessions_root / "--p--" / "x_rel.jsonl", header("rel"), [])
    svc = service(sessions_root)
    assert svc.open(wire.OpenParams(path="--p--/x_rel.jsonl")).sessionId == "rel"
    outside_file(tmp_path)
    with pytest.raises(PathOutsideRoot):
        svc.open(wire.OpenParams(path="../elsewhere/s.jsonl"))


def test_a_symlink_inside_the_root_does_not_lead_outside(sessions_root, tmp_path):
    target = outside_file(tmp_path)
    (sessions_root / "--p--").mkdir()
    link = sessions_root / "--p--" / "2025_outside.jsonl"
    link.symlink_to(target)
    svc = service(sessions_root)
    with pytest.raises(PathOutsideRoot):
        svc.open(wire.OpenParams(path=str(link)))
    with pytest.raises(SessionNotFound):  # lookups by id do not follow it either
        svc.open(wire.OpenParams(sessionId="outside"))
    (sessions_root / "--linked--").symlink_to(target.parent, target_is_directory=True)
    with pytest.raises(SessionNotFound):
        svc.open(wire.OpenParams(sessionId="outside"))


def test_sessions_are_found_by_id_in_any_cwd_folder(sessions_root):
    svc = service(sessions_root)
    sid = new_session(svc, cwd="/a/b")
    append(svc, sid, msg(user()), msg(assistant()))
    svc.close(wire.CloseParams(sessionId=sid))
    fresh = service(sessions_root)
    assert fresh.open(wire.OpenParams(sessionId=sid)).path.startswith(
        str(stored_at(fresh, sessions_root / "--a-b--")) + "/"
    )


def test_project_folders_are_read_again_when_the_root_changes_and_while_its_mtime_is_recent(tmp_path):
    """The folder list is kept between calls only behind a settled mtime of the root: a folder added (the
    root's mtime moves) is seen, and so is one added in the same clock tick as the last read."""
    import os

    from sidecar.store.files.layout import Layout

    root = tmp_path / "root"
    (root / "--a--").mkdir(parents=True)
    layout = Layout(root)
    old = time.time_ns() - 60 * 1_000_000_000
    os.utime(root, ns=(old, old))
    assert [p.name for p in layout.project_dirs()] == ["--a--"]
    (root / "--b--").mkdir()  # the root's mtime moves: read again
    assert sorted(p.name for p in layout.project_dirs()) == ["--a--", "--b--"]
    # A change that leaves the same (recent) mtime behind, as two changes in one tick do: never cached.
    stamp = os.stat(root).st_mtime_ns
    assert time.time_ns() - stamp < 2_000_000_000
    (root / "--c--").mkdir()
    os.utime(root, ns=(stamp, stamp))
    assert sorted(p.name for p in layout.project_dirs()) == ["--a--", "--b--", "--c--"]
    (root / "--c--").rmdir()
    os.utime(root, ns=(old - 1, old - 1))
    assert sorted(p.name for p in layout.project_dirs()) == ["--a--", "--b--"]
    listed = layout.project_dirs()
    listed.clear()  # a caller's list is its own
    assert len(layout.project_dirs()) == 2
