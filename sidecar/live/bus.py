"""The event bus: what happened to each watched session, numbered, kept for a while, fanned out.

Each session someone subscribed to has a feed: a sequence number, and the
last events (already encoded as JSON-RPC notification bodies, once for every
subscriber) in a backlog bounded by count and bytes. A cursor names a
position in a feed: ``<epoch>.<seq>``, where the epoch is this bus's (a
cursor from another process, or from before a restart, cannot be trusted and
is answered with a resync).

Publishing never waits for a subscriber: it appends to the backlog under a
short lock and asks the delivery thread (the event loop) to flush. Delivery
hands each subscriber the events past what it already got; a subscriber that
says its buffer is full stops getting events until it says it drained, and
then gets what it missed from the backlog, or a ``session/resync`` when the
backlog no longer reaches back that far. So a stopped or dead reader costs
the writer nothing beyond one lock and one append.
"""

from __future__ import annotations

import secrets
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import msgspec

from .. import wire
from ..errors import InvalidParams
from ..format.codec import encode_js

_encoder = msgspec.json.Encoder().encode


def _encode(message: object) -> bytes:
    return encode_js(_encoder, message)  # (entries holding a lone surrogate, as JSON.stringify writes it)


# A feed keeps at most this many events, and at most this many bytes of them.
BACKLOG_EVENTS = 4096
BACKLOG_BYTES = 32 * 1024 * 1024
# Subscribers served per turn of the event loop: between turns, requests read meanwhile run,
# so a writer's next call waits for a few sends, not for the whole fan-out.
DELIVERY_CHUNK = 8


class Subscriber(Protocol):
    """One client connection, as the bus sees it; called on the delivery thread only."""

    def send_event(self, body: bytes) -> bool:
        """Send one notification body. False: its output is full; send no more until it drains."""
        ...


class Cursor(msgspec.Struct, frozen=True):
    epoch: str
    seq: int

    def __str__(self) -> str:
        return f"{self.epoch}.{self.seq}"

    @classmethod
    def parse(cls, text: str) -> Cursor:
        epoch, _, seq = text.rpartition(".")
        if not epoch or not seq.isdigit() or len(seq) > 18:
            raise InvalidParams(
                f"since {text!r} is not a cursor; pass the `cursor` of a notification or of session/subscribe's answer",
                field="since",
            )
        return cls(epoch, int(seq))


@dataclass(slots=True, eq=False)
class _Subscription:
    subscriber: Subscriber
    delivered: int  # the last seq it was sent
    planned: int = -1  # the last seq queued for it (set to ``delivered`` when made)
    lagging: bool = False
    # Moves on each time it lags: what was queued for it before is then not sent.
    generation: int = 0

    def __post_init__(self) -> None:
        self.planned = self.delivered


@dataclass(slots=True, eq=False)
class _Feed:
    session_id: str
    seq: int = 0
    backlog: deque[tuple[int, bytes]] = field(default_factory=deque)
    backlog_bytes: int = 0
    subscriptions: dict[int, _Subscription] = field(default_factory=dict)  # id(subscriber) -> subscription
    # How many of the session's entries (in tree order) were announced: the next didAppend starts there.
    announced: int = 0

    def oldest(self) -> int:
        """The oldest seq the backlog still holds (seq + 1 when it is empty)."""
        return self.backlog[0][0] if self.backlog else self.seq + 1


@dataclass(slots=True)
class Subscribed:
    """What ``subscribe`` found: the cursor now, and whether the client must read the session again."""

    cursor: str
    resync: bool
    missed: int  # events past ``since`` the subscriber is about to get


