"""The server object: wires the JSON-RPC endpoint (endpoint.py) to our framing, dispatcher and service.

It decides nothing: the protocol answers messages and routes each by its
method's ``Route`` (service/methods.py), the handlers call the service, the
dispatcher schedules; here are the lifecycle's two features and the hooks
wired between the service and this transport. ``run`` serves a reader and a writer until
``exit`` or the end of input and returns the process exit code;
``sidecar.rpc.boot.serve`` starts it on stdin/stdout.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import wire
from ..config import Settings
from ..errors import SidecarError
from ..service import SessionService
from .dispatch import Dispatcher
from .endpoint import EndpointServer, MsgId
from .framing import FrameError, FrameReader, FrameSink, Framing
from .lifecycle import initialize as initialize_service
from .live import ConnectionSubscriber, loop_scheduler, tell_former_controller
from .messages import ProgressParams
from .protocol import SidecarProtocol
from .watching import SessionFollower

if TYPE_CHECKING:
    from ..compaction.coordinator import Compactor
    from ..live.events import LiveSessions

logger = logging.getLogger(__name__)


# Sent to a client that opened a session with ``watch``.
_WATCH_NOTIFICATIONS = frozenset({"session/didAppend", "session/didReload"})

# How long autoCompact waits for the client to accept its progress token.
PROGRESS_CREATE_TIMEOUT = 5.0

# initialize's keepServing: serve socket clients beside this one (sockets.keep_serving; boot.py hands it over).
KeepServing = Callable[["SidecarServer", socket.socket, Path], Awaitable[None]]


class SidecarServer(EndpointServer):
    protocol: SidecarProtocol
    # One of many clients of one service (socket mode, rpc/sockets.py): roles apply.
    shared = False

    def __init__(
        self,
        root: Path,
        settings: Settings | None = None,
        *,
        framing: Framing = "lsp",
        max_workers: int | None = None,
        keep_serving: KeepServing | None = None,
    ) -> None:
        super().__init__(SidecarProtocol, max_workers)
        self.default_root = Path(root).expanduser().absolute()
        self.base_settings = settings or Settings()
        self.framing: Framing = framing
        self.service: SessionService | None = None  # made by initialize
        self.dispatcher = Dispatcher(self.thread_pool, self._send_progress)
        self._background: set[asyncio.Future[None]] = set()  # autoCompact runs
        self._auto_tokens = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self.follower = SessionFollower(self)
        self._loop_thread: int | None = None
        # This connection, as the live bus sends to it.
        self.subscriber = ConnectionSubscriber(lambda: self.protocol.frame_writer)
        self._keep_serving = keep_serving
        self.keep_host: Any = None  # initialize's keepServing: the socket clients' host (rpc/sockets.py)
        self.feature("initialize")(_initialize)
        self.feature("shutdown")(_shutdown)

    def _send_progress(self, params: ProgressParams) -> None:
        self.protocol.notify("$/progress", params)

    # -- the service and its hooks into the transport -----------------------------------

    def initialize_client(self, params: Any) -> Any:
        """``initialize``: make the service the client asks for and serve it; the answer."""
        service, result = initialize_service(params, self.base_settings, self.default_root)
        self.attach(service)
        self.protocol.state = "ready"
        return result

    def attach(self, service: SessionService) -> None:
        """Serve ``service`` (made by initialize) and wire compaction's client hooks, if it has them."""
        self.service = service
        loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        service.notify = self._notify_any_thread

        def watched() -> None:
            loop.call_soon_threadsafe(self.follower.refresh)

        service.on_watch = watched

        def wire_live(live: LiveSessions) -> None:  # when the service first makes them (or now, if it has)
            live.bus.schedule = loop_scheduler(loop)
            live.roles.on_change = tell_former_controller

        service.wire_live(wire_live)
        self.follower.start(loop)
        live = service.live_made()
        if live is not None and live.keep_serving is not None and self._keep_serving is not None:
            sock, path = live.keep_serving
            live.keep_serving = None
            task = asyncio.ensure_future(self._keep_serving(self, sock, path))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

        def wire_compactor(compactor: Compactor) -> None:  # when the service first makes it, on any thread
            compactor.ask_client = self.ask_client
            compactor.client_loop = loop
            compactor.on_should_compact = self._on_should_compact

        service.on_compactor = wire_compactor

    def _notify_any_thread(self, method: str, params: object) -> None:
        """A notification from the service, called on the loop (an inline call) or a worker thread."""
        live = self.service.live_made() if self.service is not None else None
        if (
            method in _WATCH_NOTIFICATIONS
            and live is not None
            and getattr(params, "sessionId", None) in live.watched_for_subscribers
        ):
            return  # watched only for a subscription: the subscriber hears it from the bus, with a cursor
        if threading.get_ident() == self._loop_thread:
            self.protocol.notify(method, params)
        elif self._loop is not None:
            self._loop.call_soon_threadsafe(self.protocol.notify, method, params)

    async def ask_client(self, method: str, params: object) -> Any:
        """A request from server to client (the ``client`` provider's ``session/summarize``)."""
        return await self.protocol.request_client(method, params)

    def _on_should_compact(self, session_id: str, tokens: int) -> None:
        # Called on the worker thread that appended; the compaction runs on the loop.
        loop = self._loop
        assert loop is not None  # (set when it serves, before any call)
        loop.call_soon_threadsafe(self._start_auto_compact, session_id)

    def _start_auto_compact(self, session_id: str) -> None:
        task = asyncio.ensure_future(self._auto_compact(session_id))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _auto_compact(self, session_id: str) -> None:
        """autoCompact: compact in the session's turn, then tell the client with ``session/didCompact``."""
        service = self.service
        assert service is not None
        token = await self._create_progress_token()
        try:
            result = await self.dispatcher.run(
                object(),
                "session/compact (auto)",
                session_id,
                token,
                lambda work: service.auto_compact(session_id, work),
                on_loop=True,
            )
        except SidecarError as error:
            logger.info("autoCompact of %s did not compact: %s", session_id, error.message)
            return
        except Exception:
            logger.exception("autoCompact of %s failed", session_id)
            return
        self.protocol.notify("session/didCompact", wire.DidCompactParams(sessionId=session_id, result=result))

    async def _create_progress_token(self) -> str | None:
        """A work-done token of our own for a compaction nobody asked for.

        LSP's way: ``window/workDoneProgress/create``, and the token is used only
        once the client accepted it. A client that refuses, does not know the
        method, or does not answer within ``PROGRESS_CREATE_TIMEOUT`` gets no
        progress for the run (it still gets ``session/didCompact``).
        """
        self._auto_tokens += 1
        token = f"sidecar-auto-compact-{self._auto_tokens}"
        try:
            await asyncio.wait_for(
                self.protocol.request_client("window/workDoneProgress/create", {"token": token}),
                PROGRESS_CREATE_TIMEOUT,
            )
        except Exception as error:  # refused, unknown to the client, or no answer in time
            logger.info(
                "no progress for autoCompact: window/workDoneProgress/create failed (%s)", error or type(error).__name__
            )
            return None
        return token

    # -- running --------------------------------------------------------------------

    async def run(self, reader: FrameReader, writer: FrameSink) -> int:
        """Answer what ``reader`` reads, on ``writer``, until ``exit`` or end of input; the exit code."""
        self._loop = asyncio.get_running_loop()
        self.protocol.set_frame_writer(writer)
        logger.info("serving %s framing, sessions root %s", self.framing, self.default_root)
        ready = getattr(reader, "ready", None)
        while self.protocol.exit_code is None:
            if ready is None or not ready():
                self.protocol.flush_run()  # the appends read together so far (SidecarProtocol._join_run)
            try:
                body = await reader.read()
            except FrameError as error:
                logger.warning("bad frame: %s", error.message)
                self.protocol.handle_frame_error(error)
                continue
            except ConnectionError:  # a socket client gone (reset): the end of its input
                body = None
            if body is None:
                logger.info("end of input: finishing requests in flight and closing sessions")
                break
            try:
                self.protocol.handle_body(body)
            except Exception:  # a bug of ours must not take the server down
                logger.exception("failed to handle a message")
        self.protocol.flush_run()
        # Nobody is left to answer what we asked the client: what waits on it fails now.
        self.protocol.abandon_client_requests("the client closed its input before answering")
        await self.drain()
        self.protocol.run_upkeep()  # what the last inline appends left for the listing index
        if self.keep_host is not None:  # keepServing: its socket clients go on until SIGTERM
            await self.keep_host.outlive()
        self.follower.stop()
        await asyncio.get_running_loop().run_in_executor(self.thread_pool, self.close_sessions)
        code = self.protocol.exit_code
        return 0 if code is None else code

    async def drain(self, but: MsgId | None = None) -> None:
        """Wait for requests in flight (except ``but``) and background compactions to finish."""
        await self.protocol.drain(but)
        while self._background:
            await asyncio.wait(list(self._background))

    def close_sessions(self) -> None:
        """Flush and close every open session; called on shutdown, exit and EOF."""
        if self.service is not None:
            try:
                self.service.close_all()
            except Exception:
                logger.exception("failed to close sessions")


def _initialize(server: SidecarServer, params: object, msg_id: MsgId) -> object:
    return server.initialize_client(params)


async def _shutdown(server: SidecarServer, params: object, msg_id: MsgId) -> None:
    # The protocol already refuses everything but exit (state "shutdown").
    await server.drain(but=msg_id)
    if server.keep_host is None:  # (with keepServing the socket's clients go on with them)
        server.follower.stop()
        await asyncio.get_running_loop().run_in_executor(server.thread_pool, server.close_sessions)
