"""The protocol over a spec-format root: ``SessionService`` with the spec store underneath.

Only what touches storage differs: finding, creating, loading, listing,
moving and forking sessions (store/spec/), and compaction's run
(compactor.py). Appending, building the context, naming and reading the
tree are the base service's, working on the same in-memory tree.
A spec root has no working folders (its sessions have no cwd), no listing
index (metadata.json is the listing) and no tree cache.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from .. import wire
from ..config import Settings
from ..errors import InvalidParams, InvalidState, SessionExists, SessionNotFound, StorageError
from ..format.jsstr import session_name
from ..service import SessionService
from ..store.layout import iso_now
from ..store.lock import lock_path, unlock
from ..store.session import LoadReport, Session
from ..store.spec.convert import first_user_text, records_up_to
from ..store.spec.layout import ARCHIVE_DIR, SESSION_FILE, TRASH_DIR, SpecLayout, check_ulid, new_ulid
from ..store.spec.metadata import new_metadata
from ..store.spec.records import SessionMetadata
from ..store.spec.session import SpecSession, cannot_hold
from ..store.spec.listing import read_listing
from ..work import NO_WORK, Work
from .compactor import SpecCompactor


class SpecSessionService(SessionService):
    def __init__(self, root: Path, settings: Settings | None = None) -> None:
        super().__init__(root, settings)
        self.spec = SpecLayout(self.layout.root)
        self.compat = "pi"

    @property
    def compactor(self) -> SpecCompactor:  # type: ignore[override]
        if self._compactor is None:
            with self._compactor_lock:
                if self._compactor is None:
                    self._compactor = SpecCompactor(lambda: self.settings.providers)
        return self._compactor  # type: ignore[return-value]

    # -- finding and loading ----------------------------------------------------------

    def _live(self, session_id: str, wait: bool = True) -> tuple[Session, Any]:
        with self._lock:
            found = self._open.get(session_id)
        if found is not None:
            found.writer.check()
            return found, None
        located = self.spec.find(session_id)
        if located is None:
            raise SessionNotFound(f"no session {session_id!r} below {self.layout.root}; create it, or check the id "
                                  "with session/list", sessionId=session_id)
        return self._load(located[0])[0], None

    def _load(self, path: Path, read_only: bool = False) -> tuple[Session, Any]:
        folder = path.parent if path.name == SESSION_FILE else path
        check_ulid(folder.name)
        with self._lock:
            here = self._open.get(folder.name)
            if here is not None and here.writer.error is None and (read_only or not here.read_only):
                return here, LoadReport(0, None)
            if here is not None:
                self._open.pop(here.id, None)
                here.close()
        if not (folder / SESSION_FILE).is_file():
            raise SessionNotFound(f"no spec session at {folder}", path=str(folder))
        session, report = SpecSession.load(folder, self.fsync_policy, read_only)
        with self._lock:
            self._open[session.id] = session
        return session, report

    def _indexed(self, session: Session, entries: list) -> None:
        pass  # metadata.json is the listing, written with every append

    def _index_refresh(self, path: Path) -> None:
        pass

    def reindex(self) -> int:
        return 0

    def _save_tree_cache(self, session: Session) -> None:
        pass

    # -- create / open ------------------------------------------------------------------

    def create(self, params: wire.CreateParams) -> wire.CreateResult:
        session_id = check_ulid(params.sessionId) if params.sessionId is not None else new_ulid()
        source = params.source or ("cron" if params.cronJobId is not None else "interactive")
        if source == "interactive" and params.cronJobId is not None:
            raise InvalidParams("cronJobId goes with source \"cron\"", field="cronJobId")
        name = session_name(params.name) if params.name is not None else None
        metadata = new_metadata(session_id, iso_now(), source=source, cron_job_id=params.cronJobId, name=name or None)
        folder = self.spec.folder(session_id)
        with self._lock:
            if session_id in self._open or self.spec.find(session_id, (None, ARCHIVE_DIR, TRASH_DIR)) is not None:
                raise SessionExists(f"session {session_id} already exists; open it or pick another id",
                                    sessionId=session_id)
            if params.persist:
                session = SpecSession.create(folder, metadata, self.fsync_policy)
            else:
                from ..store.spec.writer import SpecWriter

                session = SpecSession(folder, metadata, SpecWriter(folder, self.fsync_policy, exists=True))
                session.in_memory = True
            self._open[session_id] = session
        return wire.CreateResult(sessionId=session_id, path="" if session.in_memory else str(folder),
                                 header=session.header_obj())

    def _open_result(self, session: Session, parse_errors: int, migrated_from: int | None) -> wire.OpenResult:
        result = super()._open_result(session, parse_errors, migrated_from)
        if isinstance(session, SpecSession) and not session.in_memory:
            result.path = str(session.folder)
        return result

    def open(self, params: wire.OpenParams) -> wire.OpenResult:
        if (params.sessionId is None) == (params.path is None):
            raise InvalidParams("session/open takes exactly one of sessionId and path")
        if params.sessionId is not None:
            check_ulid(params.sessionId)
            with self._lock:
                here = self._open.get(params.sessionId)
            if here is not None and here.writer.error is None and (params.readOnly or not here.read_only):
                session, report = here, None
            else:
                session, report = self._load_by_id(params.sessionId, params.readOnly)
        else:
            session, report = self._load(self._resolve_path(params.path), params.readOnly)  # type: ignore[arg-type]
        if report is None:
            report = LoadReport(0, None)
        return self._open_result(session, report.parse_errors, report.migrated_from)

    def _load_by_id(self, session_id: str, read_only: bool) -> tuple[Session, Any]:
        located = self.spec.find(session_id)
        if located is None:
            raise SessionNotFound(f"no session {session_id!r} below {self.layout.root}", sessionId=session_id)
        return self._load(located[0], read_only)

    def continue_recent(self, params: wire.ContinueRecentParams) -> wire.OpenResult | None:
        """The session with the newest message (spec sessions have no working folder to pick by)."""
        for listed in read_listing(self.spec, (None,)):
            try:
                session, report = self._load(listed.folder)
            except (SessionNotFound, InvalidState, StorageError):
                continue
            return self._open_result(session, report.parse_errors, report.migrated_from)
        return None

    def move(self, params: wire.MoveParams) -> wire.MoveResult:
        raise cannot_hold("a working folder (session/move)", params.sessionId)

    # -- list / archive / delete / fork ---------------------------------------------------

    def list(self, params: wire.ListParams, work: Work = NO_WORK) -> wire.ListResult:
        """Every session, newest ``lastMessageAt`` first (S7.5); ``cwd`` does not apply (the format has none)."""
        areas = (None, ARCHIVE_DIR) if params.includeArchived else (None,)
        listed = read_listing(self.spec, areas)
        if params.query:
            needle = params.query.lower()
            listed = [s for s in listed if needle in (s.metadata.name or "").lower() or needle in s.first_message.lower()]
        start = int(params.cursor) if params.cursor and params.cursor.isdigit() else 0
        limit = min(params.limit or 50, 1000)
        page = listed[start:start + limit]
        sessions = [
            wire.SessionInfo(
                sessionId=s.metadata.id, path=str(s.folder), cwd="", created=s.metadata.createdAt,
                modified=s.metadata.lastMessageAt, messageCount=s.metadata.messageCount,
                firstMessage=s.first_message, archived=s.area == ARCHIVE_DIR,
                tokens=wire.SessionTokens(total=s.metadata.metrics.totalTokens if s.metadata.metrics else 0, last=0),
                name=s.metadata.name,
            )
            for s in page
        ]
        more = start + limit < len(listed)
        return wire.ListResult(sessions=sessions, nextCursor=str(start + limit) if more else None)

    def delete(self, params: wire.DeleteParams) -> wire.DeleteResult:
        check_ulid(params.sessionId)
        with self._lock:
            session = self._open.get(params.sessionId)
        if session is not None and session.in_memory:
            with self._lock:
                self._open.pop(session.id, None)
            return wire.DeleteResult(sessionId=params.sessionId, trashPath=None)
        located = self.spec.find(params.sessionId)
        area = located[1] if located is not None else None
        path = self._move(params.sessionId, area, TRASH_DIR, "delete")
        return wire.DeleteResult(sessionId=params.sessionId, trashPath=str(path))

    def _move(self, session_id: str, from_area: str | None, to_area: str | None, verb: str) -> Path:
        check_ulid(session_id)
        with self._lock:
            located = self.spec.find(session_id, (from_area,))
            if located is None:
                where = {None: "among live sessions", ARCHIVE_DIR: "in the archive", TRASH_DIR: "in the trash"}[from_area]
                raise SessionNotFound(f"cannot {verb}: no session {session_id!r} {where}", sessionId=session_id)
            source = located[0]
            target = self.spec.folder(session_id, to_area)
            if target.exists():
                raise SessionExists(f"cannot {verb}: {target} already exists", path=str(target))
            session = self._open.pop(session_id, None)
            if session is not None:
                session.close()
            held = lock_path(source / SESSION_FILE)  # another sidecar writing it keeps it where it is
            try:
                os.makedirs(target.parent, mode=0o700, exist_ok=True)
                os.rename(source, target)
            except OSError as exc:
                raise StorageError(f"could not {verb} {source}: {exc.strerror or exc}", path=str(source)) from exc
            finally:
                unlock(held)
            return target

    def fork(self, params: wire.ForkParams) -> wire.ForkResult:
        """A new session holding the records up to an entry (section 7.7's fork: a copy up to a record)."""
        source = self.session(params.sessionId)
        assert isinstance(source, SpecSession)
        target_id = params.entryId if params.entryId is not None else source.leaf_id
        if target_id is None:
            raise InvalidState("the session is empty; there is nothing to fork")
        target = source.get(target_id)
        if params.entryId is not None and target.type == "message" and target.role() not in ("user", "assistant"):
            raise InvalidParams(f"fork from a user or assistant message; entry {target_id} is a {target.role()} message",
                                entryId=target_id)
        new_id = new_ulid()
        objs = records_up_to(source.tree.path(target_id))
        metadata = msgspec.structs.replace(
            new_metadata(new_id, iso_now(), source="interactive", name=source.metadata.name),
        )
        forked = SpecSession.create(self.spec.folder(new_id), metadata, self.fsync_policy)
        if objs:
            forked.append(objs)
        with self._lock:
            self._open[new_id] = forked
        return wire.ForkResult(sessionId=new_id, path=str(forked.folder), persisted=True)


def metadata_of(session: Session) -> SessionMetadata | None:
    return session.metadata if isinstance(session, SpecSession) else None
