"""A call in its session's turn: the route of every request that is not answered where it is read.

The params are decoded into the route's Struct, the dispatcher runs the service call in the
session's turn (dispatch.py), and the result Struct is returned (the protocol encodes it).
A route with ``group_sync`` joins its session's group sync: calls queued on one session share
one fsync (see dispatch.py), none answered before it. Nothing here decides anything about sessions.
"""

from __future__ import annotations

from typing import Protocol

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


async def in_turn(conn: Connection, route: Route, params: object, msg_id: MsgId) -> object:
    """Answer one call of ``route`` in its session's turn."""
    decoded = decode_params(route.name, params, route.params)
    service = conn.service
    assert service is not None  # (the protocol hands nothing but initialize over before it)
    key = queue_key(decoded)
    token = getattr(decoded, "workDoneToken", None)
    if route.group_sync and key is not None:
        return await _in_group(conn, route, decoded, key, token, msg_id)
    return await conn.dispatcher.run(
        msg_id, route.name, key, token, lambda work: route.call(service, decoded, work, conn), route.on_loop
    )


async def _in_group(
    conn: Connection, route: Route, decoded: object, key: str, token: int | str | None, msg_id: MsgId
) -> object:
    service = conn.service
    assert service is not None
    defer = conn.dispatcher.may_defer_sync
    # Where the call wrote, taken in the session's turn: a group sync
    # makes that durable even if the session is opened again meanwhile.
    wrote: list[_Durable | None] = []

    def call(work: Work) -> object:
        result = route.handler(service, decoded, defer(key))
        wrote.append(service.durability_of(key))
        return result

    def pending() -> bool:
        return bool(wrote) and wrote[0] is not None and wrote[0].sync_pending

    def settle() -> None:
        if wrote and wrote[0] is not None:
            wrote[0].sync_deferred()

    return await conn.dispatcher.run(msg_id, route.name, key, token, call, sync=GroupSync(pending, settle))
