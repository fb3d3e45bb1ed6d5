"""The live sessions of one connection: what the bus sends it, and the role gate.

A connection (a ``SidecarServer``) is both the client the roles know and,
through ``ConnectionSubscriber``, the subscriber the bus sends to. Calls of a
route that writes a session pass ``gate`` first on a shared server: the first
client to write a session controls it, the others get ``notController`` until
they take control. (Subscribe, unsubscribe and takeControl are routes of the
table, service/methods.py, that take the connection.)
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Protocol

from .. import wire
from ..errors import SidecarError
from .connection import Connection
from .dispatch import session_key
from .framing import FrameSink

__all__ = ["ConnectionSubscriber", "gate", "loop_scheduler", "tell_former_controller"]


class ConnectionSubscriber:
    """The bus's view of a connection: notification bodies go out on its frame writer."""

    __slots__ = ("_writer",)

    def __init__(self, writer: Callable[[], FrameSink | None]) -> None:
        self._writer = writer

    def send_event(self, body: bytes) -> bool:
        writer = self._writer()
        if writer is None or writer.closed:
            return True
        send_event = getattr(writer, "send_event", None)
        if send_event is not None:
            return bool(send_event(body))  # a socket: says when its buffer is full
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


def gate(conn: Connection, params: object) -> SidecarError | None:
    """The error a call that writes a session gets when its client does not control it (None: go on)."""
    service = conn.service
    if not conn.shared or service is None:
        return None
    key = session_key(params)
    if key is None or key.startswith("path:"):
        return None
    try:
        service.live.roles.check(key, conn)
    except SidecarError as error:
        return error
    return None


class _Notifies(Protocol):
    def notify(self, method: str, params: object = None) -> None: ...


def tell_former_controller(session_id: str, former: object, _new: object) -> None:
    """Roles.on_change: the client that lost control hears it (called on the event loop)."""
    protocol: _Notifies | None = getattr(former, "protocol", None)
    if protocol is not None:
        protocol.notify("session/didLoseControl", wire.DidLoseControlParams(sessionId=session_id))
