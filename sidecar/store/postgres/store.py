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
from pathlib import Path
from typing import Any, Iterator

import msgspec

from ...config import Settings
from ...errors import DamagedFile, InvalidParams, InvalidState, SessionExists, SessionLocked, SessionNotFound, StorageError
from ...format.jsonl import Entry, encode, parse_line
from ..follow import FileChange
from ..held import HeldSessions
from ..layout import Layout, check_session_id, encode_cwd, file_name, iso_now, new_session_id
from ..session import LoadReport, Session
from ..writer import FsyncPolicy
from .db import Database, OutcomeUnknown
from .listing import list_page, sort_key
from .rows import Placement, id_of_file_name
from .session import PgSession, new_session, session_of
from .writer import DEFAULT_LEASE_SECONDS, PgWriter, open_stored, renew_all

log = logging.getLogger(__name__)

LOCATION_PREFIX = "pg:"
SESSION_CONNECTIONS = 4
_AREA_DIRS = {"live": "", "archive": ".archive/", "trash": ".trash/"}


class PgBlobStore:
    """Images stored apart (``blob:sha256:<hex>``), in ``sidecar_blobs``."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.folders: tuple[Path, ...] = ()

    def put(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        try:
            self.db.run(
                lambda conn: conn.execute(
                    "INSERT INTO sidecar_blobs (digest, data) VALUES (%s, %s) ON CONFLICT (digest) DO NOTHING",
                    (digest, data),
                ),
                "store an image",
            )
        except OutcomeUnknown as exc:
            raise StorageError(f"could not store an image: {exc}; nothing was appended", latched=False) from None
        return digest

    def get(self, digest: str) -> bytes | None:
        if len(digest) != 64 or not all(c in "0123456789abcdef" for c in digest):
            return None
        row = self.db.read(
            lambda conn: conn.execute("SELECT data FROM sidecar_blobs WHERE digest = %s", (digest,)).fetchone(),
            "read an image",
        )
        return bytes(row[0]) if row else None


class PostgresStore(HeldSessions):
    """``SessionStore`` over PostgreSQL (see the module doc)."""

    def __init__(self, root: Path, settings: Settings, database: Database, lease_seconds: float | None = None) -> None:
        super().__init__()
        self.root = Path(root).expanduser().absolute()
        # Host-local things (prompt history, terminal breadcrumbs, snapshots) still live below the root.
        self.layout = Layout(self.root)
        self.compat = "pi"
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

    def import_session(self, session_id: str, cwd: str, timestamp: str, header_fields: dict[str, Any],
                       objs: list[dict[str, Any]], write: bool = True) -> tuple[str, bool]:
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

    def is_current(self, session_id: str) -> bool:
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
        change = session.catch_up()
        if change is not None and self.on_change is not None:
            self.on_change(session, change)
        return change

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
        stored = open_stored(self._db_for(session_id), session_id, None if read_only else self.owner, self.lease_seconds)
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
        return self._session_dbs[int(hashlib.blake2s(session_id.encode(), digest_size=2).hexdigest(), 16) % len(self._session_dbs)]

    def _writer_for(self, stored: Any) -> PgWriter:
        return PgWriter(self._db_for(stored.row["id"]), stored.row["id"], stored.placement, self.owner, self.lease_seconds,
                        self.fsync_policy, stored=stored)

    def _hold(self, session: PgSession) -> None:
        session.compat = "pi"
        session.blobs = None  # images stay inline, as pi reads them (an exported file opens in pi)
        session.on_append = self._appended
        self._open[session.id] = session

    def _appended(self, session: Session, entries: list[Entry]) -> None:
        # The listing fields were updated by the append's own statement.
        if self.on_append is not None:
            self.on_append(session)

    def create(self, cwd: str, session_id: str | None, parent_session: str | None, persist: bool) -> Session:
        session_id = check_session_id(session_id) if session_id is not None else new_session_id()
        if "\x00" in cwd:
            raise InvalidParams("cwd must not contain a NUL character", field="cwd")
        with self._lock:
            if session_id in self._open or self._exists(session_id):
                raise SessionExists(f"session {session_id} already exists; open it or pick another id", sessionId=session_id)
            timestamp = iso_now()
            placement = Placement("live", encode_cwd(cwd), file_name(timestamp, session_id))
            writer = PgWriter(self._db_for(session_id), session_id, placement, self.owner, self.lease_seconds,
                              self.fsync_policy)
            session = new_session(_path(placement), writer, session_id, cwd, parent_session, timestamp, b"")
            session.in_memory = not persist
            self._hold(session)
        return session

    def _exists(self, session_id: str) -> bool:
        row = self.db.read(
            lambda conn: conn.execute("SELECT 1 FROM sidecar_sessions WHERE id = %s", (session_id,)).fetchone()
        )
        return row is not None

    def copy(self, source: Session, entries: list[Entry], labels: list[dict[str, Any]], cwd: str) -> Session:
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
        for database in self._session_dbs:  # made again if the service goes on
            database.close()
        return sessions

    def append_syncs(self, session_id: str, roles: set[str]) -> bool:
        # Every append is a commit: it waits for the database whatever its roles.
        return True

    # -- names and moves -------------------------------------------------------------

    def session_id_at(self, location: str) -> str | None:
        if not location.startswith(LOCATION_PREFIX):
            return None
        return id_of_file_name(Path(location[len(LOCATION_PREFIX):]).name)

    def location(self, session: Session) -> str:
        if session.in_memory:
            return ""
        writer = session.writer
        return LOCATION_PREFIX + writer.placement.relative  # type: ignore[attr-defined]

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
            areas = ["live", "archive"] if from_area is None else [from_area]

            def run(conn: Any) -> tuple[str, str, str] | str:
                with conn.transaction():
                    row = conn.execute(
                        "SELECT area, lease_owner, lease_expires > now() FROM sidecar_sessions WHERE id = %s FOR UPDATE",
                        (session_id,),
                    ).fetchone()
                    if row is None or row[0] not in areas:
                        return "missing"
                    if row[1] is not None and row[1] != self.owner and row[2]:
                        return f"held:{row[1]}"
                    moved = conn.execute(
                        "UPDATE sidecar_sessions SET area = %s WHERE id = %s RETURNING area, folder, file_name",
                        (to, session_id),
                    ).fetchone()
                    return moved

            try:
                moved = self.db.run(run, f"{verb} session {session_id}")
            except OutcomeUnknown as exc:
                raise StorageError(f"could not {verb} session {session_id}: {exc}", latched=False) from None
        if moved == "missing":
            where = {None: "among live or archived sessions", "live": "among live sessions",
                     "archive": "in the archive", "trash": "in the trash"}[from_area]
            raise SessionNotFound(f"cannot {verb}: no session {session_id!r} {where}", sessionId=session_id)
        if isinstance(moved, str):
            raise SessionLocked(f"cannot {verb}: session {session_id} is held by another sidecar ({moved[5:]}); open it "
                                "with readOnly to read it, or try again once that sidecar closes it or its lease expires",
                                sessionId=session_id, owner=moved[5:])
        return LOCATION_PREFIX + Placement(*moved).relative

    def move_cwd(self, session_id: str, cwd: str) -> str:
        """Give a live session another project folder: its header's cwd rewritten (every other byte kept)."""
        check_session_id(session_id)
        if "\x00" in cwd:
            raise InvalidParams("cwd must not contain a NUL character", field="cwd")
        with self._lock:
            held = self.held(session_id)
            if held is not None and held.in_memory:
                held.header = Entry.from_obj({**held.header_obj(), "cwd": cwd})
                return ""
            if held is not None and not held.persisted:
                raise InvalidState(
                    f"session {session_id} has no file yet (nothing is written before the first user or assistant "
                    "message); create it with the cwd it belongs to, or move it once it is written",
                    sessionId=session_id)
            was_open = self.take_held(session_id, moving_on=True) is not None
            folder = encode_cwd(cwd)

            def run(conn: Any) -> Any:
                with conn.transaction():
                    row = conn.execute(
                        "SELECT area, folder, file_name, lease_owner, lease_expires > now() FROM sidecar_sessions "
                        "WHERE id = %s FOR UPDATE", (session_id,),
                    ).fetchone()
                    if row is None or row[0] != "live":
                        return "missing"
                    if row[3] is not None and row[3] != self.owner and row[4]:
                        return f"held:{row[3]}"
                    if row[1] == folder:
                        return Placement(row[0], row[1], row[2])
                    taken = conn.execute(
                        "SELECT 1 FROM sidecar_sessions WHERE area = 'live' AND folder = %s AND file_name = %s",
                        (folder, row[2]),
                    ).fetchone()
                    if taken:
                        return "exists"
                    for seq, line in conn.execute(
                        "SELECT seq, line FROM sidecar_lines WHERE session_id = %s ORDER BY seq LIMIT 4", (session_id,)
                    ).fetchall():
                        entry = parse_line(bytes(line))
                        if entry is not None and entry.type == "session":
                            header = entry.obj()
                            header["cwd"] = cwd
                            conn.execute("UPDATE sidecar_lines SET line = %s WHERE session_id = %s AND seq = %s",
                                         (encode(header), session_id, seq))
                            break
                    else:
                        return "damaged"
                    conn.execute("UPDATE sidecar_sessions SET folder = %s, cwd = %s WHERE id = %s",
                                 (folder, cwd, session_id))
                    return Placement(row[0], folder, row[2])

            try:
                moved = self.db.run(run, f"move session {session_id}")
            except OutcomeUnknown as exc:
                raise StorageError(f"could not move session {session_id}: {exc}", latched=False) from None
        if moved == "missing":
            raise SessionNotFound(f"cannot move: no live session {session_id!r} in the database", sessionId=session_id)
        if moved == "exists":
            raise SessionExists(f"cannot move: {folder}/ already holds a session with that file name", sessionId=session_id)
        if moved == "damaged":
            raise DamagedFile(f"session {session_id} has no session header in its first lines", sessionId=session_id)
        if isinstance(moved, str):
            raise SessionLocked(f"cannot move: session {session_id} is held by another sidecar ({moved[5:]}); open it "
                                "with readOnly to read it, or try again once that sidecar closes it or its lease expires",
                                sessionId=session_id, owner=moved[5:])
        if was_open:
            self.open(session_id, None, False)
        return LOCATION_PREFIX + moved.relative

    def take_held(self, session_id: str, moving_on: bool = False) -> Session | None:
        with self._lock:
            session = self._open.pop(session_id, None)
        if session is not None:
            if self.on_release is not None and not moving_on:
                self.on_release(session_id)
            session.close()
        return session

    # -- listing -------------------------------------------------------------------------

    def list(self, query: Any, work: Any) -> Any:
        from ..base import Listed, ListPage

        areas = ["live", "archive"] if query.include_archived else ["live"]
        cwd = None if query.all else query.cwd
        rows = list_page(self.db, areas, cwd, query.after, query.query, query.limit + 1)
        more = len(rows) > query.limit
        rows = rows[: query.limit]
        sessions = [
            Listed(
                session_id=r.session_id, location=LOCATION_PREFIX + r.placement.relative, cwd=r.cwd,
                created=r.created, modified_ms=r.modified_ms, message_count=r.message_count,
                first_message=r.first_message, tokens_total=r.tokens_total, tokens_last=r.tokens_last,
                name=r.name, title=r.title, parent_session=r.parent_session,
                archived=r.placement.area == "archive", snippet=r.snippet,
            )
            for r in rows
        ]
        if query.after is None:  # in-memory sessions have no row: they lead the first page, as in a file root
            from ..inmemory import listed_in_memory

            sessions[:0] = listed_in_memory(query, self.held_sessions())
        cursor = _encode_cursor(*sort_key(rows[-1])) if more and rows else None
        return ListPage(sessions=sessions, next_cursor=cursor)

    def decode_cursor(self, cursor: str) -> Any:
        try:
            import base64

            raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
            return tuple(msgspec.json.decode(raw, type=tuple[int, str]))
        except (ValueError, msgspec.DecodeError, msgspec.ValidationError):
            return None

    def reindex(self) -> int:
        row = self.db.read(lambda conn: conn.execute("SELECT count(*) FROM sidecar_sessions").fetchone())
        return int(row[0])

    def upkeep_held(self, held: list[Any]):  # type: ignore[no-untyped-def]
        from contextlib import nullcontext

        return nullcontext()

    def run_upkeep(self, held: list[Any]) -> None:
        pass

    # -- upkeep: session/stats and session/prune from the tables (postgres/upkeep.py) ---------

    def usage(self, find_unreferenced: bool) -> Any:
        from .upkeep import measure

        return measure(self.db, self.root, find_unreferenced)

    def pinned(self, found: Any) -> bool:
        from .upkeep import pinned

        return pinned(self.db, found.session_id)


def _encode_cursor(modified: int, key: str) -> str:
    import base64

    return base64.urlsafe_b64encode(msgspec.json.encode([modified, key])).decode().rstrip("=")


def _path(placement: Placement) -> Path:
    from .session import location_path

    return location_path(placement)
