"""One writer per session across processes: two real sidecars on one sessions root."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path
from typing import Any

from store_mode import ON_POSTGRES, stored_root

from .harness import RawServer, assistant, user

# On PostgreSQL a killed writer's lease runs out instead of going with the process (PROTOCOL.md,
# "PostgreSQL store"): short leases here, so a test waits seconds, not the default 30.
LEASE_SECONDS = 2.0


async def started(root: Path) -> RawServer:
    server = await RawServer.start()
    answer = await server.initialize(
        root, **({"settings": {"store": {"leaseSeconds": LEASE_SECONDS}}} if ON_POSTGRES else {})
    )
    assert "result" in answer, answer
    return server


async def persisted_session(server: RawServer, cwd: str = "/work/lock", sid: str | None = None) -> str:
    params: dict[str, Any] = {"cwd": cwd}
    if sid is not None:
        params["sessionId"] = sid
    sid = (await server.request("session/create", params))["result"]["sessionId"]
    done = await server.request("session/append", {"sessionId": sid, "entries": [user("hi"), assistant("hello")]})
    assert "result" in done, done
    return sid


def lines_of(root: Path, sid: str) -> list[dict[str, Any]]:
    [path] = stored_root(root, root.parent / "stored").glob(f"*/*_{sid}.jsonl")
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def holder_pid(data: dict[str, Any]) -> int:
    """The process that holds the session: ``pid`` of the file lock, or the pid in a lease's ``owner`` (host:pid:tag)."""
    return data["pid"] if "pid" in data else int(data["owner"].split(":")[-2])


async def test_a_second_sidecar_gets_session_locked_and_no_line_is_interleaved(sessions_root: Path):
    a, b = await started(sessions_root), await started(sessions_root)
    try:
        sid = await persisted_session(a)
        for method, params in (
            ("session/open", {"sessionId": sid}),
            ("session/append", {"sessionId": sid, "entries": [user("from b")]}),
            ("session/archive", {"sessionId": sid}),
            ("session/delete", {"sessionId": sid}),
        ):
            answer = await b.request(method, params)
            error = answer["error"]
            assert error["code"] == -33004, (method, answer)
            assert error["data"]["kind"] == "sessionLocked"
            assert holder_pid(error["data"]) == a.process.pid, (method, answer)  # who holds it
            assert "readOnly" in error["message"]
        # A keeps writing; the file holds A's lines only, each whole.
        for n in range(5):
            ok = await a.request("session/append", {"sessionId": sid, "entries": [user(f"a{n}")]})
            assert "result" in ok
        lines = lines_of(sessions_root, sid)
        assert len(lines) == 1 + 2 + 5
        assert all(line.get("message", {}).get("content", [{}])[0].get("text") != "from b" for line in lines[1:])
    finally:
        await a.stop()
        await b.stop()


async def test_read_only_open_reads_while_another_sidecar_writes_and_refuses_writes(sessions_root: Path):
    a, b = await started(sessions_root), await started(sessions_root)
    try:
        sid = await persisted_session(a)
        opened = await b.request("session/open", {"sessionId": sid, "readOnly": True})
        assert opened["result"]["entryCount"] == 2
        ctx = await b.request("session/buildContext", {"sessionId": sid})
        assert [m["role"] for m in ctx["result"]["messages"]] == ["user", "assistant"]
        for method, params in (
            ("session/append", {"sessionId": sid, "entries": [user("no")]}),
            ("session/setName", {"sessionId": sid, "name": "no"}),
        ):
            refused = await b.request(method, params)
            assert refused["error"]["code"] == -33010, refused
            assert refused["error"]["data"]["readOnly"] is True
        assert len(lines_of(sessions_root, sid)) == 3
        # Asking B for a writable open again is still refused while A holds it.
        again = await b.request("session/open", {"sessionId": sid})
        assert again["error"]["code"] == -33004
        # Once A closes it, B's writable open takes the lock and writes.
        assert (await a.request("session/close", {"sessionId": sid}))["result"] is None
        assert "result" in await b.request("session/open", {"sessionId": sid})
        assert "result" in await b.request("session/append", {"sessionId": sid, "entries": [user("b now")]})
        refused = await a.request("session/append", {"sessionId": sid, "entries": [user("a again")]})
        assert refused["error"]["code"] == -33004
        assert len(lines_of(sessions_root, sid)) == 4
    finally:
        await a.stop()
        await b.stop()


