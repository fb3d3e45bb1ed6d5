"""Live sessions across hosts: NOTIFY what this sidecar wrote, LISTEN for what others wrote.

A writing sidecar tells the database what changed in a session it holds, on
a connection of its own, from a background thread fed by a queue: an append
(or a compaction, a label, a name: all appends), a leaf moved without an
append (session/branch), a close. The writer only puts a notice on the queue
and never waits for the database, let alone for a listener; notices of one
session in one batch are folded (the last line count is all a listener
needs). A failed NOTIFY is sent again once its connection is back.

A notice is a pointer, never the entries (NOTIFY payloads are limited to
8000 bytes): the session id, the kind, and the session's line count after the
change. Each session has a channel of its own (``sidecar_`` and a digest of
the id, as ids may be 64 characters long and channel names 63 bytes), so a
sidecar only hears of the sessions it watches.

A sidecar holding sessions read-only (opened so, or for a subscriber) LISTENs
on their channels on another connection of its own, in a thread. A notice
marks the session behind (``RemoteState``) and calls ``on_behind``: the rpc
layer then follows the session in its turn, which reads the lines past the
ones it holds (``PgSession.catch_up``) and tells subscribers as it does for
another program's appends on one host: every entry once, in order, whatever
the notices were. So a lost notice delays but never loses an entry, and a
listener whose connection broke connects again, LISTENs again and marks
every session it listens for behind: it catches up from its line count. A
slow check (``BACKSTOP_S``) of the sessions' line counts covers notices that
were never sent (a writer killed between its commit and its NOTIFY).
"""

from __future__ import annotations

import hashlib
import json
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import psycopg

from .db import Database

log = logging.getLogger(__name__)

# How long the listener waits for notices before it looks at its own work (LISTEN, UNLISTEN, stop).
LISTEN_TICK_S = 0.05
# How often the listener compares the line counts of what it listens for with the database's.
BACKSTOP_S = 2.0
# Waits between attempts to connect again (either side), doubling up to the last.
RETRY_S = (0.05, 0.2, 0.5, 1.0, 2.0)
# NOTIFY refuses payloads of 8000 bytes or more; ours are far smaller, a leaf id that is not is left out.
MAX_PAYLOAD = 7900


def channel_of(session_id: str) -> str:
    return "sidecar_" + hashlib.blake2s(session_id.encode(), digest_size=12).hexdigest()


@dataclass(slots=True)
class Notice:
    session_id: str
    kind: str  # "append", "leaf" or "close"
    line_count: int
    leaf: str | None = None

    def payload(self) -> str:
        body: dict[str, str | int | None] = {"s": self.session_id, "k": self.kind, "n": self.line_count}
        if self.kind == "leaf":
            body["leaf"] = self.leaf
        text = json.dumps(body, separators=(",", ":"))
        if len(text.encode()) > MAX_PAYLOAD:
            text = json.dumps({"s": self.session_id, "k": "append", "n": self.line_count}, separators=(",", ":"))
        return text

    @classmethod
    def parse(cls, text: str) -> Notice | None:
        try:
            body = json.loads(text)
            session_id, kind, count = body["s"], body["k"], body["n"]
        except (ValueError, KeyError, TypeError):
            return None
        if not isinstance(session_id, str) or kind not in ("append", "leaf", "close") or not isinstance(count, int):
            return None
        leaf = body.get("leaf")
        return cls(session_id, kind, count, leaf if isinstance(leaf, str) else None)


_notifiers: dict[str, Notifier] = {}
_notifiers_lock = threading.Lock()


def shared_notifier(database: Database) -> Notifier:
    """The process's notifier for ``database``'s URL: one connection and one thread however many
    stores a process makes (tests make hundreds; a server has a connection limit)."""
    with _notifiers_lock:
        found = _notifiers.get(database.url.url)
        if found is None:
            found = _notifiers[database.url.url] = Notifier(
                Database(database.url, database.timeout, "session-sidecar-notify")
            )
        return found


class Notifier:
    """The writing side: notices queued by the sessions' turns, sent by one thread in batches."""

    def __init__(self, database: Database) -> None:
        self._db = database
        self._queue: queue.SimpleQueue[Notice] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._unsent = 0  # notices told and not sent yet (``drain`` waits for none)
        self._drained = threading.Condition()
        self.sent = 0  # notices sent (for tests and stats)

    def tell(self, notice: Notice) -> None:
        """Queue a notice; never waits (the thread is started on the first one)."""
        if self._thread is None:
            with self._start_lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="pg-notify", daemon=True)
                    self._thread.start()
        with self._drained:
            self._unsent += 1
        self._queue.put(notice)

    def drain(self, timeout: float) -> bool:
        """Wait (at most ``timeout`` s) until every notice told so far was sent (a store closing)."""
        with self._drained:
            return self._drained.wait_for(lambda: self._unsent == 0, timeout)

    def _run(self) -> None:
        pending: list[Notice] = []
        failures = told = 0
        while True:  # for the process's life (a daemon thread)
            if not pending:
                pending.append(self._queue.get())
                told = 1
            while True:  # everything queued meanwhile goes in the same statement
                try:
                    pending.append(self._queue.get_nowait())
                except queue.Empty:
                    break
                told += 1
            batch = _fold(pending)
            try:
                self._send(batch)
            except Exception as exc:  # the database is away: keep the notices and try again
                wait = RETRY_S[min(failures, len(RETRY_S) - 1)]
                failures += 1
                if failures == 1:
                    log.warning("could not send live notices (%s); trying again", exc)
                pending = batch
                time.sleep(wait)
                continue
            failures = 0
            self.sent += len(batch)
            with self._drained:
                self._unsent -= told
                self._drained.notify_all()
            pending = []

    def _send(self, batch: list[Notice]) -> None:
        channels = [channel_of(n.session_id) for n in batch]
        payloads = [n.payload() for n in batch]
        self._db.run(
            lambda conn: conn.execute(
                "SELECT pg_notify(c, p) FROM unnest(%s::text[], %s::text[]) WITH ORDINALITY AS t(c, p, i) ORDER BY i",
                (channels, payloads),
            ),
            "send live notices",
            write=False,
        )


