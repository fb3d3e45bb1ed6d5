"""One session's lines in PostgreSQL: opening it under a lease, appending with a fence.

One writer per session, across hosts: the session row carries a lease
(``lease_owner``, ``lease_fence``, ``lease_expires``). Opening for writing
takes it when it is free or expired, adding one to the fence; the lines are
read in the same transaction, after the row is locked, so the new owner sees
every line the old one committed. Each append is one statement that updates
the session row only where owner and fence are still ours and the line count
is what we last wrote, and inserts the lines only when that update happened:
a writer that lost its lease (paused, partitioned, expired and taken over)
can never append afterwards, and two writers' lines never interleave.

The statement is its own transaction (autocommit): one round trip, durable at
its commit (``synchronous_commit`` as the server has it). When the connection
breaks with the statement in flight the outcome is unknown: the writer reads
the line count again and answers as the database decided (the batch is wholly
there or wholly absent); when even that read fails, the error is latched and
the session must be opened again, as the file store does when an fsync fails.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.rows import dict_row

from ...errors import SessionExists, SessionLocked, SessionNotFound, StorageError
from ..listing import Accumulator
from ..writer import FsyncPolicy
from .db import Database, OutcomeUnknown
from .rows import Fold, Placement, fold_lines, join_file, now_ms, split_file

log = logging.getLogger(__name__)

DEFAULT_LEASE_SECONDS = 30.0

_APPEND = """
WITH ok AS (
    UPDATE sidecar_sessions SET
        line_count = line_count + %(n)s,
        tail = ''::bytea,
        name = %(name)s, first_message = %(first_message)s, message_count = %(message_count)s,
        last_activity = %(last_activity)s, modified_ms = %(modified_ms)s,
        tokens_total = %(tokens_total)s, tokens_last = %(tokens_last)s,
        lease_expires = now() + %(lease)s * interval '1 second'
    WHERE id = %(id)s AND lease_owner = %(owner)s AND lease_fence = %(fence)s AND line_count = %(at)s
    RETURNING id
), added AS (
    INSERT INTO sidecar_lines (session_id, seq, entry_id, line)
    SELECT ok.id, v.seq, v.entry_id, v.line
    FROM ok, unnest(%(seqs)s::bigint[], %(ids)s::text[], %(lines)s::bytea[]) AS v (seq, entry_id, line)
    RETURNING 1
), searched AS (
    INSERT INTO sidecar_texts (session_id, seq, text)
    SELECT ok.id, t.seq, t.text FROM ok, unnest(%(text_seqs)s::bigint[], %(texts)s::text[]) AS t (seq, text)
)
SELECT count(*) FROM added
"""

# From this many lines a batch goes in by COPY (one statement costs more per line than COPY's rows).
COPY_FROM = 16

_FENCE = """
UPDATE sidecar_sessions SET
    line_count = line_count + %(n)s,
    tail = ''::bytea,
    name = %(name)s, first_message = %(first_message)s, message_count = %(message_count)s,
    last_activity = %(last_activity)s, modified_ms = %(modified_ms)s,
    tokens_total = %(tokens_total)s, tokens_last = %(tokens_last)s,
    lease_expires = now() + %(lease)s * interval '1 second'
WHERE id = %(id)s AND lease_owner = %(owner)s AND lease_fence = %(fence)s AND line_count = %(at)s
"""

_SESSION_COLUMNS = (
    "id, area, folder, file_name, cwd, created, parent_session, title, name, first_message, message_count, "
    "last_activity, modified_ms, tokens_total, tokens_last, line_count, tail, lease_owner, lease_fence, lease_expires"
)


@dataclass(slots=True)
class Stored:
    """A session as read from the database: its file's bytes and its row."""

    row: dict[str, Any]
    data: bytes
    fence: int | None  # the lease taken with it (None: read-only)

    @property
    def placement(self) -> Placement:
        return Placement(self.row["area"], self.row["folder"], self.row["file_name"])


def lease_interval(seconds: float) -> float:
    return max(0.05, float(seconds))


