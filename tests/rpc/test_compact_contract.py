"""session/compact's contract over the wire: no growth, no silent repeat, no autoCompact loop.

Against a real sidecar subprocess; the service-level cases are tests/compaction/test_never_larger.py.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from .harness import RawServer, assistant, snapshot, user

# A line at 100 tokens that a session of short turns crosses, though a summary of it cannot be smaller.
AUTO = {
    "compaction": {"autoCompact": True, "contextWindow": 300, "reserveTokens": 200, "keepRecentTokens": 1},
    "providers": {"default": "offline"},
}


def turns(count: int, start: int = 0) -> list[dict[str, Any]]:
    return [entry for n in range(start, start + count) for entry in (user(f"question {n}"), assistant(f"answer {n}"))]


async def answer_server_requests(server: RawServer) -> int:
    """Answer (null) the requests the server sent the client so far; how many autoCompact asked for."""
    asked = 0
    for message in server.notifications:
        if message.get("method") == "window/workDoneProgress/create" and "id" in message:
            server.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            asked += 1
    server.notifications.clear()
    return asked


async def test_a_small_session_is_not_compacted_larger_nor_twice(raw: RawServer, sessions_root: Path):
    created = await raw.request("session/create", {"cwd": "/work/a", "sessionId": "small"})
    assert "result" in created
    await raw.request("session/append", {"sessionId": "small", "entries": turns(2)})
    before = snapshot(sessions_root)
    refused = await raw.request("session/compact", {"sessionId": "small", "provider": "offline", "keepRecentTokens": 1})
    error = refused["error"]
    assert error["code"] == -33025 and error["data"]["kind"] == "compactionNotSmaller"
    assert error["data"]["summaryTokens"] >= error["data"]["replacedTokens"]
    assert {k: v for k, v in snapshot(sessions_root).items() if not k.startswith(".index")} == {
        k: v for k, v in before.items() if not k.startswith(".index")
    }
    # Enough to shrink: compacted once; asked again at once, refused naming it.
    await raw.request(
        "session/append",
        {
            "sessionId": "small",
            "entries": [
                user("explain"),
                assistant(" ".join(f"step {n} reads file {n} and checks it." for n in range(150))),
                user("thanks"),
                assistant("welcome"),
            ],
        },
    )
    done = (await raw.request("session/compact", {"sessionId": "small", "provider": "offline", "keepRecentTokens": 1}))[
        "result"
    ]
    assert done["tokensAfter"] < done["tokensBefore"] and done["fellBack"] is False
    again = (await raw.request("session/compact", {"sessionId": "small", "provider": "offline"}))["error"]
    assert again["code"] == -33020 and again["data"]["reason"] == "leafIsCompaction"
    assert again["data"]["entryId"] == done["entryId"]


async def test_auto_compact_is_refused_once_not_on_every_append(sessions_root: Path):
    server = await RawServer.start("--log-level", "info")
    try:
        answer = await server.initialize(sessions_root, settings=AUTO)
        assert "result" in answer, answer
        await server.request("session/create", {"cwd": "/work/a", "sessionId": "auto"})
        appended = await server.request("session/append", {"sessionId": "auto", "entries": turns(20)})
        assert appended["result"]["shouldCompact"] is True
        asked = await answer_server_requests(server)
        for number in range(30):  # each past the line, each growing the context a little
            appended = await server.request("session/append", {"sessionId": "auto", "entries": turns(1, 100 + number)})
            assert appended["result"]["shouldCompact"] is True
            asked += await answer_server_requests(server)
            await asyncio.sleep(0.02)
        await server.request("session/flush", {"sessionId": "auto"})
        asked += await answer_server_requests(server)
        assert asked == 1, f"autoCompact was asked for {asked} times"
        entries = (await server.request("session/getEntries", {"sessionId": "auto"}))["result"]["entries"]
        assert [e for e in entries if e["type"] == "compaction"] == []
    finally:
        await server.stop()
    assert server.stderr.count(b"did not compact") == 1, server.stderr.decode(errors="replace")[-2000:]
