"""Persistence: deferred creation, one write per batch, fsync policy, flush, latched errors."""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

import pytest
from session_builders import append, assistant, context, msg, new_session, read_lines, service, user

from sidecar import wire
from sidecar.errors import StorageError


def file_of(svc, sid) -> Path:
    return svc.session(sid).path


class WriteSpy:
    """Wraps os.write: records (fd, bytes) and can fail on demand."""

    def __init__(self, monkeypatch):
        self.real = os.write
        self.calls: list[tuple[int, bytes]] = []
        self.fail_after: int | None = None  # write this many bytes, then fail
        monkeypatch.setattr(os, "write", self)

    def __call__(self, fd, data):
        data = bytes(data)
        if self.fail_after is not None:
            partial, self.fail_after = self.fail_after, None
            if partial:
                self.fail_after = 0  # the next call fails outright
                return self.real(fd, data[:partial])
            raise OSError(errno.ENOSPC, "No space left on device")
        self.calls.append((fd, data))
        return self.real(fd, data)


@pytest.fixture
def fsyncs(monkeypatch):
    calls = []
    real = os.fsync

    def spy(fd):
        calls.append(fd)
        return real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    return calls


def test_no_file_until_the_first_user_or_assistant_message_then_everything_at_once(sessions_root, monkeypatch):
    # pi 1.5's rule (0.73.1 waited for an assistant message): setup entries alone leave no file.
    svc = service(sessions_root)
    sid = new_session(svc, name="named")
    append(svc, sid, {"type": "model_change", "provider": "p", "modelId": "m"})
    append(svc, sid, {"type": "custom", "customType": "ext"})
    append(svc, sid, msg({"role": "system", "content": "be brief", "timestamp": 1}))
    path = file_of(svc, sid)
    assert not path.exists() and not svc.session(sid).persisted
    spy = WriteSpy(monkeypatch)
    on_files = getattr(svc.store, "db", None) is None  # PostgreSQL writes no file: one commit per append instead
    append(svc, sid, msg(user()))
    assert svc.session(sid).persisted
    if on_files:
        assert len(spy.calls) == 1  # header and five entries in one write
    records = read_lines(path)
    assert [r["type"] for r in records] == ["session", "session_info", "model_change", "custom", "message", "message"]
    spy.calls.clear()
    append(svc, sid, msg(assistant("next")))
    if on_files:
        assert len(spy.calls) == 1 and spy.calls[0][1].count(b"\n") == 1
    assert len(read_lines(path)) == 7


def test_appends_go_through_an_append_mode_descriptor(sessions_root):
    svc = service(sessions_root)
    sid = new_session(svc)
    append(svc, sid, msg(user()), msg(assistant()))
    append(svc, sid, msg(user("more")))
    fd = svc.session(sid).writer._fd
    assert fd is not None and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_APPEND


def test_the_header_is_written_once_even_after_entries_without_an_assistant(sessions_root):
    # pi wrote a second header when a deferred session got entries before its first reply.
    svc = service(sessions_root)
    sid = new_session(svc)
    append(svc, sid, {"type": "custom", "customType": "preset"})
    path = file_of(svc, sid)
    assert not path.exists()
    append(svc, sid, {"type": "thinking_level_change", "thinkingLevel": "high"})
    append(svc, sid, msg(user("q1")))
    append(svc, sid, msg(assistant("a1")))
    records = read_lines(path)
    assert [r["type"] for r in records].count("session") == 1
    ids = [r["id"] for r in records]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize(
    ("policy", "expected"),
    [("assistant", [True, True, False, True, False]), ("always", [True] * 5), ("never", [False] * 5)],
)
def test_fsync_policy(sessions_root, fsyncs, policy, expected):
    svc = service(sessions_root, fsync=policy)
    sid = new_session(svc)
    append(svc, sid, {"type": "custom", "customType": "setup"})  # deferred: nothing written yet
    assert fsyncs == []
    seen = []
    for body in (user(), assistant(), user("u"), assistant("again"), {"type": "custom", "customType": "c"}):
        fsyncs.clear()
        append(svc, sid, body if "type" in body else msg(body))
        seen.append(bool(fsyncs))
    # The first user message creates the file; then assistant, user, assistant, custom appends.
    assert seen == expected


def test_flush_forces_the_file_to_disk_under_every_policy(sessions_root, fsyncs):
    svc = service(sessions_root, fsync="never")
    sid = new_session(svc)
    append(svc, sid, msg(user()), msg(assistant()))
    fsyncs.clear()
    assert svc.flush(wire.FlushParams(sessionId=sid)).persisted
    assert len(fsyncs) == 1


