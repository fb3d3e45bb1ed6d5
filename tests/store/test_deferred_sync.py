"""The writer's deferred fsync (group sync): writes go out at once, one fsync covers them, a failed one takes them all back."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from sidecar.errors import StorageError
from sidecar.store.base import FsyncPolicy
from sidecar.store.files.writer import SessionWriter


@pytest.fixture
def fsyncs(monkeypatch):
    calls: list[int] = []
    state = {"fail": False}
    real = os.fsync

    def spy(fd):
        if state["fail"]:
            raise OSError(errno.EIO, "Input/output error")
        calls.append(fd)
        return real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    spy.calls, spy.state = calls, state  # type: ignore[attr-defined]
    return spy


def writer(tmp_path: Path, policy: FsyncPolicy) -> tuple[SessionWriter, Path]:
    path = tmp_path / "s.jsonl"
    w = SessionWriter(path, policy, exists=False)
    w.create(b'{"type":"session"}\n')
    return w, path


def test_deferred_appends_are_written_at_once_and_synced_by_one_fsync(tmp_path, fsyncs):
    w, path = writer(tmp_path, FsyncPolicy.ALWAYS)
    fsyncs.calls.clear()
    w.append([b'{"a":1}'], durable=False, defer_sync=True)
    w.append([b'{"b":2}'], durable=False, defer_sync=True)
    assert path.read_bytes().endswith(b'{"a":1}\n{"b":2}\n')
    assert fsyncs.calls == [] and w.sync_pending
    w.sync_deferred()
    assert len(fsyncs.calls) == 1 and not w.sync_pending
    w.sync_deferred()  # nothing left: no fsync
    assert len(fsyncs.calls) == 1


def test_under_assistant_only_durable_batches_wait_for_a_sync(tmp_path, fsyncs):
    w, _ = writer(tmp_path, FsyncPolicy.ASSISTANT)
    w.append([b'{"user":1}'], durable=False, defer_sync=True)
    assert not w.sync_pending
    w.append([b'{"assistant":1}'], durable=True, defer_sync=True)
    assert w.sync_pending


def test_a_syncing_append_covers_the_deferred_bytes_before_it(tmp_path, fsyncs):
    w, _ = writer(tmp_path, FsyncPolicy.ALWAYS)
    fsyncs.calls.clear()
    w.append([b'{"a":1}'], durable=False, defer_sync=True)
    w.append([b'{"b":2}'], durable=False)
    assert len(fsyncs.calls) == 1 and not w.sync_pending


def test_a_failed_group_fsync_cuts_off_everything_it_covered_and_latches(tmp_path, fsyncs):
    w, path = writer(tmp_path, FsyncPolicy.ALWAYS)
    before = path.read_bytes()
    w.append([b'{"a":1}'], durable=False, defer_sync=True)
    w.append([b'{"b":2}'], durable=False, defer_sync=True)
    fsyncs.state["fail"] = True
    with pytest.raises(StorageError) as failed:
        w.sync_deferred()
    assert failed.value.data["latched"] is True
    assert path.read_bytes() == before
    with pytest.raises(StorageError):
        w.check()


def test_closing_with_deferred_bytes_latches_a_failed_fsync_for_the_group(tmp_path, fsyncs):
    w, _ = writer(tmp_path, FsyncPolicy.ALWAYS)
    w.append([b'{"a":1}'], durable=False, defer_sync=True)
    fsyncs.state["fail"] = True
    w.close()
    with pytest.raises(StorageError):
        w.sync_deferred()  # the group waiting for it gets the error, not a silent success


def test_closing_with_deferred_bytes_syncs_them(tmp_path, fsyncs):
    w, _ = writer(tmp_path, FsyncPolicy.ALWAYS)
    w.append([b'{"b":2}'], durable=False, defer_sync=True)
    fsyncs.calls.clear()
    w.close()
    assert len(fsyncs.calls) == 1 and not w.sync_pending
    w.sync_deferred()  # synced by the close: nothing left to do
    assert len(fsyncs.calls) == 1
