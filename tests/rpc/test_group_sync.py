"""Group sync: a burst of appends to one session shares its fsyncs, and none is answered before the fsync covering it.

The end-to-end tests run a real sidecar whose ``os.fsync`` is wrapped (in the
child process, by the command that starts it) to log the file (device and
inode) each call synced, and to fail with EIO while a flag file exists.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from sidecar.errors import StorageError
from sidecar.rpc.dispatch import Dispatcher, GroupSync

from .harness import RawServer, assistant, frame, user

_WRAPPED_SERVER = """
import errno, os, sys
log, flag = os.environ["FSYNC_LOG"], os.environ["FSYNC_FAIL_FLAG"]
real_fsync = os.fsync

def fsync(fd):
    if os.path.exists(flag):
        raise OSError(errno.EIO, "injected I/O error")
    real_fsync(fd)
    st = os.fstat(fd)
    with open(log, "a") as out:
        out.write(f"{st.st_dev}:{st.st_ino}\\n")

os.fsync = fsync
from sidecar.cli import main
sys.exit(main(["serve"]))
"""

BURST = 40


async def _start(tmp_path: Path, policy: str) -> tuple[RawServer, Path, Path]:
    log, flag = tmp_path / "fsync.log", tmp_path / "fail-fsync"
    env = {**os.environ, "FSYNC_LOG": str(log), "FSYNC_FAIL_FLAG": str(flag)}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _WRAPPED_SERVER,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        limit=1 << 26,
    )
    server = RawServer(process, "lsp")
    answer = await server.initialize(tmp_path / "sessions", settings={"store": {"fsync": policy}})
    assert "result" in answer, answer
    return server, log, flag


def _syncs_of(log: Path, path: Path) -> int:
    if not log.exists():
        return 0
    st = path.stat()
    return log.read_text().splitlines().count(f"{st.st_dev}:{st.st_ino}")


async def _burst(server: RawServer, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Send every request in one write, then read every answer (in id order)."""
    server.send_raw(b"".join(frame(r) for r in requests))
    answers = [await server.response() for _ in requests]
    return sorted(answers, key=lambda a: a["id"])


async def _persisted_session(server: RawServer, root: Path) -> tuple[str, Path]:
    sid = (await server.request("session/create", {"cwd": "/work/burst"}))["result"]["sessionId"]
    first = await server.request("session/append", {"sessionId": sid, "entries": [user("hi"), assistant("hello")]})
    assert "result" in first, first
    [path] = root.glob(f"*/*_{sid}.jsonl")
    return sid, path


@pytest.mark.parametrize("policy", ["always", "assistant"])
async def test_a_burst_of_appends_shares_fsyncs_and_every_entry_is_on_disk(tmp_path: Path, policy: str):
    server, log, _flag = await _start(tmp_path, policy)
    try:
        sid, path = await _persisted_session(server, tmp_path / "sessions")
        before = _syncs_of(log, path)
        # Under "assistant" only assistant messages ask for an fsync: each request holds one.
        make = user if policy == "always" else assistant
        requests = [
            {
                "jsonrpc": "2.0",
                "id": n,
                "method": "session/append",
                "params": {"sessionId": sid, "entries": [make(f"m{n}")]},
            }
            for n in range(1, BURST + 1)
        ]
        answers = await _burst(server, requests)
        assert all("result" in a for a in answers), answers
        synced = _syncs_of(log, path) - before
        # One fsync per request without grouping; a group needs only one.
        assert 1 <= synced <= BURST // 4, synced
        lines = path.read_bytes().splitlines()
        assert len(lines) == 3 + BURST
        ids = [a["result"]["entries"][0]["id"] for a in answers]
        assert [json.loads(line)["id"] for line in lines[3:]] == ids
        # Each entry hangs below the one before: the burst ran in order.
        parents = [a["result"]["entries"][0]["parentId"] for a in answers]
        assert parents[1:] == ids[:-1]
    finally:
        await server.stop()


