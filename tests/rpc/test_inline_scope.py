"""Which appends are answered inline (synchronously, where they are read): only while nothing of their own session is in flight."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import msgspec

from sidecar.rpc.framing import FrameWriter
from sidecar.rpc.server import SidecarServer


class _Harness:
    def __init__(self, root: Path) -> None:
        self.server = SidecarServer(root)
        self.read_fd, write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)
        self.server.protocol.set_frame_writer(FrameWriter(write_fd, "jsonl"))
        self.next_id = 0

    def send(self, method: str, params: dict[str, Any]) -> int:
        self.next_id += 1
        body = msgspec.json.encode({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.server.protocol.handle_body(body)
        # What the server's loop does when input has no more frames ready: appends read together
        # run now (SidecarProtocol.flush_run); one alone is answered before the loop reads on.
        self.server.protocol.flush_run()
        return self.next_id

    def answered(self) -> dict[Any, dict[str, Any]]:
        """Answers written so far, by id (without waiting for anything)."""
        data = b""
        while True:
            try:
                chunk = os.read(self.read_fd, 65536)
            except BlockingIOError:
                break
            data += chunk
        return {m["id"]: m for m in map(json.loads, data.splitlines())}

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
    slow = h.send("session/append", {"sessionId": "a", "entries": [_entry("assistant", "synced")]})  # an fsync: a worker thread
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