def test_flush_before_the_file_exists_reports_not_persisted(sessions_root):
    svc = service(sessions_root)
    sid = new_session(svc)
    append(svc, sid, {"type": "thinking_level_change", "thinkingLevel": "low"})
    assert svc.flush(wire.FlushParams(sessionId=sid)).persisted is False


def test_a_write_error_whose_undo_fails_is_latched_until_the_session_is_reopened(sessions_root, monkeypatch):
    svc = service(sessions_root)
    sid = new_session(svc)
    append(svc, sid, msg(user()), msg(assistant()))
    path = file_of(svc, sid)
    before = path.read_bytes()
    leaf = svc.session(sid).leaf_id
    spy = WriteSpy(monkeypatch)
    spy.fail_after = 0
    real_ftruncate = os.ftruncate

    def ftruncate_fails(fd, length):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "ftruncate", ftruncate_fails)  # the undo cannot be verified
    with pytest.raises(StorageError) as first:
        append(svc, sid, msg(user("lost")))
    monkeypatch.setattr(os, "ftruncate", real_ftruncate)
    assert first.value.data["latched"] is True
    # Memory did not run ahead of disk.
    assert path.read_bytes() == before
    assert svc.store._open[sid].leaf_id == leaf and len(svc.store._open[sid].tree.entries) == 2
    # The disk is fine again, but the session keeps answering with the error...
    for call in (
        lambda: append(svc, sid, msg(user("again"))),
        lambda: context(svc, sid),
        lambda: svc.branch(wire.BranchParams(sessionId=sid, entryId=leaf)),
        lambda: svc.set_label(wire.SetLabelParams(sessionId=sid, entryId=leaf, label="x")),
        lambda: svc.set_name(wire.SetNameParams(sessionId=sid, name="n")),
        lambda: svc.get_tree(wire.GetTreeParams(sessionId=sid)),
        lambda: svc.flush(wire.FlushParams(sessionId=sid)),
    ):
        with pytest.raises(StorageError) as again:
            call()
        assert again.value is first.value
    # ...until it is opened again.
    reopened = svc.open(wire.OpenParams(sessionId=sid))
    assert reopened.entryCount == 2
    append(svc, sid, msg(user("works")))
    assert len(read_lines(path)) == 4


def test_a_failed_append_that_was_undone_is_not_latched_and_can_be_sent_again(sessions_root, monkeypatch):
    svc = service(sessions_root)
    sid = new_session(svc)
    append(svc, sid, msg(user()), msg(assistant()))
    path = file_of(svc, sid)
    before = path.read_bytes()
    spy = WriteSpy(monkeypatch)
    spy.fail_after = 7  # part of the line lands, then the disk is full
    with pytest.raises(StorageError) as failed:
        append(svc, sid, msg(user("retry me")))
    assert failed.value.data["latched"] is False and failed.value.data["errno"] == errno.ENOSPC
    assert path.read_bytes() == before and len(svc.session(sid).tree.entries) == 2
    assert len(context(svc, sid).messages) == 2  # reads go on
    append(svc, sid, msg(user("retry me")))  # space is back: the same batch goes through
    assert len(read_lines(path)) == 4 and read_lines(path)[-1]["message"]["content"] == "retry me"


def test_a_partial_write_is_cut_back_so_no_half_line_stays(sessions_root, monkeypatch):
    svc = service(sessions_root)
    sid = new_session(svc)
    append(svc, sid, msg(user()), msg(assistant()))
    path = file_of(svc, sid)
    before = path.read_bytes()
    spy = WriteSpy(monkeypatch)
    spy.fail_after = 10  # ten bytes land, then the disk fills up
    with pytest.raises(StorageError):
        append(svc, sid, msg(user("x" * 500)))
    assert path.read_bytes() == before


def test_a_failed_first_write_leaves_no_file_and_keeps_memory_as_it_was(sessions_root, monkeypatch):
    svc = service(sessions_root)
    sid = new_session(svc)
    [u] = append(svc, sid, {"type": "custom", "customType": "setup"})
    spy = WriteSpy(monkeypatch)
    spy.fail_after = 0
    with pytest.raises(StorageError):
        append(svc, sid, msg(user()))
    session = svc.store._open[sid]
    assert not session.path.exists()
    assert [e.id for e in session.tree.entries] == [u]
