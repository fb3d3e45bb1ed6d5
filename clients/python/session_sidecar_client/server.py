"""A socket sidecar many clients share: start ``session-sidecar serve --socket PATH`` and wait until ready.

Why: an agent and its observers (a UI, another process watching the same
sessions) talk to one sidecar; starting it and knowing when the socket
accepts was left to every author, a race against the socket file appearing.

    async with await SidecarServer.start("/tmp/sidecar.sock", root="/tmp/sessions") as server:
        async with SidecarClient.connect_socket(server.socket) as client:
            ...
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence

from .errors import ConnectionClosed, describe_exit

READY_LINE = b"session-sidecar: ready"


class SidecarServer:
    """A ``session-sidecar serve --socket`` process this program started."""

    def __init__(self, process: asyncio.subprocess.Process, socket: str) -> None:
        self.process = process
        self.socket = socket
        self._drains: list[asyncio.Future[None]] = []

    @classmethod
    async def start(
        cls,
        socket: str | os.PathLike[str],
        *,
        command: str | Sequence[str] | None = None,
        root: str | os.PathLike[str] | None = None,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        ready_timeout: float = 15.0,
    ) -> SidecarServer:
        """Start the server and return once it prints ``session-sidecar: ready``.

        ``command`` as for ``SidecarClient.spawn`` (default ``$SESSION_SIDECAR_BIN``,
        else ``session-sidecar`` on PATH). Raises ``ConnectionClosed`` naming how
        it ended and the end of its log if it exits first (socket in use, say),
        or past ``ready_timeout`` seconds (then it is killed).
        """
        from .client import _resolve_command

        path = os.fspath(socket)
        argv = [*_resolve_command(command), "serve", "--socket", path, *args]
        if root is not None:
            argv += ["--root", os.fspath(root)]
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(env) if env is not None else None,
        )
        assert process.stdout is not None and process.stderr is not None
        try:
            async with asyncio.timeout(ready_timeout):
                while True:
                    line = await process.stdout.readline()
                    if not line:
                        log = (await process.stderr.read()).decode(errors="replace").strip().splitlines()[-3:]
                        code = await process.wait()
                        raise ConnectionClosed(
                            f"session-sidecar serve --socket {path} {describe_exit(code)} before it was ready"
                            + ("; its log ends:\n" + "\n".join(log) if log else ""),
                            code,
                        )
                    if line.strip() == READY_LINE:
                        break
        except TimeoutError:
            process.kill()
            await process.wait()
            raise ConnectionClosed(
                f"session-sidecar serve --socket {path} was not ready within {ready_timeout}s", process.returncode
            ) from None
        # Keep draining its output and log so a chatty server never blocks on a full pipe.
        server = cls(process, path)
        server._drains = [asyncio.ensure_future(_drain(process.stdout)), asyncio.ensure_future(_drain(process.stderr))]
        return server

    async def stop(self, timeout: float = 5.0) -> int:
        """SIGTERM (it closes every session and removes the socket), SIGKILL past ``timeout``; its exit code."""
        if self.process.returncode is None:
            self.process.terminate()
            try:
                async with asyncio.timeout(timeout):
                    await self.process.wait()
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        for task in self._drains:
            task.cancel()
        assert self.process.returncode is not None
        return self.process.returncode

    async def __aenter__(self) -> SidecarServer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


async def _drain(stream: asyncio.StreamReader) -> None:
    while await stream.read(65536):
        pass


async def open_socket(
    path: str | os.PathLike[str], wait: float = 5.0, limit: int = 64 * 1024 * 1024
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Connect to the unix socket, retrying while it is missing or refuses (a server starting) for up to ``wait`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait
    while True:
        try:
            return await asyncio.open_unix_connection(os.fspath(path), limit=limit)
        except (FileNotFoundError, ConnectionRefusedError) as error:
            if loop.time() >= deadline:
                raise ConnectionClosed(
                    f"could not connect to the sidecar's socket {os.fspath(path)}: {error}"
                ) from error
            await asyncio.sleep(0.05)