async def test_two_sidecars_append_to_different_sessions_in_one_folder(sessions_root: Path):
    a, b = await started(sessions_root), await started(sessions_root)
    try:
        sa, sb = await persisted_session(a, sid="sess-a"), await persisted_session(b, sid="sess-b")

        async def burst(server: RawServer, sid: str) -> None:
            for n in range(20):
                answer = await server.request("session/append", {"sessionId": sid, "entries": [user(f"{sid}-{n}")]})
                assert "result" in answer, answer

        await asyncio.gather(burst(a, sa), burst(b, sb))
        for sid in (sa, sb):
            lines = lines_of(sessions_root, sid)
            assert len(lines) == 23
            texts = [line["message"]["content"][0]["text"] for line in lines[3:]]
            assert texts == [f"{sid}-{n}" for n in range(20)]
    finally:
        await a.stop()
        await b.stop()


async def test_the_lock_goes_with_shutdown_with_end_of_input_and_with_a_killed_process(sessions_root: Path):
    b = await started(sessions_root)
    try:
        # shutdown + exit
        a = await started(sessions_root)
        sid = await persisted_session(a, sid="by-shutdown")
        assert (await b.request("session/open", {"sessionId": sid}))["error"]["code"] == -33004
        await a.request("shutdown")
        a.send({"jsonrpc": "2.0", "method": "exit"})
        assert await a.wait() == 0
        assert "result" in await b.request("session/open", {"sessionId": sid})
        # end of stdin
        a = await started(sessions_root)
        sid = await persisted_session(a, sid="by-eof")
        assert (await b.request("session/open", {"sessionId": sid}))["error"]["code"] == -33004
        await a.close_stdin()
        assert await a.wait() == 0
        assert "result" in await b.request("session/open", {"sessionId": sid})
        # SIGKILL: the kernel drops the lock with the process
        a = await started(sessions_root)
        sid = await persisted_session(a, sid="by-kill")
        assert (await b.request("session/open", {"sessionId": sid}))["error"]["code"] == -33004
        a.process.send_signal(signal.SIGKILL)
        assert await a.wait() == -signal.SIGKILL
        if ON_POSTGRES:  # the lease outlives the process until it expires, and not longer
            loop = asyncio.get_running_loop()
            killed_at = loop.time()
            while "result" not in (opened := await b.request("session/open", {"sessionId": sid})):
                assert opened["error"]["code"] == -33004 and loop.time() - killed_at < LEASE_SECONDS + 5, opened
                await asyncio.sleep(0.2)
        else:
            assert "result" in await b.request("session/open", {"sessionId": sid})
        assert "result" in await b.request("session/append", {"sessionId": sid, "entries": [user("after kill")]})
        assert len(lines_of(sessions_root, sid)) == 4
    finally:
        await b.stop()


async def test_of_sidecars_racing_to_open_one_session_exactly_one_gets_it(sessions_root: Path):
    owner = await started(sessions_root)
    sid = await persisted_session(owner, sid="raced")
    await owner.request("shutdown")
    owner.send({"jsonrpc": "2.0", "method": "exit"})
    assert await owner.wait() == 0
    racers = [await started(sessions_root) for _ in range(4)]
    try:
        answers = await asyncio.gather(*(r.request("session/open", {"sessionId": sid}) for r in racers))
        assert sum("result" in a for a in answers) == 1, answers
        assert all(a["error"]["code"] == -33004 for a in answers if "error" in a)
        winner = racers[next(i for i, a in enumerate(answers) if "result" in a)]
        assert "result" in await winner.request("session/append", {"sessionId": sid, "entries": [user("won")]})
        assert len(lines_of(sessions_root, sid)) == 4
    finally:
        for racer in racers:
            await racer.stop()
