"""Per-root compatibility: where images and names go, oh-my-pi's title line kept and rewritten, blobs moved."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from session_builders import append, assistant, msg, new_session, service, user

from sidecar import wire
from sidecar.errors import InvalidParams
from sidecar.format.titleslot import SLOT_BYTES, slot_line
from sidecar.store.compat import root_compat, session_compat
from sidecar.store.payload import BLOB_PREFIX, BlobStore


def image_msg(data: str) -> dict:
    return msg({"role": "user", "content": [{"type": "image", "data": data, "mimeType": "image/png"}], "timestamp": 1})


def omp_root(tmp_path: Path) -> Path:
    root = tmp_path / "home" / ".omp" / "agent" / "sessions"
    root.mkdir(parents=True)
    return root


def test_the_default_follows_the_tool_whose_folder_the_root_is(tmp_path):
    assert root_compat(Path("/h/.omp/agent/sessions"), None) == "omp"
    assert root_compat(Path("/h/.pi/agent/sessions"), None) == "pi"
    assert root_compat(Path("/h/.local/share/session-sidecar/sessions"), None) == "pi"
    assert root_compat(Path("/h/.pi/agent/sessions"), "omp") == "omp"  # the setting wins
    # A file outside the root (allowExternalPaths) follows its own folder's tool.
    assert session_compat(Path("/h/.omp/agent/sessions/--p--/a.jsonl"), Path("/r"), "pi") == "omp"
    assert session_compat(Path("/r/--p--/a.jsonl"), Path("/r"), "pi") == "pi"


def test_compat_setting_from_the_command_line_reaches_initialize(tmp_path):
    from sidecar.config import load_settings

    settings = load_settings(None, environ={"SESSION_SIDECAR_COMPAT": "omp"})
    assert settings.store.compat == "omp"


def persisted(svc) -> str:
    sid = new_session(svc)
    append(svc, sid, msg(user()), msg(assistant()))
    return sid


def test_under_omp_a_name_goes_to_the_title_line_in_place_and_a_title_change(tmp_path):
    root = omp_root(tmp_path)
    svc = service(root)
    sid = persisted(svc)
    path = svc.session(sid).path
    inode = path.stat().st_ino
    first = path.read_bytes()
    assert len(first.split(b"\n")[0]) + 1 == SLOT_BYTES and json.loads(first.split(b"\n")[0])["title"] == ""
    result = svc.set_name(wire.SetNameParams(sessionId=sid, name="  My\tfirst  name "))
    assert result.name == "My first name"
    svc.set_name(wire.SetNameParams(sessionId=sid, name="Second"))
    data = path.read_bytes()
    assert path.stat().st_ino == inode  # rewritten in place, as oh-my-pi does
    slot = json.loads(data.split(b"\n")[0])
    assert (slot["title"], slot["source"]) == ("Second", "user") and len(data.split(b"\n")[0]) + 1 == SLOT_BYTES
    lines = [json.loads(x) for x in data.split(b"\n")[2:-1]]
    changes = [x for x in lines if x["type"] == "title_change"]
    assert [(c["title"], c.get("previousTitle")) for c in changes] == [
        ("My first name", None),
        ("Second", "My first name"),
    ]
    assert data[SLOT_BYTES:].startswith(first[SLOT_BYTES:].split(b"\n")[0])  # the header did not move
    append(svc, sid, msg(user("after")))
    svc.close_all()
    again = service(root)
    opened = again.open(wire.OpenParams(sessionId=sid))
    assert again.session(sid).name == "Second" and opened.titleFault is None
    listed = again.list(wire.ListParams(all=True)).sessions[0]
    assert listed.title == "Second"
    with pytest.raises(InvalidParams):
        again.set_name(wire.SetNameParams(sessionId=sid, name=" \t "))


def test_a_file_without_a_title_line_gets_one_at_its_first_name(tmp_path, sessions_root):
    # Written under pi's rules (no title line), then served from oh-my-pi's folder.
    sid = persisted(service(sessions_root))
    service(sessions_root).close_all()
    source = next(sessions_root.rglob("*.jsonl"))
    root = omp_root(tmp_path)
    (root / source.parent.name).mkdir()
    path = root / source.parent.name / source.name
    path.write_bytes(source.read_bytes())
    svc = service(root)
    opened = svc.open(wire.OpenParams(sessionId=sid))
    assert opened.titleFault and "no title line" in opened.titleFault
    before = path.read_bytes()
    svc.set_name(wire.SetNameParams(sessionId=sid, name="Named late"))
    after = path.read_bytes()
    assert after[SLOT_BYTES : SLOT_BYTES + len(before)] == before  # every old byte, after the new line
    ids = append(svc, sid, msg(user("and more")))  # the writer follows the rewritten file
    assert svc.build_context(wire.BuildContextParams(sessionId=sid)).messages[-1]["content"] == "and more"
    svc.close_all()
    again = service(root)
    again.open(wire.OpenParams(sessionId=sid))
    assert again.session(sid).name == "Named late" and again.session(sid).tree.entries[-1].id == ids[0]


def test_a_damaged_title_line_is_reported_and_the_rest_opens_and_is_kept(tmp_path):
    root = omp_root(tmp_path)
    svc = service(root)
    sid = persisted(svc)
    svc.close_all()
    path = next(root.rglob("*.jsonl"))
    data = path.read_bytes()
    damaged = b'{"type":"title","v":1,"title":"cut' + b" " * (SLOT_BYTES - 36) + b"\n" + data[SLOT_BYTES:]
    path.write_bytes(damaged)
    again = service(root)
    opened = again.open(wire.OpenParams(path=str(path)))
    assert opened.titleFault and opened.entryCount == 2
    append(again, sid, msg(user("still writable")))
    again.close_all()
    assert path.read_bytes().startswith(damaged)  # the damaged line stays as it was: no byte lost


def test_the_title_line_survives_a_migration_and_an_archive_byte_for_byte(tmp_path):
    root = omp_root(tmp_path)
    folder = root / "--w--"
    folder.mkdir()
    slot = slot_line("Old session", "2026-01-01T00:00:00.000Z", "user") + b"\n"
    header = b'{"type":"session","version":2,"id":"old1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n'
    body = (
        b'{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
        b'"message":{"role":"hookMessage","customType":"x","content":"hi","display":true,"timestamp":1}}\n'
    )
    path = folder / "2026-01-01T00-00-00-000Z_old1.jsonl"
    path.write_bytes(slot + header + body)
    svc = service(root)
    opened = svc.open(wire.OpenParams(sessionId="old1"))
    assert opened.migratedFrom == 2 and svc.session("old1").name == "Old session"
    assert path.read_bytes().startswith(slot)
    moved = svc.archive(wire.ArchiveParams(sessionId="old1"))
    assert Path(moved.path).read_bytes().startswith(slot)


def test_images_under_omp_go_to_the_agent_folder_and_old_blobs_stay_readable(tmp_path):
    root = omp_root(tmp_path)
    legacy = BlobStore(root)  # where every sidecar before this one put them
    raw = os.urandom(2000)
    ref = BLOB_PREFIX + legacy.put(raw)
    svc = service(root)
    sid = persisted(svc)
    fresh = os.urandom(3000)
    append(svc, sid, image_msg(base64.b64encode(fresh).decode()), image_msg(ref))
    assert (root.parent / "blobs" / hashlib.sha256(fresh).hexdigest()).read_bytes() == fresh
    shown = svc.build_context(wire.BuildContextParams(sessionId=sid)).messages
    assert [m["content"][0]["data"] for m in shown[-2:]] == [
        base64.b64encode(fresh).decode(),
        base64.b64encode(raw).decode(),
    ]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sidecar", *args], capture_output=True, text=True, timeout=120)


def test_move_blobs_puts_old_blobs_where_oh_my_pi_reads_them(tmp_path):
    root = omp_root(tmp_path)
    raw = os.urandom(2000)
    digest = BlobStore(root).put(raw)
    done = run_cli("move-blobs", "--root", str(root))
    assert done.returncode == 0, done.stderr
    assert (root.parent / "blobs" / digest).read_bytes() == raw and not (root / ".blobs").exists()


def test_inline_blobs_puts_images_back_into_the_lines_with_a_backup(tmp_path):
    root = omp_root(tmp_path)
    svc = service(root)
    sid = persisted(svc)
    datas = [base64.b64encode(os.urandom(n)).decode() for n in (1500, 2500)]
    append(svc, sid, image_msg(datas[0]), msg(user("between")), image_msg(datas[1]))
    legacy_ref = BLOB_PREFIX + BlobStore(root).put(b"old bytes" * 200)
    append(svc, sid, image_msg(legacy_ref))
    path = svc.session(sid).path
    svc.close_all()
    before = path.read_bytes()
    done = run_cli("inline-blobs", "--root", str(root))
    assert done.returncode == 0, done.stderr
    after = path.read_bytes()
    assert b"blob:sha256:" not in after and all(d.encode() in after for d in datas)
    assert (path.parent / (path.name + ".blobrefs.bak")).read_bytes() == before
    old_lines, new_lines = before.split(b"\n"), after.split(b"\n")
    assert len(old_lines) == len(new_lines)
    assert [a == b for a, b in zip(old_lines, new_lines)].count(False) == 3  # only the lines with a reference
    assert old_lines[0] == new_lines[0]  # the title line as it was
    again = service(root, compat="pi")
    again.open(wire.OpenParams(sessionId=sid))
    last = again.build_context(wire.BuildContextParams(sessionId=sid)).messages[-1]
    assert base64.b64decode(last["content"][0]["data"]) == b"old bytes" * 200


def test_a_tree_cache_never_hides_a_title_oh_my_pi_rewrote_in_place(tmp_path, monkeypatch):
    from sidecar.format import jsonl
    from sidecar.store.files import treecache

    monkeypatch.setattr(jsonl, "MAP_THRESHOLD", 0)
    monkeypatch.setattr(treecache, "MIN_CACHED_BYTES", 0)
    root = omp_root(tmp_path)
    svc = service(root)
    sid = persisted(svc)
    svc.set_name(wire.SetNameParams(sessionId=sid, name="Before"))
    path = svc.session(sid).path
    svc.close_all()  # a tree cache is written
    with open(path, "r+b") as handle:  # oh-my-pi renames it: the line rewritten in place
        handle.write(slot_line("After", "2026-01-01T00:00:09.000Z", "auto") + b"\n")
    again = service(root)
    again.open(wire.OpenParams(sessionId=sid))
    assert again.session(sid).name == "After"
    ids = append(again, sid, msg(user("grown")))
    again.close_all()
    with open(path, "ab") as handle:  # and appends behind our back: the cache is extended, not trusted blindly
        handle.write(
            b'{"type":"label","id":"l1","parentId":"%s","timestamp":"2026-01-01T00:00:10.000Z",'
            b'"targetId":"%s","label":"theirs"}\n' % (ids[0].encode(), ids[0].encode())
        )
    third = service(root)
    third.open(wire.OpenParams(sessionId=sid))
    session = third.session(sid)
    assert session.name == "After" and session.tree.labels[ids[0]] == "theirs"
    assert [e.raw for e in session.tree.entries][-2:] == [ln for ln in path.read_bytes().split(b"\n")[-3:-1]]


def test_an_oh_my_pi_file_in_a_pi_root_is_named_as_oh_my_pi_names_it(sessions_root):
    folder = sessions_root / "--w--"
    folder.mkdir()
    slot = slot_line("Theirs", "2026-01-01T00:00:00.000Z", "user") + b"\n"
    header = b'{"type":"session","version":3,"id":"o1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n'
    (folder / "2026-01-01T00-00-00-000Z_o1.jsonl").write_bytes(slot + header)
    svc = service(sessions_root)
    assert svc.store.compat == "pi"
    opened = svc.open(wire.OpenParams(sessionId="o1"))
    assert opened.titleFault is None and svc.session("o1").name == "Theirs"
    assert svc.set_name(wire.SetNameParams(sessionId="o1", name="Ours")).name == "Ours"
    assert svc.session("o1").tree.entries[-1].type == "title_change"


def test_a_fork_under_omp_carries_the_title(tmp_path):
    root = omp_root(tmp_path)
    svc = service(root)
    sid = persisted(svc)
    svc.set_name(wire.SetNameParams(sessionId=sid, name="Parent title"))
    leaf = [e.id for e in svc.session(sid).tree.entries if e.type == "message"][-1]
    forked = svc.fork(wire.ForkParams(sessionId=sid, entryId=leaf))
    first = Path(forked.path).read_bytes().split(b"\n")[0]
    assert len(first) + 1 == SLOT_BYTES and json.loads(first)["title"] == "Parent title"
    assert svc.session(forked.sessionId).name == "Parent title"


def test_an_older_oh_my_pi_file_is_named_by_its_header_title(tmp_path):
    root = omp_root(tmp_path)
    folder = root / "--w--"
    folder.mkdir()
    header = b'{"type":"session","version":3,"id":"h1","title":"Header title","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n'
    (folder / "2026-01-01T00-00-00-000Z_h1.jsonl").write_bytes(header)
    svc = service(root)
    svc.open(wire.OpenParams(sessionId="h1"))
    assert svc.session("h1").name == "Header title"
    assert svc.list(wire.ListParams(all=True)).sessions[0].title == "Header title"
    # A title line, even an empty one, wins over the header's title (oh-my-pi's reading).
    svc.close_all()
    path = folder / "2026-01-01T00-00-00-000Z_h1.jsonl"
    path.write_bytes(slot_line("", "2026-01-01T00:00:00.000Z", None) + b"\n" + header)
    again = service(root)
    again.open(wire.OpenParams(sessionId="h1"))
    assert again.session("h1").name is None