def _fold(notices: list[Notice]) -> list[Notice]:
    """Consecutive appends of a session become its last one; leaf moves and closes keep their place."""
    out: list[Notice] = []
    last_append: dict[str, int] = {}  # session id -> index in out of its append since its last other notice
    for notice in notices:
        if notice.kind == "append":
            at = last_append.get(notice.session_id)
            if at is not None:
                out[at] = notice
                continue
            last_append[notice.session_id] = len(out)
        else:
            last_append.pop(notice.session_id, None)
        out.append(notice)
    return out


@dataclass(slots=True, eq=False)
class RemoteState:
    """What the listener heard of one session and its turn has not caught up with yet."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    behind: bool = False
    leaf: tuple[int, str | None] | None = None  # (line count it was moved at, the leaf)
    closed_at: int | None = None  # the writer closed the session at this line count

    def heard(self, notice: Notice | None) -> None:
        """``None``: nothing in particular, check (a reconnect, the backstop)."""
        with self.lock:
            self.behind = True
            if notice is None:
                return
            if notice.kind == "leaf":
                self.leaf = (notice.line_count, notice.leaf)
            elif notice.kind == "close":
                self.closed_at = notice.line_count

    def take(self) -> tuple[tuple[int, str | None] | None, int | None]:
        """Clear what was heard (before reading: a notice heard while reading marks it behind again)."""
        with self.lock:
            leaf, closed = self.leaf, self.closed_at
            self.behind, self.leaf, self.closed_at = False, None, None
            return leaf, closed


class Listener:
    """The reading side: one connection that LISTENs on the channels of the sessions held read-only."""

    def __init__(
        self, database: Database, heard: Callable[[str, Notice | None], None], line_counts: Callable[[], dict[str, int]]
    ) -> None:
        self._url = database.url
        self._timeout = database.timeout
        self._heard = heard  # (session id, notice or None for "check it")
        self._line_counts = line_counts  # session id -> lines held, of every session listened for
        self._lock = threading.Lock()
        self._wanted: set[str] = set()
        self._changed = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.connections = 0  # connections made (tests: a reconnect happened)
        self._conn: psycopg.Connection | None = None

    def listen(self, session_id: str) -> None:
        with self._lock:
            self._wanted.add(session_id)
            if self._thread is None:
                self._stop.clear()
                self._thread = threading.Thread(target=self._run, name="pg-listen", daemon=True)
                self._thread.start()
        self._changed.set()

    def unlisten(self, session_id: str) -> None:
        with self._lock:
            self._wanted.discard(session_id)
        self._changed.set()

    def stop(self) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout=2 * self._timeout)
        self._thread = None

    def _connect(self) -> psycopg.Connection:
        return psycopg.connect(
            self._url.url,
            connect_timeout=max(1, int(self._timeout)),
            application_name="session-sidecar-listen",
            autocommit=True,
            keepalives=1,
            keepalives_idle=5,
            keepalives_interval=2,
            keepalives_count=2,
        )

    def _run(self) -> None:
        failures = 0
        while not self._stop.is_set():
            try:
                conn = self._connect()
            except psycopg.Error as exc:
                if failures == 0:
                    log.warning("live notices: cannot connect to PostgreSQL (%s); trying again", exc)
                self._stop.wait(RETRY_S[min(failures, len(RETRY_S) - 1)])
                failures += 1
                continue
            self.connections += 1
            try:
                self._serve(conn)
                failures = 0
            except psycopg.Error as exc:
                log.warning("live notices: lost the PostgreSQL connection (%s); connecting again", exc)
                failures = 0
                self._stop.wait(RETRY_S[0])
            finally:
                try:
                    conn.close()
                except Exception:
                    pass

    def _serve(self, conn: psycopg.Connection) -> None:
        listening: set[str] = set()
        next_check = time.monotonic() + BACKSTOP_S
        while not self._stop.is_set():
            self._changed.clear()
            with self._lock:
                wanted = set(self._wanted)
            for session_id in wanted - listening:
                conn.execute(f'LISTEN "{channel_of(session_id)}"')
            for session_id in listening - wanted:
                conn.execute(f'UNLISTEN "{channel_of(session_id)}"')
            added = wanted - listening
            listening = wanted
            # Whatever was written before LISTEN took effect (or while disconnected) is read now.
            for session_id in added:
                self._heard(session_id, None)
            for note in conn.notifies(timeout=LISTEN_TICK_S):
                notice = Notice.parse(note.payload)
                if notice is not None and notice.session_id in listening:
                    self._heard(notice.session_id, notice)
            if time.monotonic() >= next_check and listening:
                next_check = time.monotonic() + BACKSTOP_S
                self._backstop(conn, listening)

    def _backstop(self, conn: psycopg.Connection, listening: set[str]) -> None:
        held = self._line_counts()
        ids = [s for s in listening if s in held]
        if not ids:
            return
        rows = conn.execute("SELECT id, line_count FROM sidecar_sessions WHERE id = ANY(%s)", (ids,)).fetchall()
        for session_id, count in rows:
            if int(count) > held.get(session_id, 0):
                self._heard(session_id, None)
