"""What the protocol and the routes know of the server they serve: a ``Connection``.

``SidecarServer`` (server.py) is one; the modules below it type against this, so that none
imports the server back.
"""

from __future__ import annotations

from typing import Protocol

from ..service import SessionService
from ..service.live import LiveClient
from .dispatch import Dispatcher


class Served(Protocol):
    """Something serving one service: a connection, or the host of socket connections (sockets.py)."""

    @property
    def service(self) -> SessionService | None: ...

    @property
    def dispatcher(self) -> Dispatcher: ...


class Connection(Served, LiveClient, Protocol):
    """One client's connection: the service it is served (None before initialize), the dispatcher
    running its calls, and whether it shares the service with other clients (roles apply)."""

    @property
    def shared(self) -> bool: ...
