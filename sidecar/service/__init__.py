"""The operations the protocol exposes, independent of any transport and of where sessions live.

Each public method takes the params Struct of one protocol method and returns
its result Struct (see ``sidecar.wire``); errors are ``SidecarError`` values
with stable codes. The service is synchronous and thread-safe for calls on
different sessions; callers serialize calls on one session (the rpc layer
does, with a queue per session).

Sessions are kept by a ``SessionStore`` (store/base.py; the file store by
default); the service maps params onto it and onto the operations in
``sidecar/operations/``, and never touches a path itself. Its methods are
grouped by concept, one module each: ``core`` (the store, its hooks, opening
and closing), ``writing`` (append, context, compaction), ``tree``, ``shelf``
(listing, archive/trash, upkeep, history), ``formats`` (import, export,
convert) and ``live`` (subscriptions and roles).
"""

from __future__ import annotations

from .core import ServiceCore, redact_on_append
from .formats import FormatCalls
from .live import LiveCalls
from .shelf import ShelfCalls
from .tree import TreeCalls
from .writing import Writing

__all__ = ["SessionService", "redact_on_append"]


class SessionService(ServiceCore, Writing, TreeCalls, ShelfCalls, FormatCalls, LiveCalls):
    """One sidecar's sessions: every protocol method, as one object the rpc layer calls."""
