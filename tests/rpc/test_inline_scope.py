"""Which appends are answered inline (synchronously, where they are read): only while nothing of their own session is in flight."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from .piped import PipedServer


class _Harness(PipedServer):
    def send(self, method: str, params: dict[str, Any]) -> int:
        sent = self.feed(method, params)
        # What the server's loop does when input has no more frames ready: appends read together
        # run now (SidecarProtocol.flush_run); one alone is answered before the loop reads on.
        self.server.protocol.flush_run()
        return sent

    def answered(self) -> dict[Any, dict[str, Any]]:
        """Answers written so far, by id (without waiting for anything)."""
        return {m["id"]: m for m in map(json.loads, self.written().splitlines())}

    async def settle(self) -> dict[Any, dict[str, Any]]:
        await self.server.protocol.drain()
        await asyncio.sleep(0)  # let a held-back frame flush
        return self.answered()


def _entry(role: str, text: str) -> dict[str, Any]:
    content: Any = text if role == "user" else [{"type": "text", "text": text}]
    return {"type": "message", "message": {"role": role, "content": content}}


async def _two_sessions(h: _Harness, root: Path) -> None:
    h.send("initialize", {"sessionRoot": str(root), "settings": {"store": {"fsync": "assistant"}}})
    for sid in ("a", "b"):
        h.send("session/create", {"cwd": "/w", "sessionId": sid})
        await h.settle()
        h.send("session/append", {"sessionId": sid, "entries": [_entry("user", "hi"), _entry("assistant", "hello")]})
        answers = await h.settle()
        assert all("result" in a for a in answers.values()), answers


async def test_an_append_is_answered_inline_while_another_sessions_request_is_in_flight(tmp_path: Path):
    h = _Harness(tmp_path / "h")
    await _two_sessions(h, tmp_path / "sessions")
    slow = h.send(
        "session/append", {"sessionId": "a", "entries": [_entry("assistant", "synced")]}
    )  # an fsync: a worker thread
    quick = h.send("session/append", {"sessionId": "b", "entries": [_entry("user", "no fsync")]})
    answered = h.answered()
    assert quick in answered and "result" in answered[quick]  # answered before the loop read on
    assert slow not in answered
    assert "result" in (await h.settle())[slow]


async def test_an_append_waits_behind_a_request_of_its_own_session(tmp_path: Path):
    h = _Harness(tmp_path / "h")
    await _two_sessions(h, tmp_path / "sessions")
    first = h.send("session/append", {"sessionId": "a", "entries": [_entry("assistant", "synced")]})
    second = h.send("session/append", {"sessionId": "a", "entries": [_entry("user", "after it")]})
    assert h.answered() == {}  # not inline: the first has not taken its turn yet
    answers = await h.settle()
    first_id = answers[first]["result"]["entries"][0]["id"]
    assert answers[second]["result"]["entries"][0]["parentId"] == first_id  # in the order sent