def _locked(row: dict[str, Any], session_id: str) -> SessionLocked:
    return SessionLocked(
        f"session {session_id} is held for writing by another sidecar ({row['lease_owner']}) "
        f"until {row['lease_expires'].isoformat() if row['lease_expires'] else 'it closes it'}; "
        "open it with readOnly, or again once that sidecar closes it or its lease expires",
        sessionId=session_id,
        owner=row["lease_owner"],
        # data.path as the file store gives it (PROTOCOL.md): the session's location, pg:<area>/<folder>/<file>
        path="pg:" + Placement(row["area"], row["folder"], row["file_name"]).relative,
    )


def open_stored(db: Database, session_id: str, owner: str | None, lease_seconds: float, area: str | None = None) -> Stored:
    """The session's bytes and row; with ``owner``, its lease taken (SessionLocked when another holds it)."""

    def run(conn: psycopg.Connection) -> Stored:
        with conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
            fence = None
            if owner is not None:
                cur.execute(
                    "UPDATE sidecar_sessions SET lease_owner = %s, lease_fence = lease_fence + 1, "
                    "lease_expires = now() + %s * interval '1 second' "
                    "WHERE id = %s AND (lease_owner IS NULL OR lease_owner = %s OR lease_expires <= now()) "
                    "RETURNING lease_fence",
                    (owner, lease_interval(lease_seconds), session_id, owner),
                )
                taken = cur.fetchone()
                if taken is not None:
                    fence = taken["lease_fence"]
            cur.execute(f"SELECT {_SESSION_COLUMNS} FROM sidecar_sessions WHERE id = %s", (session_id,))
            row = cur.fetchone()
            if row is None or (area is not None and row["area"] != area):
                raise SessionNotFound(f"no session {session_id} in the database", sessionId=session_id)
            if owner is not None and fence is None:
                raise _locked(row, session_id)
            # Binary: the lines come as their bytes, not hex text twice their size.
            with conn.cursor(binary=True) as lines_cur:
                lines_cur.execute("SELECT line FROM sidecar_lines WHERE session_id = %s ORDER BY seq", (session_id,))
                lines = [bytes(r[0]) for r in lines_cur]
            return Stored(row, join_file(lines, bytes(row["tail"])), fence)

    return db.run(run, f"open session {session_id}", write=owner is not None)


def read_since(db: Database, session_id: str, seq: int) -> tuple[list[bytes], int, bytes]:
    """Lines from ``seq`` on, the line count and the tail now (what a read-only opener has not seen)."""

    def run(conn: psycopg.Connection) -> tuple[list[bytes], int, bytes]:
        with conn.transaction():
            row = conn.execute("SELECT line_count, tail FROM sidecar_sessions WHERE id = %s", (session_id,)).fetchone()
            if row is None:
                raise SessionNotFound(f"session {session_id} is no longer in the database", sessionId=session_id)
            lines = conn.execute(
                "SELECT line FROM sidecar_lines WHERE session_id = %s AND seq >= %s ORDER BY seq", (session_id, seq)
            ).fetchall()
            return [bytes(r[0]) for r in lines], int(row[0]), bytes(row[1])

    return db.read(run, f"read session {session_id}")


def release(db: Database, session_id: str, owner: str, fence: int) -> None:
    """Give the lease up (session/close); nothing to do when it was lost already."""

    def run(conn: psycopg.Connection) -> None:
        conn.execute(
            "UPDATE sidecar_sessions SET lease_owner = NULL, lease_expires = NULL "
            "WHERE id = %s AND lease_owner = %s AND lease_fence = %s",
            (session_id, owner, fence),
        )

    try:
        db.run(run, f"release session {session_id}")
    except (StorageError, OutcomeUnknown) as exc:  # it expires by itself
        log.warning("could not release the lease of session %s (%s); it expires by itself", session_id, exc)


def renew_all(db: Database, owner: str, lease_seconds: float) -> int:
    """Extend every lease ``owner`` holds; returns how many."""

    def run(conn: psycopg.Connection) -> int:
        cur = conn.execute(
            "UPDATE sidecar_sessions SET lease_expires = now() + %s * interval '1 second' WHERE lease_owner = %s",
            (lease_interval(lease_seconds), owner),
        )
        return cur.rowcount

    return db.run(run, "renew leases")


