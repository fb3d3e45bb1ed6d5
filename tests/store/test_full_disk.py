"""A real full disk and a real read-only mount: a 64 KiB tmpfs mounted for the test (needs root).

The append fails with a storage error, memory and disk agree, and once space
(or write access) returns the session goes on: an append whose undo was
verified is not latched and can be sent again; a refused open for writing is
not latched either.
"""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest
from session_builders import append, assistant, context, msg, new_session, read_lines, service, user

from sidecar import wire
from sidecar.errors import StorageError


def _mount(args: list[str]) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


@pytest.fixture
def small_disk(tmp_path: Path):
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0 or not _mount(["-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(disk)]):
        pytest.skip(
            "mounting a tmpfs needs root (CAP_SYS_ADMIN); tests/store/test_persistence.py injects the errors instead"
        )
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=True)


def fill(disk: Path) -> Path:
    """Write a file until the disk is full."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as out:
        try:
            while True:
                out.write(b"\0" * 1024)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def test_a_full_disk_refuses_the_append_keeps_memory_and_disk_equal_and_the_session_goes_on(small_disk):
    root = small_disk / "sessions"
    svc = service(root)
    sid = new_session(svc)
    append(svc, sid, msg(user("first")), msg(assistant("ok")))
    path = svc.session(sid).path
    before = path.read_bytes()
    filler = fill(small_disk)
    big = "x" * 16_000  # more than any room left
    with pytest.raises(StorageError) as full:
        append(svc, sid, msg(user(big)))
    assert full.value.data["errno"] == errno.ENOSPC and full.value.data["latched"] is False
    assert path.read_bytes() == before  # no partial line stays
    assert [m["role"] for m in context(svc, sid).messages] == ["user", "assistant"]
    with pytest.raises(StorageError):  # still full: still refused, still nothing kept
        append(svc, sid, msg(user(big)))
    assert path.read_bytes() == before
    filler.unlink()  # space returns
    append(svc, sid, msg(user(big)))
    svc.close_all()
    again = service(root)
    assert again.open(wire.OpenParams(sessionId=sid)).entryCount == 3
    assert read_lines(path)[-1]["message"]["content"] == big


def test_a_first_write_on_a_full_disk_leaves_no_file_and_is_sent_again_later(small_disk):
    root = small_disk / "sessions"
    svc = service(root)
    sid = new_session(svc)
    append(svc, sid, {"type": "custom", "customType": "setup"})  # not written: no user or assistant message yet
    filler = fill(small_disk)
    with pytest.raises(StorageError) as full:
        append(svc, sid, msg(user("y" * 16_000)))
    assert full.value.data["errno"] == errno.ENOSPC
    session = svc.store._open[sid]
    assert not session.path.exists() and len(session.tree.entries) == 1
    assert [p.name for p in session.path.parent.iterdir()] == []  # no temp file left either
    filler.unlink()
    if full.value.data["latched"]:
        pytest.fail("a first write that left nothing on disk should not need a reopen")
    append(svc, sid, msg(user("y" * 16_000)))
    assert len(read_lines(session.path)) == 3


def test_a_read_only_mount_refuses_writes_and_the_session_writes_again_after_remount(small_disk):
    root = small_disk / "sessions"
    svc = service(root)
    sid = new_session(svc)
    append(svc, sid, msg(user()), msg(assistant()))
    svc.close_all()
    path = next(root.glob(f"*/*_{sid}.jsonl"))
    before = path.read_bytes()
    assert _mount(["-o", "remount,ro", str(small_disk)])
    try:
        reader = service(root)
        assert reader.open(wire.OpenParams(sessionId=sid)).entryCount == 2  # reading works
        with pytest.raises(StorageError) as refused:
            append(reader, sid, msg(user("no")))
        assert refused.value.data["errno"] == errno.EROFS and refused.value.data["latched"] is False
        assert len(reader.session(sid).tree.entries) == 2
    finally:
        assert _mount(["-o", "remount,rw", str(small_disk)])
    append(reader, sid, msg(user("yes")))  # no reopen needed
    assert path.read_bytes().startswith(before) and len(read_lines(path)) == 4
