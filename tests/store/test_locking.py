"""The session lock within one process: two services on one root exclude each other like two sidecars."""

from __future__ import annotations

import pytest
from session_builders import adopt_files, append, assistant, context, msg, new_session, service, stored_at, user
from test_damaged_files import v1_file

from sidecar import wire
from sidecar.errors import InvalidState, SessionLocked


def test_a_second_service_is_locked_out_until_the_first_closes(sessions_root):
    first, second = service(sessions_root), service(sessions_root)
    sid = new_session(first)
    append(first, sid, msg(user()), msg(assistant()))
    with pytest.raises(SessionLocked) as locked:
        second.open(wire.OpenParams(sessionId=sid))
    assert locked.value.data["path"].endswith(f"_{sid}.jsonl")
    with pytest.raises(SessionLocked):
        append(second, sid, msg(user("b")))
    first.close(wire.CloseParams(sessionId=sid))
    assert second.open(wire.OpenParams(sessionId=sid)).entryCount == 2
    append(second, sid, msg(user("b")))
    with pytest.raises(SessionLocked):  # first no longer has it open: reopening it is refused now
        append(first, sid, msg(user("a")))


def test_close_all_releases_every_lock(sessions_root):
    first, second = service(sessions_root), service(sessions_root)
    ids = [new_session(first) for _ in range(3)]
    for sid in ids:
        append(first, sid, msg(user()), msg(assistant()))
    first.close_all()
    for sid in ids:
        assert second.open(wire.OpenParams(sessionId=sid)).persisted


def test_read_only_open_of_an_old_file_migrates_in_memory_and_leaves_the_file_alone(sessions_root):
    written = v1_file(sessions_root)
    original = written.read_bytes()
    svc = service(sessions_root)
    adopt_files(svc)
    path = stored_at(svc, written)
    opened = svc.open(wire.OpenParams(sessionId="sess-1", readOnly=True))
    assert opened.migratedFrom == 1 and opened.header["version"] == 3
    assert [m["role"] for m in context(svc, "sess-1").messages] == ["compactionSummary", "user", "custom"]
    assert path.read_bytes() == original
    assert not path.with_name(path.name + ".v1.bak").exists()
    with pytest.raises(InvalidState) as refused:
        svc.set_name(wire.SetNameParams(sessionId="sess-1", name="x"))
    assert refused.value.data["readOnly"] is True
    assert path.read_bytes() == original
    # Asking for it writable reads it again, with the lock, and migrates on disk.
    assert svc.open(wire.OpenParams(sessionId="sess-1")).migratedFrom == 1
    assert path.read_bytes() != original
    with pytest.raises(SessionLocked):  # the lock sits on the rewritten file
        service(sessions_root).open(wire.OpenParams(sessionId="sess-1"))


def test_a_read_only_open_never_blocks_the_writer(sessions_root):
    reader, writer = service(sessions_root), service(sessions_root)
    sid = new_session(writer)
    append(writer, sid, msg(user()), msg(assistant()))
    writer.close(wire.CloseParams(sessionId=sid))
    reader.open(wire.OpenParams(sessionId=sid, readOnly=True))
    append(writer, sid, msg(user("still mine")))  # the reader holds no lock
    assert len(writer.session(sid).tree.entries) == 3


def test_opening_an_open_session_again_by_another_spelling_of_its_path_is_not_locked_out(sessions_root):
    svc = service(sessions_root)
    sid = new_session(svc, cwd="/work/p")
    append(svc, sid, msg(user()), msg(assistant()))
    path = svc.session(sid).path
    for spelling in (str(path), f"--work-p--/../--work-p--/{path.name}", f"./--work-p--/{path.name}"):
        assert svc.open(wire.OpenParams(path=spelling)).sessionId == sid
    append(svc, sid, msg(user("still one writer")))
    assert len(svc.session(sid).tree.entries) == 3


def test_a_read_only_session_refuses_compaction_and_summarized_branching_before_any_model_is_asked(sessions_root):
    import asyncio

    writer = service(sessions_root)
    sid = new_session(writer)
    ids = append(writer, sid, msg(user("one")), msg(assistant("two")), msg(user("three")), msg(assistant("four")))
    path = writer.session(sid).path
    writer.close_all()
    before = path.read_bytes()
    reader = service(sessions_root)
    reader.open(wire.OpenParams(sessionId=sid, readOnly=True))
    asked = []
    reader.compactor.compact = lambda *a, **k: asked.append(a)  # would be the model run
    with pytest.raises(InvalidState) as refused:
        asyncio.run(reader.compact(wire.CompactParams(sessionId=sid, provider="offline")))
    assert refused.value.data["readOnly"] is True
    with pytest.raises(InvalidState):
        reader.branch(wire.BranchParams(sessionId=sid, entryId=ids[1], summarize=True, provider="offline"))
    assert asked == [] and path.read_bytes() == before
    reader.branch(wire.BranchParams(sessionId=sid, entryId=ids[1]))  # moving the leaf writes nothing: allowed
    assert reader.session(sid).leaf_id == ids[1]


def test_a_new_session_file_is_locked_from_the_instant_it_appears(tmp_path, monkeypatch):
    # Another sidecar trying the file right after it is linked into place, before
    # create() returns, must already find it locked.
    import fcntl
    import os

    from sidecar.store.files import writer as writer_module

    path = tmp_path / "s.jsonl"
    seen: list[str] = []
    real_link = os.link

    def link_then_probe(source, target):
        real_link(source, target)
        probe = os.open(target, os.O_RDONLY)
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
            seen.append("free")
        except BlockingIOError:
            seen.append("locked")
        finally:
            os.close(probe)

    monkeypatch.setattr(writer_module.os, "link", link_then_probe)
    w = writer_module.SessionWriter(path, writer_module.FsyncPolicy.NEVER, exists=False)
    w.create(b'{"type":"session","id":"s"}\n', durable=False)
    w.close()
    assert seen == ["locked"]
