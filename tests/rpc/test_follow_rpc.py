"""Another program appending to an open session, seen through a real sidecar over stdio (issue 28).

The other program here is this test appending pi-shaped lines; tests/parity/test_pi_follow.py
does it with pi's own SessionManager.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from .harness import RawServer, assistant, user


def pi_line(entry_id: str, parent: str, text: str) -> bytes:
    obj = {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2025-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1},
    }
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


async def started(root: Path, watch: bool) -> tuple[RawServer, str, Path, str]:
    server = await RawServer.start()
    await server.initialize(root)
    created = (await server.request("session/create", {"cwd": "/w", "watch": watch}))["result"]
    answer = await server.request(
        "session/append", {"sessionId": created["sessionId"], "entries": [user("q"), assistant("a")]}
    )
    return server, created["sessionId"], Path(created["path"]), answer["result"]["leafId"]


async def test_without_watch_the_next_call_reports_the_change_and_no_notification_comes(sessions_root: Path):
    server, sid, path, leaf = await started(sessions_root, watch=False)
    try:
        with open(path, "ab") as out:
            out.write(pi_line("p1", leaf, "from pi"))
        await asyncio.sleep(0.2)  # time a watch would have had to announce it
        answer = await server.request("session/append", {"sessionId": sid, "entries": [assistant("ours")]})
        result = answer["result"]
        assert result["external"] == {"entryIds": ["p1"]}  # reloaded null and headerChanged false are left out
        assert result["entries"][0]["parentId"] == "p1"
        assert server.notifications == []
    finally:
        await server.stop()


async def test_session_changed_goes_over_the_wire_with_the_new_leaf_and_the_unseen_entries(sessions_root: Path):
    server, sid, path, leaf = await started(sessions_root, watch=False)
    try:
        before = path.read_bytes()
        with open(path, "ab") as out:
            out.write(pi_line("p1", leaf, "from pi") + pi_line("p2", "p1", "and more"))
        answer = await server.request(
            "session/append", {"sessionId": sid, "entries": [assistant("ours")], "expectedLeafId": leaf}
        )
        error = answer["error"]
        assert error["code"] == -33012 and error["data"]["kind"] == "sessionChanged"
        assert error["data"]["leafId"] == "p2" and error["data"]["expectedLeafId"] == leaf
        assert error["data"]["entryIds"] == ["p1", "p2"]
        assert [e["message"]["content"][0]["text"] for e in error["data"]["entries"]] == ["from pi", "and more"]
        assert "p2" in error["message"]
        assert len(path.read_bytes()) == len(before) + len(
            pi_line("p1", leaf, "from pi") + pi_line("p2", "p1", "and more")
        )
    finally:
        await server.stop()


async def test_opening_again_without_watch_stops_the_notifications(sessions_root: Path):
    server, sid, path, leaf = await started(sessions_root, watch=True)
    try:
        with open(path, "ab") as out:
            out.write(pi_line("p1", leaf, "heard"))
        note = await server.receive()
        assert note["method"] == "session/didAppend" and note["params"]["entries"][0]["id"] == "p1"
        assert (await server.request("session/open", {"sessionId": sid}))["result"]["leafId"] == "p1"
        with open(path, "ab") as out:
            out.write(pi_line("p2", "p1", "not announced"))
        await asyncio.sleep(0.3)
        built = (await server.request("session/buildContext", {"sessionId": sid}))["result"]
        assert built["external"] == {"entryIds": ["p2"]} and built["leafId"] == "p2"
        assert server.notifications == []
    finally:
        await server.stop()


async def test_without_inotify_a_timer_finds_the_other_programs_lines(sessions_root: Path):
    import os

    server = await RawServer.start(env={**os.environ, "SESSION_SIDECAR_INOTIFY": "0"})
    try:
        await server.initialize(sessions_root)
        created = (await server.request("session/create", {"cwd": "/w", "watch": True}))["result"]
        sid, path = created["sessionId"], Path(created["path"])
        leaf = (await server.request("session/append", {"sessionId": sid, "entries": [user("q"), assistant("a")]}))[
            "result"
        ]["leafId"]
        with open(path, "ab") as out:
            out.write(pi_line("p1", leaf, "found by the timer"))
        note = await server.receive()
        assert note["method"] == "session/didAppend" and note["params"]["leafId"] == "p1"
        assert note["params"]["entries"][0]["message"]["content"][0]["text"] == "found by the timer"
    finally:
        await server.stop()
