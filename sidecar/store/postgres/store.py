"""``SessionStore`` over PostgreSQL (store/base.py): every session of this sidecar in the database.

The sessions this process holds are kept as the file store keeps them (an
in-memory ``Session`` per id); what differs is where their lines go and how
one writer is kept per session across hosts: a lease per session, renewed in
the background while held (every third of its length), released on close,
and checked with its fence in the same statement as every append (writer.py).
A session opened ``readOnly`` catches up with what its writer committed on
every call that reaches it (``live``/``open``).

A session has no file: results' ``path`` is ``pg:<area>/<folder>/<file>``, the
place it would have in a file root (export-root writes it there), and
``session/open`` takes that form too.
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import threading
import uuid
from collections.abc import Iterator, Mapping
from collections.abc import Set as AbstractSet
from pathlib import Path

import msgspec

from ...config import Settings
from ...errors import InvalidParams, InvalidState, SessionExists, SessionLocked, SessionNotFound, StorageError
from ...format.jsonl import Entry
from ..base import FileChange, FsyncPolicy
from ..compat import Compat
from ..files.layout import Layout, encode_cwd, file_name
from ..held import HeldSessions
from ..ids import check_session_id, iso_now, new_session_id
from ..session import LoadReport, Session
from .blobs import PgBlobStore
from .db import Database, OutcomeUnknown
from .lease import DEFAULT_LEASE_SECONDS, Stored, open_stored, renew_all
from .listing import LOCATION_PREFIX, list_page
from .moves import move_area, move_folder
from .notify import Listener, Notice, RemoteState, shared_notifier
from .rows import Placement, id_of_file_name
from .session import PgSession, new_session, session_of
from .shelf import ShelfQueries
from .writer import PgWriter

log = logging.getLogger(__name__)

SESSION_CONNECTIONS = 4


class PostgresStore(HeldSessions[PgSession], ShelfQueries):
    """``SessionStore`` over PostgreSQL (see the module doc)."""

    def __init__(self, root: Path, settings: Settings, database: Database, lease_seconds: float | None = None) -> None:
        super().__init__()
        self.root = Path(root).expanduser().absolute()
        # Host-local things (prompt history, terminal breadcrumbs, snapshots) still live below the root.
        self.layout = Layout(self.root)
        self.compat: Compat = (
            "pi"  # "omp" is refused before (opening.py); unset means pi here, whatever the root's folder
        )
        if settings.store.compat is None:  # the effective value, as initialize answers it (as the file store's)
            settings = msgspec.structs.replace(settings, store=msgspec.structs.replace(settings.store, compat="pi"))
        self.settings = settings
        self.db = database
        self.blobs = PgBlobStore(database)
        self.lease_seconds = lease_seconds if lease_seconds is not None else DEFAULT_LEASE_SECONDS
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._renewer_db = Database(database.url, database.timeout, "session-sidecar-lease")
        # Sessions' calls run side by side on worker threads: each session uses one of a few
        # connections (made when first needed), so calls on different sessions rarely wait for each other.
        self._session_dbs = [database] + [
            Database(database.url, database.timeout, "session-sidecar") for _ in range(SESSION_CONNECTIONS - 1)
        ]
        # Live across hosts (notify.py): what this sidecar writes is told, what it holds read-only is heard.
        self._notifier = shared_notifier(database)
        self._listener = Listener(database, self._heard, self._listened_line_counts)
        self._stop = threading.Event()
        self._renewer = threading.Thread(target=self._renew, name="pg-lease", daemon=True)
        self._renewer.start()

    @property
    def fsync_policy(self) -> FsyncPolicy:
        return FsyncPolicy(self.settings.store.fsync)

    def _renew(self) -> None:
        """Keep the leases of held sessions while this process runs (a paused one loses them)."""
        while not self._stop.wait(self.lease_seconds / 3):
            with self._lock:
                holding = any(not s.read_only and s.writer.fence is not None for s in self._open.values())
            if not holding:
                continue
            try:
                renew_all(self._renewer_db, self.owner, self.lease_seconds)
            except (StorageError, OutcomeUnknown) as exc:
                log.warning("could not renew leases (%s); they expire unless the database answers soon", exc)

    # -- held sessions -------------------------------------------------------------

    def import_session(
        self,
        session_id: str,
        cwd: str,
        timestamp: str,
        header_fields: Mapping[str, object],
        objs: list[dict[str, object]],
        write: bool = True,
    ) -> tuple[str, bool]:
        """An imported session written in one transaction (postgres/importing.py), or the one there already."""
        from .importing import existing_place, import_entries

        check_session_id(session_id)
        held = self.held(session_id)
        if held is not None:  # open here (perhaps not written yet): that one is the session of this id
            return self.location(held), False
        found = existing_place(self.db, session_id)
        if found is not None:
            return found, False
        if not write or not objs:
            return "", False
        return import_entries(self.db, self.layout, session_id, cwd, timestamp, header_fields, objs)

    def is_current(self, session_id: str, turn: int | None = None) -> bool:
        session = self.held(session_id)
        return session is not None and session.writer.error is None and not session.read_only

    def live(self, session_id: str, wait: bool = True) -> tuple[Session, FileChange | None]:
        found = self.held(session_id)
        if found is not None:
            found.writer.check()
            return found, self.follow(found, wait)
        check_session_id(session_id)
        return self._load(session_id, False)[0], None

    def follow(self, session: Session, wait: bool = True) -> FileChange | None:
        if not isinstance(session, PgSession):
            return None
        if session.remote is None:  # the writer (every call of it passes here): nothing to follow
            return None
        leaf, closed_at = session.remote.take()
        told: list[FileChange] = []

        def tell(change: FileChange | None) -> None:  # each step told before the next (its leaf is the leaf then)
            if change is not None:
                told.append(change)
                if self.on_change is not None:
                    self.on_change(session, change)

        if leaf is not None and leaf[0] > session.writer.line_count:  # first what came before the move
            tell(session.catch_up(upto=leaf[0]))
        if (
            leaf is not None
            and leaf[0] == session.writer.line_count
            and leaf[1] != session.leaf_id
            and (leaf[1] is None or leaf[1] in session.tree.by_id)
        ):
            session.branch(leaf[1])  # the writer moved its leaf without appending (session/branch)
            tell(FileChange())
        tell(session.catch_up())
        if closed_at is not None and session.writer.line_count >= closed_at and self.on_release is not None:
            self.on_release(session.id)  # the writer closed it: subscriptions here end (didClose)
        if not told:
            return None
        return told[0] if len(told) == 1 else FileChange(appended=[e for change in told for e in change.appended])

    # -- live across hosts (notify.py) -------------------------------------------------

    def _heard(self, session_id: str, notice: Notice | None) -> None:
        """The listener thread heard of a change (or must check): mark the session, ask for its turn."""
        session = self.held(session_id)
        if not isinstance(session, PgSession) or session.remote is None:
            return
        if notice is not None and notice.kind == "append" and notice.line_count <= session.writer.line_count:
            return  # already read (a notice comes after its rows are visible)
        session.remote.heard(notice)
        on_behind = self.on_behind
        if on_behind is not None:
            on_behind(session_id)

    def _listened_line_counts(self) -> dict[str, int]:
        with self._lock:
            return {
                s.id: s.writer.line_count
                for s in self._open.values()
                if isinstance(s, PgSession) and s.remote is not None
            }

    def _session_closed(self, session: PgSession) -> None:
        if session.remote is not None:
            self._listener.unlisten(session.id)

    def open(self, session_id: str | None, location: str | None, read_only: bool) -> tuple[Session, LoadReport]:
        if session_id is None:
            session_id = self.session_id_at(location or "")
            if session_id is None:
                raise InvalidParams(
                    f"{location!r} is not a session of this store; give a sessionId, or a path as session/list "
                    f"gives them ({LOCATION_PREFIX}<area>/<folder>/<file>)",
                    field="path",
                )
        check_session_id(session_id)
        session = self.held(session_id)
        if session is not None and session.writer.error is None and (read_only or not session.read_only):
            self.follow(session)
            return session, LoadReport(0, None)
        if session is not None:  # its last write failed, or it was read-only and a writer is asked for
            with self._lock:
                self._open.pop(session_id, None)
            session.close()
        return self._load(session_id, read_only)

    def _load(self, session_id: str, read_only: bool) -> tuple[Session, LoadReport]:
        stored = open_stored(
            self._db_for(session_id), session_id, None if read_only else self.owner, self.lease_seconds, parse=True
        )
        if stored.row["area"] == "trash":
            if stored.fence is not None:
                self._writer_for(stored).close()
            raise SessionNotFound(f"session {session_id} is in the trash; restore it first", sessionId=session_id)
        writer = self._writer_for(stored)
        try:
            session, report = session_of(stored, writer, read_only)
        except BaseException:
            writer.close()
            raise
        with self._lock:
            self._hold(session)
        return session, report

    def _db_for(self, session_id: str) -> Database:
        return self._session_dbs[
            int(hashlib.blake2s(session_id.encode(), digest_size=2).hexdigest(), 16) % len(self._session_dbs)
        ]

    def _writer_for(self, stored: Stored) -> PgWriter:
        return PgWriter(
            self._db_for(stored.row["id"]),
            stored.row["id"],
            stored.placement,
            self.owner,
            self.lease_seconds,
            self.fsync_policy,
            stored=stored,
        )

    def _hold(self, session: PgSession) -> None:
        session.compat = "pi"
        session.blobs = None  # images stay inline, as pi reads them (an exported file opens in pi)
        session.on_append = self._appended
        session.on_closed = self._session_closed
        if session.read_only:
            session.remote = RemoteState()
            self._listener.listen(session.id)
        else:
            session.tell = self._notifier.tell
        self._open[session.id] = session

    def _appended(self, session: Session, entries: list[Entry]) -> None:
        # The listing fields were updated by the append's own statement.
        if isinstance(session, PgSession) and session.tell is not None:
            session.tell(Notice(session.id, "append", session.writer.line_count))
        if self.on_append is not None:
            self.on_append(session)

    def create(self, cwd: str, session_id: str | None, parent_session: str | None, persist: bool) -> Session:
        session_id = check_session_id(session_id) if session_id is not None else new_session_id()
        if "\x00" in cwd:
            raise InvalidParams("cwd must not contain a NUL character", field="cwd")
        with self._lock:
            if session_id in self._open or self._exists(session_id):
                raise SessionExists(
                    f"session {session_id} already exists; open it or pick another id", sessionId=session_id
                )
            timestamp = iso_now()
            placement = Placement("live", encode_cwd(cwd), file_name(timestamp, session_id))
            writer = PgWriter(
                self._db_for(session_id), session_id, placement, self.owner, self.lease_seconds, self.fsync_policy
            )
            session = new_session(_path(placement), writer, session_id, cwd, parent_session, timestamp, b"")
            session.in_memory = not persist
            self._hold(session)
        return session

    def _exists(self, session_id: str) -> bool:
        row = self.db.read(
            lambda conn: conn.execute("SELECT 1 FROM sidecar_sessions WHERE id = %s", (session_id,)).fetchone()
        )
        return row is not None

    def copy(self, source: Session, entries: list[Entry], labels: list[dict[str, object]], cwd: str) -> Session:
        new_id = new_session_id()
        timestamp = iso_now()
        placement = Placement("live", encode_cwd(cwd), file_name(timestamp, new_id))
        writer = PgWriter(self._db_for(new_id), new_id, placement, self.owner, self.lease_seconds, self.fsync_policy)
        forked = new_session(_path(placement), writer, new_id, cwd, source.id, timestamp, b"", entries)
        if labels:
            forked.append(labels)
        with self._lock:
            self._hold(forked)
        return forked

    def recent(self, cwd: str, preferred: str | None) -> Iterator[tuple[Session, LoadReport, bool]]:
        if preferred is not None:
            preferred_id = self.session_id_at(preferred)
            if preferred_id is not None:
                try:
                    yield (*self.open(preferred_id, None, False), True)
                except (SessionNotFound, SessionLocked, InvalidState):
                    pass
        rows = list_page(self.db, ["live"], cwd, None, None, 50)
        for row in rows:
            try:
                session, report = self.open(row.session_id, None, False)
            except (SessionNotFound, SessionLocked, InvalidState):
                continue
            yield session, report, False

    def close_all(self) -> list[Session]:
        sessions = super().close_all()
        self._notifier.drain(timeout=min(2.0, self.db.timeout))  # the close notices go out first
        self._listener.stop()
        for database in self._session_dbs:  # made again if the service goes on
            database.close()
        return sessions

    def append_syncs(self, session_id: str, roles: AbstractSet[str]) -> bool:
        # Every append is a commit: it waits for the database whatever its roles.
        return True

    # -- names and moves -------------------------------------------------------------

    def session_id_at(self, location: str) -> str | None:
        if not location.startswith(LOCATION_PREFIX):
            return None
        relative = location[len(LOCATION_PREFIX) :]
        named = id_of_file_name(Path(relative).name)
        parts = relative.split("/")
        area = {".archive": "archive", ".trash": "trash"}.get(parts[0], "live")
        if area != "live":
            parts = parts[1:]
        if len(parts) != 2:
            return named
        # The session at that place, as the file store opens the file there: a file migrated under a name
        # that is not pi's <timestamp>_<id>.jsonl (or whose header's id is not its name's) is found too.
        row = self.db.read(
            lambda conn: conn.execute(
                "SELECT id FROM sidecar_sessions WHERE area = %s AND folder = %s AND file_name = %s",
                (area, parts[0], parts[1]),
            ).fetchone(),
            f"find the session at {location}",
        )
        return str(row[0]) if row else named

    def location(self, session: Session) -> str:
        if session.in_memory:
            return ""
        writer = session.writer
        return LOCATION_PREFIX + writer.placement.relative  # type: ignore[attr-defined]  # this store holds PgSessions, whose writer is a PgWriter

    def location_of_terminal(self, session: Session) -> Path | None:
        return None

    def renamed(self, session: Session) -> None:
        pass  # a name is an entry: its append updated the listing

    def move(self, session_id: str, from_area: str | None, to: str) -> str:
        check_session_id(session_id)
        verb = {"archive": "archive", "trash": "delete"}.get(to, "restore" if from_area == "trash" else "unarchive")
        with self._lock:
            held = self.held(session_id)
            if held is not None and not held.persisted:
                raise InvalidState(
                    f"session {session_id} has no file yet (nothing is written before the first user or assistant message)",
                    sessionId=session_id,
                )
            if held is not None:
                self.take_held(session_id)

            moved = move_area(self.db, session_id, from_area, to, self.owner, verb)
        return LOCATION_PREFIX + moved.relative

    def move_cwd(self, session_id: str, cwd: str) -> str:
        """Give a live session another project folder: its header's cwd rewritten (every other byte kept)."""
        check_session_id(session_id)
        if "\x00" in cwd:
            raise InvalidParams("cwd must not contain a NUL character", field="cwd")
        with self._lock:
            if self.moved_unwritten(session_id, cwd):
                return ""
            was_open = self.take_held(session_id, moving_on=True) is not None
            folder = encode_cwd(cwd)

            moved = move_folder(self.db, session_id, folder, cwd, self.owner)
        if was_open:
            self.open(session_id, None, False)
        return LOCATION_PREFIX + moved.relative


def _path(placement: Placement) -> Path:
    from .session import location_path

    return location_path(placement)
