"""A call in its session's turn: the route of every request that is not answered where it is read.

The params are decoded into the route's Struct, the dispatcher runs the service call in the
session's turn (dispatch.py), and the result Struct is returned (the protocol encodes it).
A route with ``group_sync`` joins its session's group sync: calls queued on one session share
one fsync (see dispatch.py), none answered before it. Nothing here decides anything about sessions.
"""

from __future__ import annotations

from typing import Protocol

from ..service import HeldUpkeep
from ..service.methods import Route
from ..work import Work
from .connection import Connection
from .dispatch import GroupSync, queue_key
from .lifecycle import decode_params

MsgId = int | str


class _Durable(Protocol):
    """Where a call's writes become durable (the store's ``Durability``)."""

    @property
    def sync_pending(self) -> bool: ...

    def sync_deferred(self) -> None: ...


async def in_turn(
    conn: Connection, route: Route, params: object, msg_id: MsgId, upkeep: list[HeldUpkeep] | None = None
) -> object:
    """Answer one call of ``route`` in its session's turn.

    ``upkeep``: where a call of a group-sync route (session/append) leaves the listing-index upkeep
    of what it wrote, for the caller to run once the answer is out (as for an inline append): the
    protocol gives one to a large append, whose answer then does not wait for its lines to be folded
    into the index (a quarter of an append of 1,000 entries to a new session, whose file the index
    reads whole)."""
    decoded = decode_params(route.name, params, route.params)
    service = conn.service
    assert service is not None  # (the protocol hands nothing but initialize over before it)
    key = queue_key(decoded)
    token = getattr(decoded, "workDoneToken", None)
    if route.group_sync and key is not None:
        return await _in_group(conn, route, decoded, key, token, msg_id, upkeep)
    return await conn.dispatcher.run(
        msg_id, route.name, key, token, lambda work: route.call(service, decoded, work, conn), route.on_loop
    )


async def _in_group(
    conn: Connection,
    route: Route,
    decoded: object,
    key: str,
    token: int | str | None,
    msg_id: MsgId,
    upkeep: list[HeldUpkeep] | None,
) -> object:
    service = conn.service
    assert service is not None
    defer = conn.dispatcher.may_defer_sync
    # Where the call wrote, taken in the session's turn: a group sync
    # makes that durable even if the session is opened again meanwhile.
    wrote: list[_Durable | None] = []

    def call(work: Work) -> object:
        if upkeep is None:
            result = route.handler(service, decoded, defer(key))
        else:
            with service.upkeep_held(upkeep):  # (held per thread: this worker's, for this call)
                result = route.handler(service, decoded, defer(key))
        wrote.append(service.durability_of(key))
        return result

    def pending() -> bool:
        return bool(wrote) and wrote[0] is not None and wrote[0].sync_pending

    def settle() -> None:
        if wrote and wrote[0] is not None:
            wrote[0].sync_deferred()

    return await conn.dispatcher.run(msg_id, route.name, key, token, call, sync=GroupSync(pending, settle))
