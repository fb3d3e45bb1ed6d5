"""Socket mode: one sidecar, one service, many clients on a unix socket (0600) or 127.0.0.1:PORT.

Each connection is a ``SidecarServer`` of its own (its lifecycle, framing
detected from its first byte, request ids, progress), and all of them share
the host's service, worker threads and per-session queues, so calls on one
session run in arrival order whichever client sent them, and an fsync
group spans clients. Nothing a client does ends another: a bad frame is
answered on its own connection, ``shutdown`` and ``exit`` end only that
connection, and the sessions stay open for the others until the process ends.

Output to a socket goes through asyncio's transport and never blocks the
loop: a client that stops reading only fills its own buffer, and past
``EVENT_HIGH_WATER`` it gets no more events until it drains (then what it
missed, or ``session/resync``; see sidecar/live/bus.py).

Over TCP a client must send the server's token in ``initialize``
(``token``); without it the connection is refused and closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
import secrets
import signal
import socket
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import msgspec

from .. import __version__
from ..config import Settings
from ..errors import INVALID_PARAMS, SharedServer, SocketInUse, Unauthorized
from ..service import SessionService
from .dispatch import Dispatcher
from .errors import ProtocolError
from .framing import MAX_MESSAGE_BYTES, Framing, make_reader, sniff_framing
from .lifecycle import SERVER_NAME, advertised_methods, decode_params, provider_names, reported_protocol_version
from .live import loop_scheduler, tell_former_controller
from .messages import PROTOCOL_VERSION, Capabilities, InitializeParams, InitializeResult, ServerInfo
from .server import SidecarServer
from .unixsock import bind_unix
from .watching import SessionFollower

logger = logging.getLogger(__name__)

# Past this many bytes waiting to go to a client, it gets no more events until it drains.
EVENT_HIGH_WATER = 4 * 1024 * 1024


class SocketFrameWriter:
    """Frames on a socket through its asyncio transport (buffered, never blocking the loop)."""

    def __init__(self, writer: asyncio.StreamWriter, framing: Framing, on_drained: Callable[[], None]) -> None:
        self._writer = writer
        self._transport = writer.transport
        self._framing = framing
        self._on_drained = on_drained
        self._draining = False
        self.closed = False

    def _frame(self, body: bytes) -> bytes:
        return b"Content-Length: %d\r\n\r\n%b" % (len(body), body) if self._framing == "lsp" else body + b"\n"

    def send(self, body: bytes) -> None:
        if self.closed or self._transport.is_closing():
            self.closed = True
            return
        self._transport.write(self._frame(body))

    def send_event(self, body: bytes) -> bool:
        """Send a notification of the live bus; False when the client is this far behind."""
        self.send(body)
        if self.closed or self._transport.get_write_buffer_size() <= EVENT_HIGH_WATER:
            return True
        if not self._draining:
            self._draining = True
            asyncio.ensure_future(self._wait_drained())
        return False

    async def _wait_drained(self) -> None:
        try:
            while not self.closed and self._transport.get_write_buffer_size() > EVENT_HIGH_WATER // 4:
                try:
                    await self._writer.drain()
                except (ConnectionError, RuntimeError):
                    self.closed = True
                    return
                await asyncio.sleep(0.01)
        finally:
            self._draining = False
        if not self.closed:
            self._on_drained()

    # the endpoint's writer interface
    def write(self, data: bytes) -> None:
        self.send(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


class _FrameByFrame:
    """A connection's stream under another type, so that the frame readers take it frame by frame
    (their bulk path is for stdin's pipe): appends a client pipelines are then run and published
    one by one, each an event of its own as subscribers count them (``missed``)."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self._stream = stream

    async def readline(self) -> bytes:
        return await self._stream.readline()

    async def readuntil(self, separator: bytes = b"\n") -> bytes:
        return await self._stream.readuntil(separator)

    async def readexactly(self, n: int) -> bytes:
        return await self._stream.readexactly(n)


class _NoFollower:
    """A connection's follower: the host follows watched files once for every client."""

    def start(self, loop: Any) -> None:
        pass

    def refresh(self) -> None:
        pass

    def stop(self) -> None:
        pass


class ConnectionServer(SidecarServer):
    """One client of a shared sidecar."""

    shared = True

    def __init__(self, host: SocketHost, framing: Framing) -> None:
        super().__init__(host.service.root, host.service.settings, framing=framing)
        self.host = host
        # The host's workers and per-session queues, not this connection's own.
        self._thread_pool = host.pool
        self.dispatcher = Dispatcher(host.pool, self._send_progress)
        self.dispatcher.queues = host.dispatcher.queues
        self.dispatcher._groups = host.dispatcher._groups
        self.follower = _NoFollower()  # type: ignore[assignment]  # the host follows watched files, not each connection

    def initialize_client(self, params: Any) -> Any:
        host = self.host
        decoded = decode_params("initialize", params, InitializeParams)
        if host.token is not None and not hmac.compare_digest((decoded.token or "").encode(), host.token.encode()):
            asyncio.get_running_loop().call_later(0.05, self.host.hang_up, self)
            raise Unauthorized(
                "this sidecar serves TCP clients that send its token: initialize with `token` (see --token-file)"
            )
        if decoded.protocolVersion.split(".", 1)[0] != PROTOCOL_VERSION.split(".", 1)[0]:
            raise ProtocolError(
                INVALID_PARAMS,
                f"protocolVersion {decoded.protocolVersion} is not supported; this server speaks {PROTOCOL_VERSION}",
                field="protocolVersion",
                supported=PROTOCOL_VERSION,
            )
        root = host.service.root
        if decoded.sessionRoot is not None and Path(decoded.sessionRoot).expanduser().absolute() != root:
            raise SharedServer(
                f"this sidecar is shared and serves {root}; connect without sessionRoot, or start another with --root",
                sessionRoot=str(root),
            )
        if decoded.settings:
            raise SharedServer(
                "this sidecar is shared: its settings are the ones it was started with; initialize without settings"
            )
        self.service = host.service
        self._loop = asyncio.get_running_loop()
        self.protocol.state = "ready"
        return InitializeResult(
            serverInfo=ServerInfo(name=SERVER_NAME, version=__version__),
            protocolVersion=reported_protocol_version(),
            capabilities=Capabilities(
                methods=advertised_methods(),
                framings=["lsp", "jsonl"],
                providers=provider_names(),
            ),
            sessionRoot=str(root),
            settings=msgspec.to_builtins(host.service.settings),
        )

    def close_sessions(self) -> None:
        """``shutdown`` of one client: the sessions stay open for the others (the host closes them at exit)."""


class SocketHost:
    """The shared service, its workers and queues, and the connections."""

    def __init__(self, service: SessionService, pool: Any, dispatcher: Dispatcher, token: str | None = None) -> None:
        self.service = service
        self.token = token
        self.pool = pool
        self.dispatcher = dispatcher
        self.follower: Any = SessionFollower(self)
        self.connections: dict[ConnectionServer, asyncio.StreamWriter] = {}
        self._background: set[asyncio.Future[None]] = set()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stopped = asyncio.Event()
        # keepServing: what the stdio server awaits once its own client is gone (keep_serving sets it).
        self.outlive: Callable[[], Awaitable[None]] | None = None

    @classmethod
    def standalone(
        cls, root: Path, settings: Settings, token: str | None = None, max_workers: int | None = None
    ) -> SocketHost:
        """``serve --socket/--listen``: a service of its own, for socket clients only."""
        service = SessionService(Path(root).expanduser().absolute(), settings)
        service.raw_results = True
        pool = ThreadPoolExecutor(max_workers, thread_name_prefix="sidecar")
        return cls(service, pool, Dispatcher(pool, lambda params: None), token)

    @classmethod
    def around(cls, server: SidecarServer) -> SocketHost:
        """``initialize`` with ``keepServing``: socket clients share the stdio client's service,
        workers, queues and file follower; its hooks (notifications, autoCompact) stay its own."""
        assert server.service is not None  # (initialize made it)
        host = cls(server.service, server.thread_pool, server.dispatcher)
        host.follower = server.follower
        host.loop = asyncio.get_running_loop()
        server.shared = True  # roles apply to the stdio client too
        return host

    def start(self) -> None:
        loop = self.loop = asyncio.get_running_loop()
        service = self.service
        service.notify = None  # watch notifications: a shared sidecar's clients subscribe instead

        def watched() -> None:
            loop.call_soon_threadsafe(self.follower.refresh)

        service.watches.on_add = watched
        service.live.bus.schedule = loop_scheduler(loop)
        service.live.roles.on_change = tell_former_controller

        def wire_compactor(compactor: Any) -> None:  # when the service first makes it, on any thread
            compactor.client_loop = loop
            compactor.on_should_compact = lambda session_id, tokens: loop.call_soon_threadsafe(
                self._auto_compact, session_id
            )

        service.on_compactor = wire_compactor
        self.follower.start(loop)

    def _auto_compact(self, session_id: str) -> None:
        """autoCompact in the session's turn; subscribers hear of it as of any compaction."""
        service = self.service

        async def run() -> None:
            try:
                await self.dispatcher.run(
                    object(),
                    "session/compact (auto)",
                    session_id,
                    None,
                    lambda work: service.auto_compact(session_id, work),
                    on_loop=True,
                )
            except Exception as error:
                logger.info("autoCompact of %s did not compact: %s", session_id, error)

        task = asyncio.ensure_future(run())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one client until it sends exit, closes, or is hung up on."""
        try:
            framing = await sniff_framing(reader)
        except ConnectionError:
            framing = None
        if framing is None:  # gone before a byte
            writer.close()
            return
        server = ConnectionServer(self, framing)
        self.connections[server] = writer
        frames = SocketFrameWriter(writer, framing, lambda: self.service.live.bus.drained(server.subscriber))
        try:
            await server.run(make_reader(framing, _FrameByFrame(reader), MAX_MESSAGE_BYTES), frames)
        except Exception:
            logger.exception("a connection failed")
        finally:
            self.connections.pop(server, None)
            frames.closed = True
            live = self.service.live
            live.bus.drop(server.subscriber)
            live.roles.release_all(server)
            with contextlib.suppress(Exception):
                writer.close()

    async def listen(self, sock: socket.socket) -> asyncio.AbstractServer:
        return await asyncio.start_unix_server(self.connection, sock=sock, limit=MAX_MESSAGE_BYTES)

    def hang_up(self, server: ConnectionServer) -> None:
        writer = self.connections.get(server)
        if writer is not None:
            writer.transport.abort()

    async def close(self) -> None:
        for writer in list(self.connections.values()):
            writer.transport.abort()
        while self._background:
            await asyncio.wait(list(self._background))
        self.follower.stop()
        await asyncio.get_running_loop().run_in_executor(self.pool, self.service.close_all)
        self.pool.shutdown(wait=True)


async def keep_serving(server: SidecarServer, sock: socket.socket, path: Path) -> None:
    """``initialize`` with ``keepServing``: serve socket clients beside the stdio one, and after its
    stdio closes, until SIGTERM or SIGINT (then the stdio server closes the sessions as at its end)."""
    host = SocketHost.around(server)
    server.keep_host = host
    listening = await host.listen(sock)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, host.stopped.set)
    logger.info("also serving %s on unix socket %s", host.service.root, path)

    async def outlive() -> None:
        # The stdio client is gone: it controls nothing and hears nothing any more.
        host.service.live.roles.release_all(server)
        host.service.live.bus.drop(server.subscriber)
        await host.stopped.wait()
        listening.close()
        for writer in list(host.connections.values()):
            writer.transport.abort()
        with contextlib.suppress(FileNotFoundError):
            path.unlink()

    host.outlive = outlive


def read_token(path: Path) -> str:
    """The TCP token kept in ``path`` (made, 0600, with a random token when missing)."""
    try:
        token = path.read_text().strip()
    except FileNotFoundError:
        token = secrets.token_urlsafe(32)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(token + "\n")
    if len(token) < 16:
        raise SystemExit(f"session-sidecar: the token in {path} is shorter than 16 characters")
    return token


def serve_sockets(
    root: Path,
    settings: Settings,
    *,
    unix_path: Path | None = None,
    listen: str | None = None,
    token_file: Path | None = None,
    max_workers: int | None = None,
) -> int:
    """Serve until SIGTERM or SIGINT; 0."""
    return asyncio.run(_serve(root, settings, unix_path, listen, token_file, max_workers))


async def _serve(
    root: Path,
    settings: Settings,
    unix_path: Path | None,
    listen: str | None,
    token_file: Path | None,
    max_workers: int | None,
) -> int:
    token = None
    if listen is not None:
        host_name, _, port = listen.rpartition(":")
        if not port.isdigit() or not host_name:
            raise SystemExit(f"session-sidecar: --listen wants HOST:PORT (127.0.0.1:7777), got {listen!r}")
        if token_file is None:
            token_file = Path(root).expanduser() / ".live" / "token"
        token = read_token(token_file)
    host = SocketHost.standalone(root, settings, token, max_workers)
    host.start()
    servers = []
    if unix_path is not None:
        try:
            sock = bind_unix(unix_path)
        except SocketInUse as error:
            raise SystemExit(f"session-sidecar: {error.message}") from None
        servers.append(await asyncio.start_unix_server(host.connection, sock=sock, limit=MAX_MESSAGE_BYTES))
        logger.warning("serving %s on unix socket %s", host.service.root, unix_path)
    if listen is not None:
        host_name, _, port = listen.rpartition(":")
        server = await asyncio.start_server(host.connection, host_name, int(port), limit=MAX_MESSAGE_BYTES)
        servers.append(server)
        bound = server.sockets[0].getsockname()
        # One line on stderr a launcher can read: where it listens (port 0 picks one).
        logger.warning("listening on %s:%d (token in %s)", bound[0], bound[1], token_file)
        print(f"session-sidecar: listening on {bound[0]}:{bound[1]}", flush=True)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, host.stopped.set)
    print("session-sidecar: ready", flush=True)
    await host.stopped.wait()
    for server in servers:
        server.close()
    await host.close()
    if unix_path is not None:
        with contextlib.suppress(FileNotFoundError):
            unix_path.unlink()
    return 0
