"""Shutdown and end of input while the sidecar waits on the client (the ``client`` provider's ``session/summarize``).

``shutdown`` finishes what is in flight, and a compaction in flight may be waiting on
an answer the client still owes: the client may send that answer after ``shutdown``,
and both requests are then answered. At end of input nobody is left to answer, so
the wait is given up: the compaction is refused and nothing is written, and the
process exits instead of hanging.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from .harness import RawServer, assistant, user


async def _compaction_waiting_on_the_client(server: RawServer, root: Path) -> tuple[int, dict[str, Any]]:
    await server.initialize(root)
    await server.request("session/create", {"cwd": "/w", "sessionId": "asks"})
    entries: list[dict[str, Any]] = []
    for index in range(6):
        entries += [user(f"question {index} " + "word " * 150), assistant(f"answer {index} " + "word " * 150)]
    await server.request("session/append", {"sessionId": "asks", "entries": entries})
    server.send(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "session/compact",
            "params": {"sessionId": "asks", "provider": "client", "keepRecentTokens": 300},
        }
    )
    while True:
        message = await server.receive()
        if message.get("method") == "session/summarize":
            return 7, message


async def test_shutdown_waits_for_the_clients_answer_then_answers_both(tmp_path: Path):
    server = await RawServer.start()
    try:
        compact_id, asked = await _compaction_waiting_on_the_client(server, tmp_path)
        server.send({"jsonrpc": "2.0", "id": 8, "method": "shutdown"})
        await asyncio.sleep(0.3)  # shutdown is now waiting on the compaction, which waits on us
        server.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"text": "CLIENT SUMMARY after shutdown"}})
        answers: dict[Any, dict[str, Any]] = {}
        while len(answers) < 2:
            message = await server.receive()
            if "id" in message and "method" not in message:
                answers[message["id"]] = message
        assert answers[compact_id]["result"]["summary"].startswith("CLIENT SUMMARY after shutdown")
        assert answers[8] == {"jsonrpc": "2.0", "id": 8, "result": None}
        server.send({"jsonrpc": "2.0", "method": "exit"})
        assert await server.wait() == 0
        assert b"Traceback" not in server.stderr, server.stderr.decode(errors="replace")
    finally:
        await server.stop()


async def test_end_of_input_gives_up_the_wait_refuses_the_compaction_and_exits(tmp_path: Path):
    server = await RawServer.start()
    try:
        compact_id, _asked = await _compaction_waiting_on_the_client(server, tmp_path)
        await server.close_stdin()
        answer = await server.response()
        assert answer["id"] == compact_id and "error" in answer, answer
        assert "client" in answer["error"]["message"]
        await server.wait()
        assert b"Traceback" not in server.stderr, server.stderr.decode(errors="replace")
    finally:
        await server.stop()
    # Nothing was written: a fresh sidecar on the same store (files or PostgreSQL) finds no compaction.
    reader = await RawServer.start()
    try:
        await reader.initialize(tmp_path)
        stored = await reader.request("session/getEntries", {"sessionId": "asks"})
        kinds = [entry["type"] for entry in stored["result"]["entries"]]
        assert kinds.count("message") == 12 and "compaction" not in kinds, kinds
    finally:
        await reader.stop()