async def test_a_failed_group_fsync_fails_every_request_it_covered(tmp_path: Path):
    server, log, flag = await _start(tmp_path, "always")
    try:
        sid, path = await _persisted_session(server, tmp_path / "sessions")
        before = path.read_bytes()
        flag.touch()
        requests = [
            {
                "jsonrpc": "2.0",
                "id": n,
                "method": "session/append",
                "params": {"sessionId": sid, "entries": [user(f"m{n}")]},
            }
            for n in range(1, BURST + 1)
        ]
        answers = await _burst(server, requests)
        for answer in answers:
            assert answer.get("error", {}).get("code") == -33005, answer
            assert answer["error"]["data"]["latched"] is True
        assert path.read_bytes() == before  # what the failed fsync covered was cut off again
        flag.unlink()
        reopened = await server.request("session/open", {"sessionId": sid})
        assert "result" in reopened, reopened
        ctx = await server.request("session/buildContext", {"sessionId": sid})
        assert len(ctx["result"]["messages"]) == 2
    finally:
        await server.stop()


async def test_a_non_append_call_makes_the_pending_group_fsync_before_it_runs(tmp_path: Path):
    server, log, _flag = await _start(tmp_path, "always")
    try:
        sid, path = await _persisted_session(server, tmp_path / "sessions")
        before = _syncs_of(log, path)
        requests: list[dict[str, Any]] = [
            {
                "jsonrpc": "2.0",
                "id": n,
                "method": "session/append",
                "params": {"sessionId": sid, "entries": [user(f"m{n}")]},
            }
            for n in range(1, 11)
        ]
        requests.append({"jsonrpc": "2.0", "id": 11, "method": "session/buildContext", "params": {"sessionId": sid}})
        requests += [
            {
                "jsonrpc": "2.0",
                "id": n,
                "method": "session/append",
                "params": {"sessionId": sid, "entries": [user(f"m{n}")]},
            }
            for n in range(12, 22)
        ]
        answers = await _burst(server, requests)
        assert all("result" in a for a in answers), answers
        assert len(answers[10]["result"]["messages"]) == 12  # it ran after the ten appends before it
        synced = _syncs_of(log, path) - before
        assert 2 <= synced <= 6, synced  # at least one before the buildContext and one after the rest
    finally:
        await server.stop()


# -- the dispatcher alone -------------------------------------------------------------


class _FakeSync:
    """Stands in for a session: ``settle`` blocks until released, and may fail."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.unsynced = False
        self.settles = 0
        self.release = threading.Event()
        self.error = error

    def write(self, _work: Any) -> str:
        self.unsynced = True
        return "written"

    def settle(self) -> None:
        self.release.wait(10)
        self.settles += 1
        self.unsynced = False
        if self.error is not None:
            raise self.error

    def group(self) -> GroupSync:
        return GroupSync(lambda: self.unsynced, self.settle)


async def _run_group(fake: _FakeSync) -> tuple[list[asyncio.Task[Any]], Dispatcher]:
    with ThreadPoolExecutor(2) as pool:
        dispatcher = Dispatcher(pool, lambda _params: None)
        tasks = [
            asyncio.ensure_future(dispatcher.run(n, "session/append", "s1", None, fake.write, sync=fake.group()))
            for n in range(5)
        ]
        for _ in range(200):  # until the group's fsync has begun
            await asyncio.sleep(0.005)
            if not dispatcher.queues.waiting("s1") and not any(t.done() for t in tasks):
                break
        await asyncio.sleep(0.05)
        assert not any(t.done() for t in tasks)  # nobody is answered while the fsync runs
        fake.release.set()
        await asyncio.wait(tasks)
    return tasks, dispatcher


async def test_group_members_are_answered_only_after_the_one_fsync():
    fake = _FakeSync()
    tasks, dispatcher = await _run_group(fake)
    assert [t.result() for t in tasks] == ["written"] * 5
    assert fake.settles == 1
    assert dispatcher.queues.idle("s1")


async def test_group_members_all_get_the_error_of_a_failed_fsync():
    error = StorageError("could not append: I/O error", latched=True)
    fake = _FakeSync(error)
    tasks, _dispatcher = await _run_group(fake)
    assert fake.settles == 1
    assert all(t.exception() is error for t in tasks)
