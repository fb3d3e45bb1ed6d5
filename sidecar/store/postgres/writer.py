"""One session's writer in PostgreSQL: appending under the lease (lease.py) with its fence.

Each append, whatever its size, is one statement (lines.py) that updates the session row only
where owner and fence are still ours and the line count is what we last
wrote, and inserts the lines only when that update happened:
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

import psycopg

from ...errors import SessionExists, SessionLocked, StorageError
from ..base import FsyncPolicy
from ..index.listing import Accumulator
from .blobs import keep_named, named_blobs
from .db import Database, OutcomeUnknown
from .lease import DEFAULT_LEASE_SECONDS, Stored, lease_interval, open_stored, read_since, release, renew_all
from .lines import APPEND_FEW, APPEND_ONE, insert_lines, line_params
from .rows import Fold, Placement, fold_lines, fold_text, now_ms, split_file

# What other modules took from here before lease.py and lines.py were split off.
__all__ = [
    "DEFAULT_LEASE_SECONDS",
    "PgWriter",
    "Stored",
    "insert_lines",
    "lease_interval",
    "open_stored",
    "read_since",
    "release",
    "renew_all",
]


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
            self.size = stored.size
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

        named = named_blobs(lines)

        def run(conn: psycopg.Connection) -> None:
            with conn.transaction():
                if named:  # a fork of lines that name blobs: kept from a collection (postgres/erasing.py)
                    keep_named(conn, named, self.session_id, strict=False)
                made = conn.execute(
                    "INSERT INTO sidecar_sessions (id, area, folder, file_name, cwd, created, parent_session, title, titled, "
                    "name, first_message, message_count, last_activity, modified_ms, tokens_total, tokens_last, "
                    "line_count, tail, lease_owner, lease_fence, lease_expires, name_folded, title_folded) VALUES "
                    "(%(id)s, %(area)s, %(folder)s, %(file_name)s, %(cwd)s, %(created)s, %(parent_session)s, %(title)s, %(titled)s, "
                    "%(name)s, %(first_message)s, %(message_count)s, %(last_activity)s, %(modified_ms)s, "
                    "%(tokens_total)s, %(tokens_last)s, %(line_count)s, %(tail)s, %(owner)s, %(fence)s, "
                    "now() + %(lease)s * interval '1 second', %(name_folded)s, %(title_folded)s) "
                    "ON CONFLICT (id) DO NOTHING",
                    {
                        "id": self.session_id,
                        "area": self.placement.area,
                        "folder": self.placement.folder,
                        "file_name": self.placement.file_name,
                        "cwd": fold.cwd,
                        "created": fold.created,
                        "parent_session": fold.parent_session,
                        "title": fold.title,
                        "titled": fold.titled,
                        "line_count": len(lines),
                        "tail": tail,
                        "owner": self.owner,
                        "fence": fence,
                        "title_folded": fold_text(fold.title),
                        "lease": lease_interval(self.lease_seconds),
                        **fold.columns(stamp),
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

    def append(self, lines: list[bytes], durable: bool, defer_sync: bool = False, expect_at: int | None = None) -> int:
        """Commit one batch under our lease; returns where its first line starts in the session's file.

        (``expect_at`` is the file writer's, for its fstat; a row has no file to stat.)"""
        self.check()
        if self.tail:
            self._settle_tail(lines)
        at = self.line_count
        fold = Fold(
            session_id=self.fold.session_id,
            cwd=self.fold.cwd,
            created=self.fold.created,
            header_timestamp=self.fold.header_timestamp,
            has_header=True,
            acc=_copy_acc(self.fold.acc),
        )
        ids, texts = fold_lines(fold, lines, at)
        params = {
            "n": len(lines),
            "id": self.session_id,
            "owner": self.owner,
            "fence": self.fence,
            "at": at,
            "lease": lease_interval(self.lease_seconds),
            **line_params(at, lines, ids, texts),
            **fold.columns(now_ms()),
        }
        statement = APPEND_ONE if len(lines) == 1 else APPEND_FEW
        named = named_blobs(lines)

        def run(conn: psycopg.Connection) -> int:
            if named:  # lines that name blobs: those are kept from a collection first (postgres/erasing.py)
                with conn.transaction():
                    keep_named(conn, named, self.session_id)
                    row = conn.execute(statement, params, prepare=True).fetchone()
                    return int(row[0]) if row else 0
            row = conn.execute(statement, params, prepare=True).fetchone()
            return int(row[0]) if row else 0

        try:
            added = self.db.run(run, f"append to session {self.session_id}")
        except OutcomeUnknown as unknown:
            added = len(lines) if self._settled(at, lines[0], unknown) else 0
            if not added:
                raise StorageError(
                    f"could not append to session {self.session_id}: {unknown}",
                    sessionId=self.session_id,
                    latched=False,
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

        # No blob is touched: the lines are the session's own, named before and after alike, so a collection
        # sees them named whichever version its snapshot holds.

        def run(conn: psycopg.Connection) -> bool:
            with conn.transaction() as tx:
                fenced = conn.execute(
                    "UPDATE sidecar_sessions SET line_count = %s, tail = %s WHERE id = %s AND lease_owner = %s "
                    "AND lease_fence = %s",
                    (len(lines), tail, self.session_id, self.owner, self.fence),
                )
                if fenced.rowcount != 1:
                    raise psycopg.Rollback(tx)
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
        return self._error  # type: ignore[return-value]  # the latched error is a StorageError or SessionLocked

    def _latch(self, reason: str, action: str) -> StorageError:
        if self._error is None:
            self._error = StorageError(
                f"could not {action} session {self.session_id}, and whether the database kept the batch "
                f"cannot be told ({reason}); open the session again once the database answers",
                sessionId=self.session_id,
                latched=True,
            )
        return self._error  # type: ignore[return-value]  # the latched error is a StorageError or SessionLocked


def _copy_acc(acc: Accumulator) -> Accumulator:
    return Accumulator(acc.count, acc.first, acc.last_activity, acc.name, acc.tokens_total, acc.tokens_last)