class PgWriter:
    """The durability point of one session held in PostgreSQL (store/base.py's EntryWriter).

    ``append`` is one batch, wholly committed or not at all; a commit is the
    durability point, so nothing waits for a deferred sync.
    """

    def __init__(
        self,
        db: Database,
        session_id: str,
        placement: Placement,
        owner: str,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        policy: FsyncPolicy = FsyncPolicy.ASSISTANT,
        stored: Stored | None = None,
    ) -> None:
        self.db = db
        self.session_id = session_id
        self.placement = placement
        self.owner = owner
        self.lease_seconds = lease_seconds
        self.policy = policy
        self._error: StorageError | SessionLocked | None = None
        self.fence: int | None = None
        self.line_count = 0
        self.size = 0
        self.tail = b""
        self.fold = Fold()
        self.exists = stored is not None
        if stored is not None:
            self.fence = stored.fence
            self.line_count = int(stored.row["line_count"])
            self.tail = bytes(stored.row["tail"])
            self.size = len(stored.data)
            self.fold = Fold.of_row(stored.row)
        # What the file store's writer also tells (store/session.py reads them).
        self.lock_fd = None
        self.torn_tail_at: int | None = None
        self.needs_newline = False
        self.last_start = self.last_end = self.size
        self.fsyncs = 0
        self.appends = 0

    # -- the EntryWriter protocol ---------------------------------------------------

    @property
    def error(self) -> StorageError | SessionLocked | None:
        return self._error

    def check(self) -> None:
        if self._error is not None:
            raise self._error

    @property
    def sync_pending(self) -> bool:
        return False

    def sync_deferred(self) -> None:
        self.check()

    def flush(self) -> None:
        self.check()

    def stat_fd(self) -> None:
        return None

    def create(self, data: bytes, durable: bool = True) -> None:
        """The session's row and all its lines (its first write), the lease taken with it."""
        self.check()
        lines, tail = split_file(data)
        fold = Fold()
        ids, texts = fold_lines(fold, lines, 0)
        stamp = now_ms()
        fence = 1

        def run(conn: psycopg.Connection) -> None:
            with conn.transaction():
                made = conn.execute(
                    "INSERT INTO sidecar_sessions (id, area, folder, file_name, cwd, created, parent_session, title, "
                    "name, first_message, message_count, last_activity, modified_ms, tokens_total, tokens_last, "
                    "line_count, tail, lease_owner, lease_fence, lease_expires) VALUES (%(id)s, %(area)s, %(folder)s, "
                    "%(file_name)s, %(cwd)s, %(created)s, %(parent_session)s, %(title)s, %(name)s, %(first_message)s, "
                    "%(message_count)s, %(last_activity)s, %(modified_ms)s, %(tokens_total)s, %(tokens_last)s, "
                    "%(line_count)s, %(tail)s, %(owner)s, %(fence)s, now() + %(lease)s * interval '1 second') "
                    "ON CONFLICT (id) DO NOTHING",
                    {
                        "id": self.session_id, "area": self.placement.area, "folder": self.placement.folder,
                        "file_name": self.placement.file_name, "cwd": fold.cwd, "created": fold.created,
                        "parent_session": fold.parent_session, "title": fold.title, "line_count": len(lines),
                        "tail": tail, "owner": self.owner, "fence": fence,
                        "lease": lease_interval(self.lease_seconds), **fold.columns(stamp),
                    },
                )
                if made.rowcount != 1:
                    raise SessionExists(
                        f"session {self.session_id} exists in the database already; choose another session id",
                        sessionId=self.session_id,
                    )
                insert_lines(conn, self.session_id, 0, lines, ids, texts)

        try:
            self.db.run(run, f"create session {self.session_id}")
        except OutcomeUnknown as unknown:
            if not self._settle_create(len(lines)):
                raise self._latch(str(unknown), "create") from None
        self.fence, self.line_count, self.tail, self.fold = fence, len(lines), tail, fold
        self.size = len(data)
        self.last_start, self.last_end = 0, self.size
        self.exists = True

    def append(self, lines: list[bytes], durable: bool, defer_sync: bool = False) -> int:
        """Commit one batch under our lease; returns where its first line starts in the session's file."""
        self.check()
        if self.tail:
            self._settle_tail(lines)
        at = self.line_count
        fold = Fold(
            session_id=self.fold.session_id, cwd=self.fold.cwd, created=self.fold.created,
            header_timestamp=self.fold.header_timestamp, has_header=True,
            acc=_copy_acc(self.fold.acc),
        )
        ids, texts = fold_lines(fold, lines, at)
        params = {
            "n": len(lines), "id": self.session_id, "owner": self.owner, "fence": self.fence, "at": at,
            "lease": lease_interval(self.lease_seconds),
            "seqs": list(range(at, at + len(lines))), "ids": ids, "lines": lines,
            "text_seqs": [seq for seq, _ in texts], "texts": [text for _, text in texts],
            **fold.columns(now_ms()),
        }

        def run(conn: psycopg.Connection) -> int:
            if len(lines) < COPY_FROM:
                row = conn.execute(_APPEND, params, prepare=True).fetchone()
                return int(row[0]) if row else 0
            # A large batch: the fenced update, then the lines by binary COPY, in one transaction.
            with conn.transaction() as tx:
                fenced = conn.execute(_FENCE, params, prepare=True)
                if fenced.rowcount != 1:
                    raise tx.Rollback  # not ours any more: nothing is written
                insert_lines(conn, self.session_id, at, lines, ids, texts)
                return len(lines)
            return 0

        try:
            added = self.db.run(run, f"append to session {self.session_id}")
        except OutcomeUnknown as unknown:
            added = len(lines) if self._settled(at, lines[0], unknown) else 0
            if not added:
                raise StorageError(
                    f"could not append to session {self.session_id}: {unknown}",
                    sessionId=self.session_id, latched=False,
                ) from None
        if added != len(lines):
            raise self._lost(at)
        start = self.size
        self.line_count = at + len(lines)
        self.fold = fold
        self.size = start + sum(len(line) + 1 for line in lines)
        self.last_start, self.last_end = start, self.size
        self.appends += 1
        return start

    def rewrite(self, data: bytes, original: bytes, backup: str) -> None:
        """Replace every line (a migration to the current version), under our lease; the original
        bytes are kept in ``sidecar_files`` at ``backup``."""
        self.check()
        lines, tail = split_file(data)
        fold = Fold()
        ids, texts = fold_lines(fold, lines, 0)

        def run(conn: psycopg.Connection) -> bool:
            with conn.transaction() as tx:
                fenced = conn.execute(
                    "UPDATE sidecar_sessions SET line_count = %s, tail = %s WHERE id = %s AND lease_owner = %s "
                    "AND lease_fence = %s",
                    (len(lines), tail, self.session_id, self.owner, self.fence),
                )
                if fenced.rowcount != 1:
                    raise tx.Rollback
                conn.execute(
                    "INSERT INTO sidecar_files (path, mode, data) VALUES (%s, 384, %s) ON CONFLICT (path) DO NOTHING",
                    (backup, original),
                )
                conn.execute("DELETE FROM sidecar_lines WHERE session_id = %s", (self.session_id,))
                conn.execute("DELETE FROM sidecar_texts WHERE session_id = %s", (self.session_id,))
                insert_lines(conn, self.session_id, 0, lines, ids, texts)
                return True
            return False

        try:
            done = self.db.run(run, f"rewrite session {self.session_id} after migrating it")
        except OutcomeUnknown as unknown:
            raise self._latch(str(unknown), "rewrite") from None
        if not done:
            raise self._lost(0)
        self.line_count, self.tail, self.size = len(lines), tail, len(data)
        self.last_start = self.last_end = self.size

    def close(self) -> None:
        if self.fence is not None and self._error is None:
            release(self.db, self.session_id, self.owner, self.fence)
        self.fence = None

    # -- what went wrong -----------------------------------------------------------

    def _settled(self, at: int, first_line: bytes, unknown: OutcomeUnknown) -> bool:
        """Whether an append whose answer was lost committed: its first line is at ``at`` (ids are
        unique in a session, so no other batch has that line). Latches when that cannot be told."""
        try:
            row = self.db.read(
                lambda conn: conn.execute(
                    "SELECT (SELECT line FROM sidecar_lines WHERE session_id = s.id AND seq = %s), "
                    "s.lease_owner, s.lease_fence FROM sidecar_sessions s WHERE s.id = %s",
                    (at, self.session_id),
                ).fetchone(),
                f"check the last append to session {self.session_id}",
            )
        except StorageError:
            raise self._latch(str(unknown), "append") from None
        if row is None:
            raise self._latch("the session is no longer in the database", "append")
        found, owner, fence = row
        if found is not None and bytes(found) == first_line:
            return True
        if found is None and owner == self.owner and fence == self.fence:
            return False
        raise self._lost(at)

    def _settle_create(self, count: int) -> bool:
        try:
            row = self.db.read(
                lambda conn: conn.execute(
                    "SELECT line_count, lease_owner FROM sidecar_sessions WHERE id = %s", (self.session_id,)
                ).fetchone(),
                f"check the creation of session {self.session_id}",
            )
        except StorageError:
            return False
        return row is not None and row[0] == count and row[1] == self.owner

    def _settle_tail(self, lines: list[bytes]) -> None:
        """The bytes after the last newline, before the first append: a line lacking only its newline
        becomes a line; a torn one goes aside to ``<file>.torn`` (as the file store does)."""
        tail, self.tail = self.tail, b""
        if self.needs_newline:
            lines.insert(0, tail)
            self.needs_newline = False
            self.size -= len(tail)
            return
        aside = self.placement.relative + ".torn"

        def run(conn: psycopg.Connection) -> None:
            with conn.transaction():
                moved = conn.execute(
                    "UPDATE sidecar_sessions SET tail = ''::bytea "
                    "WHERE id = %s AND lease_owner = %s AND lease_fence = %s AND tail = %s",
                    (self.session_id, self.owner, self.fence, tail),
                )
                if moved.rowcount == 1:
                    conn.execute(
                        "INSERT INTO sidecar_files (path, mode, data) VALUES (%s, 384, %s) "
                        "ON CONFLICT (path) DO UPDATE SET data = sidecar_files.data || excluded.data",
                        (aside, tail + b"\n"),
                    )

        try:
            self.db.run(run, f"set aside the torn last line of session {self.session_id}")
        except OutcomeUnknown as unknown:
            raise self._latch(str(unknown), "repair") from None
        self.size -= len(tail)

    def _lost(self, at: int) -> SessionLocked:
        """Our lease is gone (or the lines moved under us): latched, this writer never appends again."""
        if self._error is None:
            self._error = SessionLocked(
                f"session {self.session_id} is no longer held by this sidecar: its lease expired and another "
                "sidecar took it (or closed it); nothing of the batch was written. Open the session again",
                sessionId=self.session_id,
                leaseLost=True,
            )
        return self._error  # type: ignore[return-value]

    def _latch(self, reason: str, action: str) -> StorageError:
        if self._error is None:
            self._error = StorageError(
                f"could not {action} session {self.session_id}, and whether the database kept the batch "
                f"cannot be told ({reason}); open the session again once the database answers",
                sessionId=self.session_id,
                latched=True,
            )
        return self._error  # type: ignore[return-value]


def _copy_acc(acc: Accumulator) -> Accumulator:
    return Accumulator(acc.count, acc.first, acc.last_activity, acc.name, acc.tokens_total, acc.tokens_last)


def insert_lines(
    conn: psycopg.Connection,
    session_id: str,
    first_seq: int,
    lines: list[bytes],
    ids: list[str | None],
    texts: list[tuple[int, str]],
) -> None:
    """Lines and their search texts, by COPY (the fastest way in, for a whole session)."""
    with conn.cursor() as cur:
        with cur.copy("COPY sidecar_lines (session_id, seq, entry_id, line) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(["text", "int8", "text", "bytea"])
            for offset, (line, entry_id) in enumerate(zip(lines, ids)):
                copy.write_row((session_id, first_seq + offset, entry_id, line))
        if texts:
            with cur.copy("COPY sidecar_texts (session_id, seq, text) FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(["text", "int8", "text"])
                for seq, text in texts:
                    copy.write_row((session_id, seq, text))
