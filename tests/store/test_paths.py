"""Paths that must not lead out of the root, and files only their owner can read."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from session_builders import append, assistant, header, msg, new_session, service, user, write_session

from sidecar import wire
from sidecar.errors import InvalidParams, PathOutsideRoot


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def loose_umask():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_files_and_every_folder_made_for_them_are_owner_only(sessions_root, loose_umask):
    svc = service(sessions_root)
    sid = new_session(svc, cwd="/work/modes")
    append(svc, sid, msg(user()), msg(assistant()))
    path = Path(svc.session(sid).path)
    assert mode(path) == 0o600 and mode(path.parent) == 0o700
    svc.archive(wire.ArchiveParams(sessionId=sid))
    archived = sessions_root / ".archive" / path.parent.name / path.name
    assert mode(archived) == 0o600
    assert mode(sessions_root / ".archive") == 0o700 and mode(archived.parent) == 0o700
    svc.delete(wire.DeleteParams(sessionId=sid))
    assert mode(sessions_root / ".trash") == 0o700 and mode(sessions_root / ".trash" / path.parent.name) == 0o700


def test_a_torn_tail_set_aside_is_owner_only(sessions_root, loose_umask):
    path = write_session(
        sessions_root / "--p--" / "2025_torn.jsonl",
        header("torn"),
        [
            {
                "type": "message",
                "id": "a1",
                "parentId": None,
                "timestamp": "2025-01-01T00:00:01.000Z",
                "message": user(),
            },
        ],
    )
    with open(path, "ab") as out:  # a line cut short by a crash: no newline at the end
        out.write(b'{"type":"message","id":"a2","parentId":"a1","timest')
    svc = service(sessions_root)
    svc.open(wire.OpenParams(sessionId="torn"))
    append(svc, "torn", msg(assistant()))
    aside = path.with_name(path.name + ".torn")
    assert aside.exists() and mode(aside) == 0o600


def test_a_cwd_folder_that_is_a_symlink_out_of_the_root_gets_no_session(sessions_root, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (sessions_root / "--work-proj--").symlink_to(outside, target_is_directory=True)
    svc = service(sessions_root)
    with pytest.raises(PathOutsideRoot):
        svc.create(wire.CreateParams(cwd="/work/proj"))
    assert list(outside.iterdir()) == []
    # A fork into that cwd is refused the same way, and the source stays as it was.
    sid = new_session(svc, cwd="/work/other")
    append(svc, sid, msg(user()), msg(assistant()))
    with pytest.raises(PathOutsideRoot):
        svc.fork(wire.ForkParams(sessionId=sid, cwd="/work/proj"))
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("area", [".archive", ".trash"])
def test_an_archive_or_trash_that_is_a_symlink_out_of_the_root_moves_nothing(sessions_root, tmp_path, area):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (sessions_root / area).symlink_to(outside, target_is_directory=True)
    svc = service(sessions_root)
    sid = new_session(svc, cwd="/work/proj")
    append(svc, sid, msg(user()), msg(assistant()))
    path = Path(svc.session(sid).path)
    with pytest.raises(PathOutsideRoot):
        if area == ".archive":
            svc.archive(wire.ArchiveParams(sessionId=sid))
        else:
            svc.delete(wire.DeleteParams(sessionId=sid))
    assert path.exists() and list(outside.iterdir()) == []
    assert svc.open(wire.OpenParams(sessionId=sid)).entryCount == 2


def test_a_project_folder_in_the_archive_that_is_a_symlink_out_is_refused(sessions_root, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    svc = service(sessions_root)
    sid = new_session(svc, cwd="/work/proj")
    append(svc, sid, msg(user()), msg(assistant()))
    (sessions_root / ".archive").mkdir()
    (sessions_root / ".archive" / "--work-proj--").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathOutsideRoot):
        svc.archive(wire.ArchiveParams(sessionId=sid))
    assert list(outside.iterdir()) == []


def test_a_cwd_with_a_nul_is_refused_at_create(sessions_root):
    svc = service(sessions_root)
    with pytest.raises(InvalidParams) as refused:
        svc.create(wire.CreateParams(cwd="/work/a\x00b"))
    assert refused.value.data["field"] == "cwd"
    assert list(sessions_root.iterdir()) == []


@pytest.mark.parametrize("raw", ["a\x00b.jsonl", "/etc/passwd", "../x.jsonl", "--p--/../../x.jsonl"])
def test_open_by_a_path_that_is_not_below_the_root_is_refused(sessions_root, raw):
    with pytest.raises(PathOutsideRoot):
        service(sessions_root).open(wire.OpenParams(path=raw))
