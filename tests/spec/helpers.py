"""A real sidecar on a spec-format root, and what the tests read back from its files."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rpc.harness import RawServer

ULID = r"^[0-9A-HJKMNP-TV-Z]{26}$"


class SpecServer:
    def __init__(self, server: RawServer, root: Path) -> None:
        self.server, self.root = server, root

    @classmethod
    async def start(cls, root: Path, via_settings: bool = False) -> SpecServer:
        if via_settings:
            server = await RawServer.start()
            answer = await server.initialize(root, settings={"store": {"format": "spec"}})
        else:
            server = await RawServer.start("--format", "spec")
            answer = await server.initialize(root)
        assert answer["result"]["settings"]["store"]["format"] == "spec", answer
        return cls(server, root)

    async def call(self, method: str, params: Any = None) -> Any:
        answer = await self.server.request(method, params)
        assert "result" in answer, answer
        return answer["result"]

    async def error(self, method: str, params: Any = None) -> dict[str, Any]:
        answer = await self.server.request(method, params)
        assert "error" in answer, answer
        return answer["error"]

    async def call_answering(self, method: str, params: Any, answer: Callable[[dict[str, Any]], Any]) -> Any:
        """A call during which the sidecar asks us (the client) something: ``answer`` replies."""
        self.server._next_id += 1
        msg_id = self.server._next_id
        self.server.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        while True:
            message = await self.server.receive()
            if "method" in message and "id" in message:
                self.server.send({"jsonrpc": "2.0", "id": message["id"], "result": answer(message)})
            elif "method" in message:
                continue
            elif message.get("id") == msg_id:
                assert "result" in message, message
                return message["result"]

    async def stop(self) -> None:
        await self.server.stop()

    def folder(self, session_id: str) -> Path:
        return self.root / session_id

    def lines(self, session_id: str) -> list[bytes]:
        return (self.folder(session_id) / "session.jsonl").read_bytes().splitlines()

    def records(self, session_id: str) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.lines(session_id)]

    def metadata(self, session_id: str) -> dict[str, Any]:
        return json.loads((self.folder(session_id) / "metadata.json").read_text())


def llm_texts(messages: list[dict[str, Any]]) -> list[str]:
    """Each LLM message as role: text (tool calls by name), to compare contexts message by message."""
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        parts = []
        for block in content or []:
            if block.get("type") == "text":
                parts.append(block["text"])
            elif block.get("type") == "toolCall":
                parts.append(f"call {block['name']}({json.dumps(block['arguments'], sort_keys=True)})")
        out.append(f"{message['role']}: {' | '.join(parts)}")
    return out
