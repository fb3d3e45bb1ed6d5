"""A process that dies while creating a session file leaves no half-made file (found by tests/rpc/test_crash.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sidecar.format.jsonl import parse_file
from sidecar.store.base import FsyncPolicy
from sidecar.store.files import writer as writer_module
from sidecar.store.files.writer import SessionWriter

DATA = b'{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/w"}\n' + b'{"type":"x","id":"a"}\n' * 1000


@pytest.mark.parametrize("written", [0, 10, len(DATA) // 2])
def test_dying_inside_create_leaves_no_session_file(tmp_path: Path, written: int):
    path = tmp_path / "p" / "s.jsonl"
    pid = os.fork()
    if pid == 0:  # the child writes part of the file, then dies as SIGKILL would: no cleanup, no exit handlers

        def write_then_die(fd: int, data: bytes) -> None:
            os.write(fd, data[:written])
            os._exit(9)

        writer_module._write_all = write_then_die  # type: ignore[assignment]
        try:
            SessionWriter(path, FsyncPolicy.ASSISTANT, exists=False).create(DATA)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 9
    # Either no session file, or a whole one; never an empty or torn one that no longer opens.
    assert not path.exists()
    assert [p.name for p in path.parent.iterdir() if p.suffix == ".jsonl"] == []
    # The session can be created afterwards.
    writer = SessionWriter(path, FsyncPolicy.ASSISTANT, exists=False)
    writer.create(DATA)
    writer.append([b'{"type":"x","id":"b"}'], durable=True)
    writer.close()
    assert len(parse_file(path.read_bytes()).items) == 1001
