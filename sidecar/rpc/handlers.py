"""The features: lifecycle handlers and one thin handler per method of ``sidecar.wire.METHODS``.

A session handler decodes params into the method's Struct, asks the
dispatcher to run the service call in the session's turn, and returns the
result Struct (the protocol encodes it). Nothing here decides anything
about sessions.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import TYPE_CHECKING, Any, Callable

from ..service import SessionService
from .dispatch import GroupSync, queue_key
from .live import register as register_live
from .lifecycle import SERVER_NAME, decode_params, provider_names, served_methods, service_attribute
from .protocol import NOT_INLINE, REQUEST_SIZE

if TYPE_CHECKING:
    from .server import SidecarServer

__all__ = ["SERVER_NAME", "decode_params", "provider_names", "register", "served_methods", "service_attribute"]


def register(server: "SidecarServer") -> None:
    methods = served_methods()

    @server.feature("initialize")
    def initialize(ls: "SidecarServer", params: Any, msg_id: Any) -> Any:
        return ls.initialize_client(params)

    @server.feature("shutdown")
    async def shutdown(ls: "SidecarServer", params: Any, msg_id: Any) -> None:
        # The protocol already refuses everything but exit (state "shutdown").
        await ls.drain(but=msg_id)
        if ls.keep_host is None:  # (with keepServing the socket's clients go on with them)
            ls.follower.stop()
            await asyncio.get_running_loop().run_in_executor(ls.thread_pool, ls.close_sessions)
        return None

    for method, (params_type, attribute) in methods.items():
        if method == "session/append":
            server.feature(method)(_append_handler(params_type))
        else:
            server.feature(method)(_session_handler(method, params_type, attribute))
        if method == "session/append":
            # Pipelined appends read together join a run, written together (SidecarProtocol.join_run).
            server.inline_handlers[method] = _run_joiner(server, params_type)
        elif method in _INLINE_METHODS:
            server.inline_handlers[method] = _inline_handler(server, method, params_type, attribute)
    register_live(server)  # subscribe, unsubscribe, takeControl (rpc/live.py)


# Calls cheap enough to run on the event loop itself, skipping the worker-thread
# hop that costs most of a small request's round trip (~130 us of ~300 us).
_INLINE_METHODS = frozenset({"session/append", "session/branch", "session/setLabel", "session/setName"})
# Above this request size the call could take long enough to hold up others.
INLINE_MAX_REQUEST_BYTES = 64 * 1024


def _runs_inline(ls: "SidecarServer", method: str, decoded: Any, key: str | None, in_run: bool = False) -> bool:
    """True when a call is sure to be quick: small, on a session already in
    memory with nothing queued for it, and needing no fsync. Running it
    directly keeps per-session order: nothing of that session is in flight.
    ``in_run``: an append joining the run of appends to its session read just
    before it, whose first one found the session in memory and its file current."""
    if method not in _INLINE_METHODS or key is None or REQUEST_SIZE.get() > INLINE_MAX_REQUEST_BYTES:
        return False
    if not ls.dispatcher.queues.idle(key):
        return False
    if method == "session/append" and ls.service.append_syncs(decoded):
        return False
    if method == "session/branch" and decoded.summarize:  # a branch summary asks a model
        return False
    if in_run:  # (nothing was written since that check: the run writes when it ends)
        return True
    # Last: when it says yes, the call runs at once and its own file check takes this one's answer.
    return ls.service.is_open(key, ls.protocol.inline_turn())


def _session_handler(method: str, params_type: type, attribute: str) -> Callable[..., Any]:
    operation = getattr(SessionService, attribute)
    takes_work = "work" in inspect.signature(operation).parameters
    on_loop = inspect.iscoroutinefunction(operation)

    async def handle(ls: "SidecarServer", params: Any, msg_id: Any) -> Any:
        decoded = decode_params(method, params, params_type)
        bound = getattr(ls.service, attribute)
        if takes_work:
            call: Callable[[Any], Any] = lambda work: bound(decoded, work=work)
        else:
            call = lambda work: bound(decoded)
        return await ls.dispatcher.run(msg_id, method, queue_key(decoded), decoded.workDoneToken, call, on_loop)

    handle.__name__ = f"handle_{attribute}"
    return handle


def _append_handler(params_type: type) -> Callable[..., Any]:
    """session/append, joining its session's group sync: appends queued on one
    session share one fsync (see dispatch.py), none answered before it."""

    async def handle_append(ls: "SidecarServer", params: Any, msg_id: Any) -> Any:
        decoded = decode_params("session/append", params, params_type)
        service, key = ls.service, decoded.sessionId
        defer = ls.dispatcher.may_defer_sync
        # Where the append went, taken in the session's turn: a group sync
        # makes that durable even if the session is opened again meanwhile.
        wrote: list[Any] = []

        def call(work: Any) -> Any:
            result = service.append(decoded, defer_sync=defer(key))
            wrote.append(service.durability_of(key))
            return result

        def settle() -> None:
            if wrote and wrote[0] is not None:
                wrote[0].sync_deferred()

        sync = GroupSync(lambda: bool(wrote) and wrote[0] is not None and wrote[0].sync_pending, settle)
        return await ls.dispatcher.run(msg_id, "session/append", key, decoded.workDoneToken, call, sync=sync)

    return handle_append


def _inline_handler(ls: "SidecarServer", method: str, params_type: type, attribute: str) -> Callable[[Any], Any]:
    """Answer a cheap call right where it is read: no task, no thread, no queue."""
    operation = getattr(SessionService, attribute)

    def handle_inline(params: Any) -> Any:
        decoded = decode_params(method, params, params_type)
        if not _runs_inline(ls, method, decoded, queue_key(decoded)):
            return NOT_INLINE
        # Index upkeep waits until the answer is out (see SidecarProtocol.run_upkeep).
        with ls.service.upkeep_held(ls.protocol.upkeep):
            return operation(ls.service, decoded)

    return handle_inline


def _run_joiner(ls: "SidecarServer", params_type: type) -> Callable[[Any], Any]:
    """session/append's params decoded, when the call may run inline (as one of a run of appends
    written together, see SidecarProtocol.join_run); NOT_INLINE when it must take the usual path."""

    def join(params: Any, in_run: bool) -> Any:
        decoded = decode_params("session/append", params, params_type)
        return decoded if _runs_inline(ls, "session/append", decoded, decoded.sessionId, in_run) else NOT_INLINE

    return join
