"""Real sidecars in socket mode, and small clients of their sockets (own framing code, no sidecar imports)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
from pathlib import Path
from typing import Any

SERVER = [sys.executable, "-m", "sidecar", "serve"]
TIMEOUT = 20.0


class SocketServer:
    """``session-sidecar serve --socket/--listen`` as a subprocess; ``port`` once it listens on TCP."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.port: int | None = None

    @classmethod
    async def start(cls, root: Path, *args: str) -> SocketServer:
        process = await asyncio.create_subprocess_exec(
            *SERVER,
            "--root",
            str(root),
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=None,
        )
        server = cls(process)
        assert process.stdout is not None
        while True:
            line = (await asyncio.wait_for(process.stdout.readline(), TIMEOUT)).decode()
            assert line, "the sidecar exited before it was ready"
            if "listening on" in line:
                server.port = int(line.rsplit(":", 1)[1])
            if "ready" in line:
                return server

    async def stop(self) -> int:
        if self.process.returncode is None:
            self.process.terminate()
        return await asyncio.wait_for(self.process.wait(), TIMEOUT)


class Client:
    """One connection: requests answered by id, notifications kept in order."""

    _ids = itertools.count(1)

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, framing: str) -> None:
        self.reader, self.writer, self.framing = reader, writer, framing
        self.pending: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self.notifications: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.closed = asyncio.Event()
        self._task = asyncio.ensure_future(self._read())

    @classmethod
    async def unix(cls, path: Path, framing: str = "jsonl") -> Client:
        reader, writer = await asyncio.open_unix_connection(str(path), limit=1 << 26)
        return cls(reader, writer, framing)

    @classmethod
    async def tcp(cls, port: int, framing: str = "jsonl") -> Client:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 26)
        return cls(reader, writer, framing)

    def send(self, message: Any) -> None:
        body = json.dumps(message).encode()
        self.writer.write(
            body + b"\n" if self.framing == "jsonl" else b"Content-Length: %d\r\n\r\n%b" % (len(body), body)
        )

    async def _read_one(self) -> dict[str, Any] | None:
        if self.framing == "jsonl":
            line = await self.reader.readline()
            return json.loads(line) if line else None
        length = None
        while True:
            line = await self.reader.readline()
            if not line:
                return None
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(await self.reader.readexactly(length))

    async def _read(self) -> None:
        try:
            while (message := await self._read_one()) is not None:
                if "method" in message and "id" not in message:
                    self.notifications.put_nowait(message)
                elif message.get("id") in self.pending:
                    self.pending.pop(message["id"]).set_result(message)
                else:
                    self.notifications.put_nowait(message)  # an answer to garbage (id null)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self.closed.set()
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("closed"))

    async def request(self, method: str, params: Any = None) -> dict[str, Any]:
        msg_id = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self.pending[msg_id] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return await asyncio.wait_for(future, TIMEOUT)

    async def call(self, method: str, params: Any = None) -> Any:
        answer = await self.request(method, params)
        assert "result" in answer, answer
        return answer["result"]

    async def initialize(self, **extra: Any) -> dict[str, Any]:
        return await self.request("initialize", {"clientInfo": {"name": "live-test"}, **extra})

    async def notification(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        return await asyncio.wait_for(self.notifications.get(), timeout)

    async def close(self) -> None:
        self.writer.close()
        self._task.cancel()


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}


def assistant(text: str) -> dict[str, Any]:
    return {"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}


def socket_mode(path: Path) -> int:
    return os.stat(path).st_mode & 0o777
