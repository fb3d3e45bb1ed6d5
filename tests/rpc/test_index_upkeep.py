"""Inline appends fold into the listing index after their answers, in one step per run of appends."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from .harness import RawServer, assistant, frame, user


def index_rows(root: Path) -> dict[str, tuple[int, int]]:
    """session id -> (message_count, size) as the index holds them."""
    with sqlite3.connect(root / ".index" / "sessions.sqlite3") as conn:
        rows = conn.execute("SELECT session_id, message_count, size FROM files WHERE is_session=1").fetchall()
    return {sid: (count, size) for sid, count, size in rows}


async def test_pipelined_appends_to_two_sessions_reach_the_index_before_the_next_call(sessions_root: Path):
    server = await RawServer.start()
    try:
        assert "result" in await server.initialize(sessions_root)
        sids = []
        for name in ("a", "b"):
            sid = (await server.request("session/create", {"cwd": f"/work/{name}"}))["result"]["sessionId"]
            done = await server.request(
                "session/append", {"sessionId": sid, "entries": [user("hi"), assistant("hello")]}
            )
            assert "result" in done
            sids.append(sid)
        # One write: 60 appends alternating between the sessions, then a list with a query.
        burst = b"".join(
            frame(
                {
                    "jsonrpc": "2.0",
                    "id": 1000 + n,
                    "method": "session/append",
                    "params": {"sessionId": sids[n % 2], "entries": [user(f"turn {n} of {'ab'[n % 2]}")]},
                }
            )
            for n in range(60)
        )
        # Any other call runs the held upkeep before its turn: once it is answered, the rows are current.
        burst += frame({"jsonrpc": "2.0", "id": 2000, "method": "session/getTree", "params": {"sessionId": sids[0]}})
        server.send_raw(burst)
        answers = {}
        while 2000 not in answers:
            message = await server.receive()
            answers[message.get("id")] = message
        assert all("result" in answers[1000 + n] for n in range(60))
        rows = index_rows(sessions_root)
        for sid in sids:
            [path] = sessions_root.glob(f"*/*_{sid}.jsonl")
            assert rows[sid] == (32, path.stat().st_size)
        found = (await server.request("session/list", {"query": "turn 59 of b"}))["result"]["sessions"]
        assert [s["sessionId"] for s in found] == [sids[1]] and found[0]["messageCount"] == 32
    finally:
        await server.stop()


async def test_appends_answered_just_before_the_end_of_input_still_reach_the_index(sessions_root: Path):
    server = await RawServer.start()
    sid = None
    try:
        assert "result" in await server.initialize(sessions_root)
        sid = (await server.request("session/create", {"cwd": "/work/eof"}))["result"]["sessionId"]
        assert "result" in await server.request(
            "session/append", {"sessionId": sid, "entries": [user("q"), assistant("a")]}
        )
        for n in range(5):
            assert "result" in await server.request(
                "session/append", {"sessionId": sid, "entries": [user(f"more {n}")]}
            )
        await server.close_stdin()
        assert await server.wait() == 0
    finally:
        await server.stop()
    [path] = sessions_root.glob(f"*/*_{sid}.jsonl")
    assert index_rows(sessions_root)[sid] == (7, path.stat().st_size)


def _large_batch(count: int) -> list[dict]:
    """Entries past the size an append is answered inline at (64 KiB): the call takes a worker's turn."""
    return [
        user(f"question {n}: " + "why does it fail? " * 40) if n % 2 == 0 else assistant(f"answer {n}")
        for n in range(count)
    ]


async def test_large_appends_reach_the_index_after_their_answers_and_before_the_next_call(sessions_root: Path):
    server = await RawServer.start()
    try:
        assert "result" in await server.initialize(sessions_root)
        sid = (await server.request("session/create", {"cwd": "/work/large"}))["result"]["sessionId"]
        first = await server.request("session/append", {"sessionId": sid, "entries": _large_batch(200)})
        assert len(first["result"]["entries"]) == 200
        # Two more pipelined; once they are answered, any call runs their held upkeep before its turn.
        burst = b"".join(
            frame(
                {
                    "jsonrpc": "2.0",
                    "id": 100 + n,
                    "method": "session/append",
                    "params": {"sessionId": sid, "entries": _large_batch(100)},
                }
            )
            for n in range(2)
        )
        server.send_raw(burst)
        answers = {}
        while len(answers) < 2:
            message = await server.receive()
            answers[message.get("id")] = message
        assert "result" in answers[100] and "result" in answers[101]
        assert "result" in await server.request("session/getTree", {"sessionId": sid})
        [path] = sessions_root.glob(f"*/*_{sid}.jsonl")
        assert index_rows(sessions_root)[sid] == (400, path.stat().st_size)
        # And at the end of input, with no call after it.
        assert "result" in await server.request("session/append", {"sessionId": sid, "entries": _large_batch(100)})
        await server.close_stdin()
        assert await server.wait() == 0
    finally:
        await server.stop()
    assert index_rows(sessions_root)[sid] == (500, path.stat().st_size)
