"""A session held from PostgreSQL: the same in-memory ``Session`` (tree, leaf, labels,
id rules), built from the session's lines, with a ``PgWriter`` as its durability
point. Nothing here reads a file: the file-following hooks of ``Session``
(store/files/follow.py) have nothing to watch, since one writer holds the lease, and
a read-only opener catches up from the database instead (``catch_up``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ...errors import DamagedFile
from ...format.cycles import cycles_paused
from ...format.jsonl import Entry, NotASession, serialize
from ...format.linelist import LineParser
from ...format.migrate import migrate
from ...format.titleslot import read_slot
from ..base import FileChange
from ..session import LineSession, LoadReport, Session, new_header
from .lease import Stored, read_since
from .notify import Notice, RemoteState
from .rows import Placement
from .writer import PgWriter

# Sessions have no file: ``Session.path`` names where the session would be in a file root, below this.
NO_FILE = Path("/nonexistent/postgresql")


def location_path(placement: Placement) -> Path:
    return NO_FILE / placement.relative


class PgSession(LineSession):
    """``Session`` whose lines live in PostgreSQL (see the module doc)."""

    writer: PgWriter
    # Live across hosts (notify.py): where a writer's notices go, and what a read-only holder heard.
    tell: Callable[[Notice], None] | None = None
    remote: RemoteState | None = None
    on_closed: Callable[[PgSession], None] | None = None

    # -- nothing to follow on disk ------------------------------------------------------

    changes_on_disk = False  # another host's appends arrive as notices (notify.py), not file events

    def _note_file(self) -> None:
        self.seen = (0, 0, 0)

    def _saw_own_write(self) -> None:
        self.seen = (0, 0, 0)

    def _unchanged(self) -> bool:
        return True

    def changed_behind(self, before_call: bool = False, turn: int | None = None) -> bool:
        """A read-only holder heard (notify.py) that the writer changed the session."""
        remote = self.remote
        return remote is not None and remote.behind

    def follow(self, wait: bool = True) -> FileChange | None:
        return None

    def settle_unfinished(self) -> bool:
        return False

    def _read_whole(self) -> None:  # never: nothing rewrites a session's rows behind a writer
        raise DamagedFile(f"session {self.id} cannot be read again whole", sessionId=self.id)

    # -- what other hosts hear of (notify.py) ----------------------------------------------

    def branch(self, entry_id: str | None) -> None:
        super().branch(entry_id)
        if self.tell is not None and not self.read_only and self.persisted:
            self.tell(Notice(self.id, "leaf", self.writer.line_count, entry_id))

    def close(self) -> None:
        try:
            if self.tell is not None and not self.read_only and self.persisted and self.writer.error is None:
                self.tell(Notice(self.id, "close", self.writer.line_count))
            super().close()
        finally:
            if self.on_closed is not None:
                self.on_closed(self)

    # -- a read-only opener catching up ---------------------------------------------------

    def catch_up(self, upto: int | None = None) -> FileChange | None:
        """Fold in the lines the session's writer committed since we read it (read-only openers);
        with ``upto``, only those before that line count.

        The rows are parsed as they arrive, as the open parses them (format/linelist.py): what is
        folded in is what the file store's follow folds in for the same lines appended to a file
        (``Session._add_tail``), without joining them into one buffer first."""
        if not self.read_only or self.writer.error is not None:
            return None
        start = self.known_size
        parser = LineParser.after_header(start)
        lines, _, _ = read_since(self.writer.db, self.id, self.writer.line_count, parser, upto)
        if not lines:
            return None
        parsed = parser.finish(b"")
        tree = self.tree
        before = len(tree.entries)
        with cycles_paused():
            tree.add_parsed(parsed.items)
        self.parse_errors += parsed.parse_errors
        appended = tree.entries[before:]
        self.known_size = parsed.size
        self.writer.line_count += len(lines)
        self.writer.size = self.known_size
        return FileChange(appended=appended) if appended else None


def session_of(stored: Stored, writer: PgWriter, read_only: bool) -> tuple[PgSession, LoadReport]:
    """The session as ``stored`` holds it (migrated in memory when older: see PostgresStore.open)."""
    try:
        parsed = stored.parsed()
    except NotASession as exc:
        raise DamagedFile(
            f"session {stored.row['id']} in the database is not a session: {exc}; it was left unchanged",
            sessionId=stored.row["id"],
        ) from exc
    size = parsed.size  # the file's length, counted by the parse
    migrated_from = migrate(parsed)
    if migrated_from is not None and not read_only:
        # As the file store rewrites a migrated file (the original kept as <file>.v<N>.bak).
        data = serialize(parsed.header, parsed.items, parsed.prefix)
        writer.rewrite(data, stored.data, f"{stored.placement.relative}.v{migrated_from}.bak")
        size = len(data)
    session = PgSession(location_path(stored.placement), parsed.header, writer)
    session.read_only = read_only
    session.prefix, session.title_slot, session.title_fault = parsed.prefix, parsed.title_slot, parsed.title_fault
    session.parse_errors = parsed.parse_errors
    session.known_size = size
    writer.needs_newline = parsed.needs_newline
    session.tree.add_parsed(parsed.items)
    session._note_file()
    return session, LoadReport(parsed.parse_errors, migrated_from)


def new_session(
    path: Path,
    writer: PgWriter,
    session_id: str,
    cwd: str,
    parent_session: str | None,
    timestamp: str,
    prefix: bytes,
    entries: list[Entry] | None = None,
) -> PgSession:
    """A session not written yet (or a fork holding ``entries``, written at once when they hold a message)."""
    session = PgSession(path, new_header(session_id, cwd, parent_session, timestamp), writer)
    if prefix:
        session.prefix = prefix
        session.title_slot, session.title_fault = read_slot(prefix.rstrip(b"\n"))
    if entries:
        for entry in entries:
            session.tree.add(entry.detached())
        if session.tree.has_conversation:
            session._create_file()
    return session


def header_cwd(session: Session) -> object:
    return session.header_obj().get("cwd", "")