class EventBus:
    def __init__(self, *, backlog_events: int = BACKLOG_EVENTS, backlog_bytes: int = BACKLOG_BYTES) -> None:
        self.epoch = secrets.token_hex(4)
        self._lock = threading.Lock()
        self._feeds: dict[str, _Feed] = {}
        self._dirty: set[str] = set()
        self._backlog_events = backlog_events
        self._backlog_bytes = backlog_bytes
        # Runs a callable on the delivery thread (the rpc layer: the event loop's
        # call_soon_threadsafe). None: deliver at once, in the publishing thread.
        self.schedule: Callable[[Callable[[], None]], None] | None = None
        self._flush_scheduled = False
        # (subscription, its generation, [(seq, body)]) in the order planned; sent a chunk per turn.
        self._outbox: deque[tuple[_Subscription, int, list[tuple[int, bytes]]]] = deque()
        self._delivering = False

    # -- what the service tells it ----------------------------------------------------------

    def watched(self, session_id: str) -> bool:
        """Somebody subscribed to the session (events of others are not even made)."""
        return session_id in self._feeds

    def announced(self, session_id: str) -> int:
        feed = self._feeds.get(session_id)
        return feed.announced if feed is not None else 0

    def publish(
        self, session_id: str, method: str, make_params: Callable[[str], msgspec.Struct], announced: int | None = None
    ) -> None:
        """Number an event of ``session_id`` and queue it for its subscribers.

        ``make_params(cursor)`` builds the params (a Struct) carrying the event's
        cursor; ``announced`` moves the count of entries already announced.
        """
        with self._lock:
            feed = self._feeds.get(session_id)
            if feed is None:
                return
            feed.seq += 1
            body = _encode(
                {"jsonrpc": "2.0", "method": method, "params": make_params(str(Cursor(self.epoch, feed.seq)))}
            )
            feed.backlog.append((feed.seq, body))
            feed.backlog_bytes += len(body)
            while len(feed.backlog) > self._backlog_events or (
                feed.backlog_bytes > self._backlog_bytes and len(feed.backlog) > 1
            ):
                feed.backlog_bytes -= len(feed.backlog.popleft()[1])
            if announced is not None:
                feed.announced = announced
            self._dirty.add(session_id)
        self._request_flush()

    def closed(self, session_id: str) -> None:
        """The session was closed: tell its subscribers, then forget the feed (their cursors now resync)."""
        self.publish(
            session_id, "session/didClose", lambda cursor: wire.DidCloseParams(sessionId=session_id, cursor=cursor)
        )
        self._request_flush(close=session_id)

    # -- subscribers --------------------------------------------------------------------------

    def subscribe(self, session_id: str, subscriber: Subscriber, since: str | None, entry_count: int) -> Subscribed:
        """Add ``subscriber`` to the session's feed, from ``since`` (or from now).

        ``entry_count`` is how many entries the session holds now: a new feed
        announces only entries after them. Call it in the session's turn.
        """
        wanted = Cursor.parse(since) if since is not None else None
        with self._lock:
            feed = self._feeds.get(session_id)
            if feed is None:
                feed = self._feeds[session_id] = _Feed(session_id, announced=entry_count)
            resync = False
            if wanted is None:
                start = feed.seq
            elif wanted.epoch != self.epoch or wanted.seq < feed.oldest() - 1:
                resync, start = True, feed.seq  # another process's cursor, or older than the backlog
            elif wanted.seq > feed.seq:
                raise InvalidParams(
                    f"since {since!r} is ahead of session {session_id}'s events (at {Cursor(self.epoch, feed.seq)}); "
                    "pass a cursor this server gave",
                    field="since",
                )
            else:
                start = wanted.seq
            feed.subscriptions[id(subscriber)] = _Subscription(subscriber, start)
            missed = feed.seq - start
            if missed:
                self._dirty.add(session_id)
            cursor = str(Cursor(self.epoch, feed.seq))
        if missed:
            self._request_flush()
        return Subscribed(cursor=cursor, resync=resync, missed=missed)

    def unsubscribe(self, session_id: str, subscriber: Subscriber) -> bool:
        with self._lock:
            feed = self._feeds.get(session_id)
            return feed is not None and feed.subscriptions.pop(id(subscriber), None) is not None

    def subscribed(self, session_id: str, subscriber: Subscriber) -> bool:
        feed = self._feeds.get(session_id)
        return feed is not None and id(subscriber) in feed.subscriptions

    def drop(self, subscriber: Subscriber) -> None:
        """The subscriber is gone (its connection closed): every subscription of it ends."""
        with self._lock:
            for feed in self._feeds.values():
                feed.subscriptions.pop(id(subscriber), None)

    def drained(self, subscriber: Subscriber) -> None:
        """A lagging subscriber can take events again: it gets what it missed (or a resync)."""
        with self._lock:
            for feed in self._feeds.values():
                sub = feed.subscriptions.get(id(subscriber))
                if sub is not None and sub.lagging:
                    sub.lagging = False
                    self._dirty.add(feed.session_id)
        self._request_flush()

    # -- delivery (on the delivery thread) ---------------------------------------------------

    def _request_flush(self, close: str | None = None) -> None:
        schedule = self.schedule
        if schedule is None:
            self.flush(close)
            return
        if close is not None:
            schedule(lambda: self.flush(close))
            return
        with self._lock:
            if self._flush_scheduled:
                return
            self._flush_scheduled = True
        schedule(self.flush)

    def flush(self, close: str | None = None) -> None:
        """Send every subscriber the events past what it got."""
        with self._lock:
            self._flush_scheduled = False
            work = []
            for session_id in self._dirty:
                feed = self._feeds.get(session_id)
                if feed is None:
                    continue
                for sub in feed.subscriptions.values():
                    if sub.lagging or sub.planned >= feed.seq:
                        continue
                    if sub.planned < feed.oldest() - 1:
                        # It missed more than the backlog holds: a resync, then on from now.
                        body = _encode(
                            {
                                "jsonrpc": "2.0",
                                "method": "session/resync",
                                "params": wire.ResyncParams(
                                    sessionId=session_id, cursor=str(Cursor(self.epoch, feed.seq)), reason="backlog"
                                ),
                            }
                        )
                        bodies = [(feed.seq, body)]
                    else:
                        bodies = _tail(feed.backlog, sub.planned)
                    sub.planned = bodies[-1][0]
                    work.append((sub, sub.generation, bodies))
            self._dirty.clear()
            if close is not None:
                self._feeds.pop(close, None)
        self._outbox.extend(work)
        if not self._delivering:
            self._deliver()

    def _deliver(self) -> None:
        """Send a chunk of what is planned; the rest in the next turn (all at once without a scheduler)."""
        outbox = self._outbox
        count = DELIVERY_CHUNK if self.schedule is not None else len(outbox)
        while outbox and count > 0:
            sub, generation, bodies = outbox.popleft()
            count -= 1
            if sub.generation != generation:
                continue  # it lagged since: it is planned again once it drains
            for seq, body in bodies:
                try:
                    ok = sub.subscriber.send_event(body)
                except Exception:  # a broken connection: it is dropped when it closes
                    ok = True
                sub.delivered = seq
                if not ok:
                    with self._lock:
                        sub.lagging = True  # nothing more until drained()
                        sub.generation += 1
                        sub.planned = sub.delivered
                    break
        self._delivering = bool(outbox)
        if outbox and self.schedule is not None:
            self.schedule(self._deliver)

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"feeds": len(self._feeds), "subscriptions": sum(len(f.subscriptions) for f in self._feeds.values())}


def _tail(backlog: deque[tuple[int, bytes]], after: int) -> list[tuple[int, bytes]]:
    """The events of ``backlog`` with seq > ``after`` (usually the last one or few)."""
    out: list[tuple[int, bytes]] = []
    for item in reversed(backlog):
        if item[0] <= after:
            break
        out.append(item)
    out.reverse()
    return out
