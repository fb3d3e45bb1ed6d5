"""The live-session methods of one connection: subscribe, unsubscribe, takeControl, and the role gate.

A connection (a ``SidecarServer``) is both the client the roles know and,
through ``ConnectionSubscriber``, the subscriber the bus sends to. Writing
methods of a shared server pass ``gate`` first: the first client to write a
session controls it, the others get ``notController`` until they take control.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any, Callable

from .. import wire
from ..errors import SidecarError
from ..live.roles import WRITING_METHODS
from .lifecycle import LIVE_METHODS, decode_params
from .protocol import _session_key

if TYPE_CHECKING:
    from .server import SidecarServer

__all__ = ["LIVE_METHODS", "ConnectionSubscriber", "gate", "loop_scheduler", "register", "tell_former_controller"]


class ConnectionSubscriber:
    """The bus's view of a connection: notification bodies go out on its frame writer."""

    __slots__ = ("_server",)

    def __init__(self, server: "SidecarServer") -> None:
        self._server = server

    def send_event(self, body: bytes) -> bool:
        writer = self._server.protocol._frame_writer
        if writer is None or writer.closed:
            return True
        send_event = getattr(writer, "send_event", None)
        if send_event is not None:
            return send_event(body)  # a socket: says when its buffer is full
        writer.send(body)  # stdio: the client reads, or the whole server waits, as for answers
        return True


def loop_scheduler(loop: asyncio.AbstractEventLoop) -> Callable[[Callable[[], None]], None]:
    """Run a callable on ``loop``: soon from its own thread, thread-safely from any other."""
    loop_thread = threading.get_ident()

    def schedule(callback: Callable[[], None]) -> None:
        if threading.get_ident() == loop_thread:
            loop.call_soon(callback)
        else:
            loop.call_soon_threadsafe(callback)

    return schedule


def gate(server: "SidecarServer", method: str, params: Any) -> SidecarError | None:
    """The error a writing call of a client that does not control its session gets (None: go on)."""
    if method not in WRITING_METHODS or not server.shared or server.service is None:
        return None
    key = _session_key(params)
    if key is None or key.startswith("path:"):
        return None
    try:
        server.service.live.roles.check(key, server)
    except SidecarError as error:
        return error
    return None


def tell_former_controller(session_id: str, former: Any, _new: Any) -> None:
    """Roles.on_change: the client that lost control hears it (called on the event loop)."""
    protocol = getattr(former, "protocol", None)
    if protocol is not None:
        protocol.notify("session/didLoseControl", wire.DidLoseControlParams(sessionId=session_id))


def register(server: "SidecarServer") -> None:
    @server.feature("session/subscribe")
    async def subscribe(ls: "SidecarServer", params: Any, msg_id: Any) -> Any:
        decoded = decode_params("session/subscribe", params, wire.SubscribeParams)
        service = ls.service
        return await ls.dispatcher.run(
            msg_id, "session/subscribe", decoded.sessionId, decoded.workDoneToken,
            lambda work: service.live_subscribe(decoded, ls),
        )

    @server.feature("session/unsubscribe")
    def unsubscribe(ls: "SidecarServer", params: Any, msg_id: Any) -> Any:
        decoded = decode_params("session/unsubscribe", params, wire.UnsubscribeParams)
        return ls.service.live_unsubscribe(decoded, ls)

    @server.feature("session/takeControl")
    def take_control(ls: "SidecarServer", params: Any, msg_id: Any) -> Any:
        decoded = decode_params("session/takeControl", params, wire.TakeControlParams)
        return ls.service.live_take_control(decoded, ls)
