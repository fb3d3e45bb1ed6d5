"""A small asyncio client for session-sidecar: spawn it, call methods, follow progress, cancel.

    async with SidecarClient.spawn(["--root", "/tmp/sessions"]) as client:
        await client.initialize("my-agent")
        created = await client.request("session/create", {"cwd": "/work"})

Errors come back as ``RpcError`` with the server's ``code``, ``message`` and
``data`` (``data["kind"]`` names the error). Cancelling the task awaiting
``request`` sends ``$/cancelRequest`` for it.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Callable, Literal

ProgressCallback = Callable[[dict[str, Any]], None]
NotificationCallback = Callable[[str, Any], None]
Framing = Literal["lsp", "jsonl"]

_READ_LIMIT = 64 * 1024 * 1024


class RpcError(Exception):
    """An error answer from the server."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data if isinstance(data, dict) else {}

    @property
    def kind(self) -> str | None:
        return self.data.get("kind")

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "data": self.data}


class ServerExited(RpcError):
    """The sidecar process ended while a request was waiting for its answer."""

    def __init__(self, returncode: int | None) -> None:
        super().__init__(-32099, f"the sidecar exited (code {returncode}) before answering", {"kind": "serverExited"})
        self.returncode = returncode


class SidecarClient:
    def __init__(
        self,
        process: asyncio.subprocess.Process,
        framing: Framing = "lsp",
        on_notification: NotificationCallback | None = None,
    ) -> None:
        self.process = process
        self.framing = framing
        self.on_notification = on_notification
        self.initialize_result: dict[str, Any] | None = None
        self._ids = itertools.count(1)
        self._tokens = itertools.count(1)
        self._pending: dict[int | str, asyncio.Future[Any]] = {}
        self._progress: dict[int | str, ProgressCallback] = {}
        self._reader = asyncio.create_task(self._read_loop())

    # -- process ---------------------------------------------------------------------

    @classmethod
    @asynccontextmanager
    async def spawn(
        cls,
        args: list[str] | None = None,
        *,
        framing: Framing = "lsp",
        command: list[str] | None = None,
        env: dict[str, str] | None = None,
        stderr: int | None = None,
        on_notification: NotificationCallback | None = None,
    ) -> AsyncIterator["SidecarClient"]:
        """Start a sidecar (``python -m sidecar serve`` by default) and stop it on leaving.

        ``stderr`` is passed to the subprocess as is: None shares ours (the
        server's logs go where ours go), ``asyncio.subprocess.DEVNULL`` drops them.
        """
        argv = list(command or [sys.executable, "-m", "sidecar"]) + ["serve", *(args or [])]
        if framing == "jsonl":
            argv.append("--jsonl")
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env=env,
            limit=_READ_LIMIT,
        )
        client = cls(process, framing, on_notification)
        try:
            yield client
        finally:
            await client.close()

    async def close(self, timeout: float = 10.0) -> int | None:
        """End the session politely (shutdown, exit) if it is still running; the exit code."""
        if self.process.returncode is None:
            try:
                if self.initialize_result is not None:
                    await asyncio.wait_for(self.request("shutdown"), timeout)
                    self.notify("exit")
                if self.process.stdin is not None and not self.process.stdin.is_closing():
                    self.process.stdin.close()
                await asyncio.wait_for(self.process.wait(), timeout)
            except (asyncio.TimeoutError, RpcError, ConnectionError):
                self.process.kill()
                await self.process.wait()
        await self._reader
        return self.process.returncode

    # -- calls -----------------------------------------------------------------------

    async def initialize(
        self,
        client_name: str = "sidecar.client",
        session_root: str | None = None,
        settings: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"clientInfo": {"name": client_name}, "protocolVersion": "1.0"}
        if session_root is not None:
            params["sessionRoot"] = session_root
        if settings is not None:
            params["settings"] = settings
        self.initialize_result = await self.request("initialize", params)
        self.notify("initialized", {})
        return self.initialize_result

    @property
    def methods(self) -> list[str]:
        return list((self.initialize_result or {}).get("capabilities", {}).get("methods", []))

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        on_progress: ProgressCallback | None = None,
    ) -> Any:
        """Send a request and wait for its result; ``on_progress`` gets each ``$/progress`` value."""
        msg_id = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if on_progress is not None:
            token = f"progress-{next(self._tokens)}"
            params = {**(params or {}), "workDoneToken": token}
            self._progress[token] = on_progress
        if params is not None:
            message["params"] = params
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        try:
            self._send(message)
            return await future
        except asyncio.CancelledError:
            if not future.done():
                self.notify("$/cancelRequest", {"id": msg_id})
            raise
        finally:
            self._pending.pop(msg_id, None)
            if on_progress is not None:
                self._progress.pop(params["workDoneToken"], None)  # type: ignore[index]

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def send_raw(self, data: bytes) -> None:
        """Bytes exactly as given (for testing how the server copes with bad frames)."""
        assert self.process.stdin is not None
        self.process.stdin.write(data)

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
        if self.framing == "lsp":
            self.send_raw(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))
        else:
            self.send_raw(body + b"\n")

    # -- input -----------------------------------------------------------------------

    async def _read_message(self) -> Any:
        stdout = self.process.stdout
        assert stdout is not None
        if self.framing == "jsonl":
            line = await stdout.readline()
            return json.loads(line) if line else None
        length = None
        while True:
            line = await stdout.readline()
            if not line:
                return None
            if not line.strip():
                break
            name, _, value = line.decode("ascii", "replace").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        if length is None:
            raise RuntimeError("the server sent a frame without Content-Length")
        return json.loads(await stdout.readexactly(length))

    async def _read_loop(self) -> None:
        try:
            while (message := await self._read_message()) is not None:
                self._dispatch(message)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            returncode = await self.process.wait()
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ServerExited(returncode))

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" in message:
            params = message.get("params")
            if message["method"] == "$/progress" and isinstance(params, dict):
                callback = self._progress.get(params.get("token"))  # type: ignore[arg-type]
                if callback is not None:
                    callback(params.get("value", {}))
                    return
            if self.on_notification is not None:
                self.on_notification(message["method"], params)
            return
        future = self._pending.get(message.get("id"))  # type: ignore[arg-type]
        if future is None or future.done():
            if self.on_notification is not None:  # e.g. a parse error answered with id null
                self.on_notification("", message)
            return
        if "error" in message:
            error = message["error"] or {}
            future.set_exception(RpcError(error.get("code", -32603), error.get("message", ""), error.get("data")))
        else:
            future.set_result(message.get("result"))
