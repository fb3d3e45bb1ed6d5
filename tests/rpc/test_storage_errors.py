"""A full disk under a real sidecar: -33005 with data.latched false, and the same append goes through once space returns."""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest

from .harness import RawServer, assistant, user


@pytest.fixture
def small_disk(tmp_path: Path):
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = (
        os.geteuid() == 0
        and subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(disk)], capture_output=True
        ).returncode
        == 0
    )
    if not mounted:
        pytest.skip("mounting a tmpfs needs root; tests/store/test_persistence.py injects the errors instead")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=True)


async def test_a_full_disk_answers_storage_error_and_the_retry_succeeds(small_disk: Path):
    root = small_disk / "sessions"
    server = await RawServer.start()
    try:
        await server.initialize(root)
        sid = (await server.request("session/create", {"cwd": "/work/full"}))["result"]["sessionId"]
        assert "result" in await server.request(
            "session/append", {"sessionId": sid, "entries": [user("a"), assistant("b")]}
        )
        [path] = root.glob(f"*/*_{sid}.jsonl")
        before = path.read_bytes()
        filler = small_disk / "filler"
        with open(filler, "wb", buffering=0) as out:
            try:
                while True:
                    out.write(b"\0" * 4096)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
        batch = {"sessionId": sid, "entries": [user("z" * 20_000)]}
        full = await server.request("session/append", batch)
        assert full["error"]["code"] == -33005, full
        assert full["error"]["data"]["kind"] == "storageError"
        assert full["error"]["data"]["latched"] is False and full["error"]["data"]["errno"] == errno.ENOSPC
        assert path.read_bytes() == before
        ctx = await server.request("session/buildContext", {"sessionId": sid})
        assert len(ctx["result"]["messages"]) == 2
        filler.unlink()
        again = await server.request("session/append", batch)
        assert "result" in again, again
        assert len(path.read_bytes().splitlines()) == 4
    finally:
        await server.stop()
