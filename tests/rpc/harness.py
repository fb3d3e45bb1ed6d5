"""Test-side tools for talking to a real sidecar subprocess.

``RawServer`` is deliberately independent of ``sidecar.client``: its own
framing code, raw byte access, the process's exit code and captured stderr.
``RpcTestClient`` is the pygls client that pytest-lsp drives.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from lsprotocol import converters
from pygls.client import JsonRPCClient
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage

SERVER = [sys.executable, "-m", "sidecar"]
REPO_ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 10.0


def snapshot(root: Path) -> dict[str, str]:
    """Every file below ``root`` with a hash of its bytes."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}


def assistant(text: str, *calls: dict[str, Any]) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}, *calls]
    return {"type": "message", "message": {"role": "assistant", "content": content}}


def tool_call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def tool_result(call_id: str, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "message": {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": "read",
            "content": [{"type": "text", "text": text}],
        },
    }


def frame(message: Any, framing: str = "lsp") -> bytes:
    body = json.dumps(message).encode()
    return body + b"\n" if framing == "jsonl" else b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


class RawServer:
    """A sidecar subprocess spoken to byte by byte."""

    def __init__(self, process: asyncio.subprocess.Process, framing: str) -> None:
        self.process = process
        self.framing = framing
        self.stderr = bytearray()
        self.notifications: list[dict[str, Any]] = []
        self._next_id = 1000
        self._drain = asyncio.create_task(self._drain_stderr())

    @classmethod
    async def start(cls, *args: str, framing: str = "lsp", env: dict[str, str] | None = None) -> RawServer:
        argv = [*SERVER, "serve", *args] + (["--jsonl"] if framing == "jsonl" else [])
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            limit=1 << 26,
        )
        return cls(process, framing)

    async def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        while chunk := await self.process.stderr.read(65536):
            self.stderr += chunk

    def send_raw(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)

    def send(self, message: Any) -> None:
        self.send_raw(frame(message, self.framing))

    async def receive(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        return await asyncio.wait_for(self._read(), timeout)

    async def _read(self) -> dict[str, Any]:
        stdout = self.process.stdout
        assert stdout is not None
        if self.framing == "jsonl":
            line = await stdout.readline()
            if not line:
                raise EOFError("the server closed stdout")
            return json.loads(line)
        headers = {}
        while True:
            line = await stdout.readline()
            if not line:
                raise EOFError("the server closed stdout")
            if line == b"\r\n":
                break
            name, _, value = line.decode().partition(":")
            headers[name.lower()] = value.strip()
        return json.loads(await stdout.readexactly(int(headers["content-length"])))

    async def response(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The next response, keeping notifications that arrive before it."""
        while True:
            message = await self.receive(timeout)
            if "method" in message:
                self.notifications.append(message)
            else:
                return message

    async def request(self, method: str, params: Any = None, *, msg_id: Any = None) -> dict[str, Any]:
        if msg_id is None:
            self._next_id += 1
            msg_id = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return await self.response()

    async def initialize(self, root: Path, **extra: Any) -> dict[str, Any]:
        answer = await self.request(
            "initialize",
            {"clientInfo": {"name": "pytest"}, "protocolVersion": "1.0", "sessionRoot": str(root), **extra},
        )
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return answer

    async def close_stdin(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()

    async def wait(self, timeout: float = TIMEOUT) -> int:
        code = await asyncio.wait_for(self.process.wait(), timeout)
        await self._drain
        return code

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()
        await self._drain


def _converter() -> Any:
    """lsprotocol's converter with every params/result left a plain dict."""
    converter = converters.get_converter()

    def keep_dicts(obj: dict[str, Any], cls: type) -> Any:
        return cls(**obj)

    for cls in (JsonRPCRequestMessage, JsonRPCResponseMessage, JsonRPCNotification):
        converter.register_structure_hook(cls, keep_dicts)
    return converter


class RpcTestClient(JsonRPCClient):
    """pygls' generic JSON-RPC client (not ours), recording ``$/progress``."""

    def __init__(self) -> None:
        super().__init__(converter_factory=_converter)
        self.progress: list[dict[str, Any]] = []

        @self.feature("$/progress")
        def on_progress(params: Any) -> None:
            self.progress.append(params)

    async def call(self, method: str, params: Any = None) -> Any:
        return await asyncio.wait_for(self.protocol.send_request_async(method, params), TIMEOUT)
