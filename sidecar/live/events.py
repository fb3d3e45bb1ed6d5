"""What the service tells the live room, turned into numbered events for subscribers.

The service calls these hooks where a session changes (our appends, another
program's appends folded in, a reload, a branch, a close). Each is a dict
lookup when nobody subscribed to the session. ``appended`` announces the
entries after the last ones announced, so entries held back by deferred
persistence are announced with the batch that writes them, and entries found
by following the file are announced once whichever hook sees them first.
"""

from __future__ import annotations

import socket
import threading
from functools import partial
from pathlib import Path
from typing import Any

from .. import wire
from ..external import entry_objects
from ..store import Blobs, Session
from .bus import EventBus, Subscriber
from .roles import Roles


class LiveSessions:
    def __init__(self, blobs: Blobs) -> None:
        self.bus = EventBus()
        self.roles = Roles()
        self._blobs = blobs
        self._lock = threading.Lock()
        # Sessions watched (file followed) because someone subscribed, not because a client asked.
        self.watched_for_subscribers: set[str] = set()
        # The leaf subscribers last heard of, per session: another host's leaf move comes as a
        # follow that found no new entry (store/postgres/notify.py), told only when the leaf differs.
        self._leaf_told: dict[str, str | None] = {}
        # initialize's keepServing: (the bound unix socket, its path), for the rpc layer to serve.
        self.keep_serving: tuple[socket.socket, Path] | None = None

    # -- hooks ---------------------------------------------------------------------------

    def appended(self, session: Session, external: bool = False) -> None:
        bus = self.bus
        if not bus.watched(session.id):
            return
        entries = session.tree.entries
        start = bus.announced(session.id)
        if start >= len(entries):
            if external and self._leaf_told.get(session.id, session.leaf_id) != session.leaf_id:
                self.leaf_moved(session)
            return
        new = entries[start:]
        end = len(entries)
        objs = entry_objects(new, self._blobs)
        leaf = session.leaf_id
        sid = session.id
        self._leaf_told[sid] = leaf
        bus.publish(
            sid,
            "session/didAppend",
            lambda cursor: wire.DidAppendParams(
                sessionId=sid, entries=objs, leafId=leaf, external=external, cursor=cursor
            ),
            announced=end,
        )
        for entry, obj in zip(new, objs):
            kind = entry.type
            if kind == "label":
                bus.publish(sid, "session/didSetLabel", partial(_did_set_label, sid, entry.id, obj))  # type: ignore[arg-type]  # an appended entry has an id
            elif kind == "compaction":
                bus.publish(sid, "session/didCompact", partial(_did_compact, sid, entry.id, obj))
            elif kind in ("session_info", "title_change"):
                name = session.name
                bus.publish(sid, "session/didSetName", partial(_did_set_name, sid, entry.id, name))  # type: ignore[arg-type]  # an appended entry has an id

    def reloaded(self, session: Session, reason: str) -> None:
        """The file was read again whole: subscribers read the session again."""
        sid = session.id
        if self.bus.watched(sid):
            self.bus.publish(
                sid,
                "session/resync",
                lambda cursor: wire.ResyncParams(sessionId=sid, cursor=cursor, reason=reason),
                announced=len(session.tree.entries),
            )

    def leaf_moved(self, session: Session) -> None:
        sid, leaf = session.id, session.leaf_id
        if self.bus.watched(sid):
            self._leaf_told[sid] = leaf
            self.bus.publish(
                sid,
                "session/didChangeLeaf",
                lambda cursor: wire.DidChangeLeafParams(sessionId=sid, cursor=cursor, leafId=leaf),
            )

    def closed(self, session_id: str) -> None:
        self.roles.forget(session_id)
        with self._lock:
            self.watched_for_subscribers.discard(session_id)
        self._leaf_told.pop(session_id, None)
        if self.bus.watched(session_id):
            self.bus.closed(session_id)

    # -- subscribers (called by the service in the session's turn) --------------------------

    def subscribe(
        self, session: Session, subscriber: Subscriber, since: str | None, client: object
    ) -> wire.SubscribeResult:
        found = self.bus.subscribe(session.id, subscriber, since, len(session.tree.entries))
        self._leaf_told.setdefault(session.id, session.leaf_id)
        return wire.SubscribeResult(
            cursor=found.cursor,
            leafId=session.leaf_id,
            entryCount=session.entry_count,
            resync=found.resync,
            missed=found.missed,
            controller=self.roles.controller(session.id) is client,
        )


# The params of the events an append's entries announce, made when the bus numbers them (``cursor``).


def _did_set_label(sid: str, entry_id: str, obj: dict[str, Any], cursor: str) -> wire.DidSetLabelParams:
    return wire.DidSetLabelParams(
        sessionId=sid, cursor=cursor, entryId=entry_id, targetId=obj.get("targetId", ""), label=obj.get("label") or None
    )


def _did_compact(sid: str, entry_id: str | None, obj: dict[str, Any], cursor: str) -> wire.DidCompactParams:
    return wire.DidCompactParams(
        sessionId=sid, cursor=cursor, entryId=entry_id, firstKeptEntryId=obj.get("firstKeptEntryId")
    )


def _did_set_name(sid: str, entry_id: str, name: str | None, cursor: str) -> wire.DidSetNameParams:
    return wire.DidSetNameParams(sessionId=sid, cursor=cursor, entryId=entry_id, name=name)
