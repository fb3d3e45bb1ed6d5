"""The sessions this process holds, each one file below the root, locked while it writes it."""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Mapping
from collections.abc import Set as AbstractSet
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from ...config import Settings
from ...errors import DamagedFile, InvalidState, SessionExists, SessionNotFound
from ...format.ids import session_id_of
from ...format.jsonl import Entry
from ...work import Work
from ..base import Area, Cursor, FileChange, FsyncPolicy, HeldUpkeep, ListPage, ListQuery
from ..compat import Compat, omp_blob_folder, root_compat, session_compat, tool_of_folder
from ..held import HeldSessions
from ..ids import check_session_id, iso_now, new_session_id
from ..payload import BLOB_DIR, BlobStore
from .catalog import Catalog
from .layout import Layout

if TYPE_CHECKING:
    from ..session import LoadReport, Session
    from ..usage import Erased, SessionFile, StoreUsage
    from . import cache
    from .session import FileSession

# The session handle (store/session.py, files/session.py: its tree, its appends, its writer, its tree
# cache) is imported by the methods that make or load one, not here: a store is made, and lists, before
# any session is, and those modules were ~12 ms of a start-up to the first session/list.


def _blob_store(root: Path, compat: Compat) -> BlobStore:
    """Where images are stored (oh-my-pi's compatibility) and looked up (always, for files written before)."""
    ours, omps = root / BLOB_DIR, omp_blob_folder(root)
    if compat == "omp":
        return BlobStore(root, omps, also_read=(ours,))
    return BlobStore(root, also_read=(omps,) if tool_of_folder(root) == "omp" else ())


class FileStore(HeldSessions["FileSession"]):
    """``SessionStore`` over pi's session files (see store/base.py)."""

    def __init__(self, root: Path, settings: Settings, context_for_cache: cache.ContextForCache | None = None) -> None:
        super().__init__()
        self.layout = Layout(root)
        self.root = self.layout.root
        # The tool the files must stay readable by (store/compat.py): where images and names go.
        self.compat: Compat = root_compat(self.root, settings.store.compat)
        if settings.store.compat is None:  # the effective value, as initialize answers it
            settings = msgspec.structs.replace(
                settings, store=msgspec.structs.replace(settings.store, compat=self.compat)
            )
        self.settings = settings
        self.blobs = _blob_store(self.root, self.compat)
        self.catalog = Catalog(self.layout, self.compat)
        # What a tree cache keeps of a session's context (None: no context is kept, only the tree).
        self.context_for_cache: cache.ContextForCache = context_for_cache or (lambda session: None)

    @property
    def fsync_policy(self) -> FsyncPolicy:
        return FsyncPolicy(self.settings.store.fsync)

    # -- held sessions -------------------------------------------------------------

    def is_current(self, session_id: str, turn: int | None = None) -> bool:
        session = self.held(session_id)
        # Asked just before a call on the session runs (the rpc layer's inline test): that call's
        # own follow check takes this answer (follow.py, ``before_call``).
        return (
            session is not None
            and session.writer.error is None
            and not session.changed_behind(before_call=True, turn=turn)
        )

    def live(self, session_id: str, wait: bool = True) -> tuple[Session, FileChange | None]:
        """A held session caught up with its file (another program may have written it: store/files/follow.py),
        or the session's file loaded. A session whose write failed answers with that error until it is
        opened again, so memory never runs ahead of disk."""
        found = self.held(session_id)
        if found is not None:
            found.writer.check()
            return found, self.follow(found, wait)
        check_session_id(session_id)
        path = self.layout.find(session_id)
        if path is None:
            raise SessionNotFound(
                f"no session {session_id!r} below {self.root}; create it, or check the id with session/list",
                sessionId=session_id,
            )
        return self._load(path)[0], None

    def follow(self, session: Session, wait: bool = True) -> FileChange | None:
        session.on_follow = self._followed  # (a forked session is made without it)
        return session.follow(wait)  # what it found reaches _followed

    def _followed(self, session: Session, change: FileChange) -> None:
        if change.reloaded is not None or change.header_changed:
            self.catalog.refresh(session.path)
        elif change.appended:
            self.catalog.appended(session, change.appended)
        if self.on_change is not None:
            self.on_change(session, change)

    def _appended(self, session: Session, entries: list[Entry]) -> None:
        """A batch reached the file: the listing and the service's watchers follow."""
        if self.on_append is not None:
            self.on_append(session)
        self.catalog.appended(session, entries)

    def open(self, session_id: str | None, location: str | None, read_only: bool) -> tuple[Session, LoadReport]:
        from ..session import LoadReport

        if session_id is not None:
            check_session_id(session_id)
            session = self.held(session_id)
            if session is not None and session.writer.error is None and (read_only or not session.read_only):
                self.follow(session)
                return session, LoadReport(0, None)
            if session is not None:  # its last write failed (or it was read-only): read the file again
                with self._lock:
                    self._open.pop(session.id, None)
                session.close()
            path = self.layout.find(session_id)
            if path is None:
                raise SessionNotFound(f"no session {session_id!r} below {self.root}", sessionId=session_id)
        else:
            path = self.resolve_location(location)  # type: ignore[arg-type]  # location is given when session_id is not (open's params)
            if not path.is_file():
                raise SessionNotFound(f"no session file at {path}", path=str(path))
        return self._load(path, read_only)

    def resolve_location(self, raw: str) -> Path:
        path = Path(raw).expanduser()
        if not path.is_absolute():
            path = self.root / path
        if not self.settings.store.allowExternalPaths:
            self.layout.check_inside(path)
        return path

    def _load(self, path: Path, read_only: bool = False) -> tuple[Session, LoadReport]:
        from ..session import LoadReport
        from .session import FileSession

        # Already open here: loading again would collide with our own lock.
        with self._lock:
            resolved = path.resolve()
            here = next((s for s in self._open.values() if s.path == path or s.path.resolve() == resolved), None)
            if here is not None and here.writer.error is None and (read_only or not here.read_only):
                return here, LoadReport(0, None)
            if here is not None:  # failed or read-only, and a writable one is asked for
                self._open.pop(here.id, None)
                here.close()
        try:
            session, report = FileSession.load(path, self.fsync_policy, read_only, cache_root=self.root)
        except FileNotFoundError:
            raise SessionNotFound(f"no session file at {path}", path=str(path)) from None
        with self._lock:
            existing = self._open.get(session.id)
            if existing is not None:
                session.close()  # drops the lock this load took: the open one holds its own
                if existing.path.resolve() != path.resolve():
                    raise InvalidState(
                        f"a session with id {session.id} is already open from {existing.path}; close it first",
                        sessionId=session.id,
                        path=str(path),
                    )
                return existing, report
            self._hold(session)
        return session, report

    def _hold(self, session: FileSession) -> None:
        """Give a session its compatibility (images to the blob store only for oh-my-pi's) and hold it."""
        session.compat = session_compat(session.path, self.root, self.compat)
        session.blobs = self.blobs if session.compat == "omp" else None
        session.redact_entry = self.redact_entry if self.settings.store.redactOnAppend else None
        session.on_append = self._appended
        session.on_follow = self._followed
        self._open[session.id] = session

    def create(self, cwd: str, session_id: str | None, parent_session: str | None, persist: bool) -> Session:
        from .session import FileSession
        from .titles import new_file_prefix

        session_id = check_session_id(session_id) if session_id is not None else new_session_id()
        with self._lock:
            if session_id in self._open or self.layout.find(session_id) is not None:
                raise SessionExists(
                    f"session {session_id} already exists; open it or pick another id", sessionId=session_id
                )
            timestamp = iso_now()
            path = self.layout.new_session_path(cwd, timestamp, session_id)
            prefix = new_file_prefix(timestamp) if session_compat(path, self.root, self.compat) == "omp" else b""
            session = FileSession.new(path, session_id, cwd, self.fsync_policy, parent_session, timestamp, prefix)
            session.in_memory = not persist
            self._hold(session)
        return session

    def copy(self, source: Session, entries: list[Entry], labels: list[dict[str, object]], cwd: str) -> Session:
        from .session import FileSession
        from .titles import fork_prefix

        new_id = new_session_id()
        timestamp = iso_now()
        new_path = self.layout.new_session_path(cwd, timestamp, new_id)
        omp = session_compat(new_path, self.root, self.compat) == "omp"
        forked = FileSession.copied(
            new_path,
            new_id,
            cwd,
            self.fsync_policy,
            entries,
            parent_session=source.id,
            timestamp=timestamp,
            prefix=fork_prefix(source, timestamp) if omp else b"",
        )
        if labels:
            forked.append(labels)
        forked.on_append = self._appended
        if forked.persisted:
            self.catalog.refresh(forked.path)
        with self._lock:
            self._hold(forked)
        return forked

    def import_session(
        self,
        session_id: str,
        cwd: str,
        timestamp: str,
        header_fields: Mapping[str, object],
        objs: list[dict[str, object]],
        write: bool = True,
    ) -> tuple[str, bool]:
        """An imported session: (its location, True) once written in one go, or (the location of the one
        there already, False); nothing is written then, nor when ``write`` is false ("", False)."""
        from ..encoded import stored_entries
        from .session import FileSession
        from .titles import new_file_prefix

        with self._lock:
            found = self.layout.find(check_session_id(session_id))
            if session_id in self._open or found is not None:
                return str(found or self._open[session_id].path), False
            if not write or not objs:
                return "", False
            path = self.layout.new_session_path(cwd, timestamp, session_id)
            omp = session_compat(path, self.root, self.compat) == "omp"
            entries = stored_entries(objs, self.blobs if omp else None)
            session = FileSession.copied(
                path,
                session_id,
                cwd,
                self.fsync_policy,
                entries,
                timestamp=timestamp,
                prefix=new_file_prefix(timestamp) if omp else b"",
                header_fields=header_fields,
                owned=True,
            )
        try:
            self.catalog.appended(session, entries)
        finally:
            session.close()
        return str(path), True

    def recent(self, cwd: str, preferred: str | None) -> Iterator[tuple[Session, LoadReport, bool]]:
        if preferred is not None:
            try:
                yield (*self._load(Path(preferred)), True)
            except (DamagedFile, SessionNotFound, InvalidState):
                pass  # fall back to the newest of the cwd
        folder = self.layout.cwd_dir(cwd)
        candidates = []
        for path in self.layout.session_files(folder):
            try:
                candidates.append((path.stat().st_mtime_ns, path))
            except OSError:
                continue
        for _, path in sorted(candidates, reverse=True):
            if self.compat == "omp" and self.catalog.stub(path):
                continue  # as oh-my-pi 18.3's continueRecent (findMostRecentNonEmptySession); a breadcrumb still wins
            try:
                session, report = self._load(path)
            except (DamagedFile, SessionNotFound, InvalidState):
                continue
            self.follow(session)  # (it may have been open already, and written by another program since)
            yield session, report, False

    def append_syncs(self, session_id: str, roles: AbstractSet[str]) -> bool:
        session = self.held(session_id)
        if session is None:
            return True
        policy = session.writer.policy
        if not session.persisted:
            return bool(roles & {"user", "assistant"})  # the first user or assistant message creates the file
        if policy is FsyncPolicy.ASSISTANT:
            return "assistant" in roles
        return policy is FsyncPolicy.ALWAYS

    def _closing(self, session: Session) -> None:
        from . import cache
        from .session import FileSession

        assert isinstance(session, FileSession)  # (every session this store holds is one)
        cache.save(self.root, session, self.context_for_cache)

    # -- names and moves -------------------------------------------------------------

    def session_id_at(self, location: str) -> str | None:
        # The file's name holds the id (pi's <timestamp>_<id>.jsonl).
        return session_id_of(Path(location))

    def location(self, session: Session) -> str:
        return "" if session.in_memory else str(session.path)

    def location_of_terminal(self, session: Session) -> Path | None:
        return None if session.in_memory else session.path

    def renamed(self, session: Session) -> None:
        if session.persisted:
            self.catalog.refresh(session.path)  # the title line changed in place: read the file's row again

    def move(self, session_id: str, from_area: Area | None, to: Area) -> str:
        from . import moves

        return str(moves.move_area(self, session_id, from_area, to))

    def move_cwd(self, session_id: str, cwd: str) -> str:
        from . import moves

        return moves.move_cwd(self, session_id, cwd)

    def reload(self, path: Path) -> None:
        self._load(path)

    # -- listing (catalog.py) -------------------------------------------------------

    def list(self, query: ListQuery, work: Work) -> ListPage:
        return self.catalog.list(query, work, self.held_sessions())

    def decode_cursor(self, cursor: str) -> Cursor | None:
        return self.catalog.decode_cursor(cursor)

    def reindex(self) -> int:
        return self.catalog.reindex()

    # -- upkeep: what the files below the root hold (read from the file system alone) -----

    def usage(self, find_unreferenced: bool) -> StoreUsage:
        from ..index.sqlite import INDEX_DIR
        from .usage import measure

        return measure(self.layout, list(self.blobs.folders), self.root / INDEX_DIR, find_unreferenced)

    def pinned(self, found: SessionFile) -> bool:
        from .usage import is_pinned

        return is_pinned(found.path)

    def empty_trash(self, older_than_s: int | None, now_ns: int, dry_run: bool) -> Erased:
        from .trash import empty_trash

        return empty_trash(self.layout, older_than_s, now_ns, dry_run)

    def collect_blobs(self, dry_run: bool) -> Erased:
        from .trash import collect_blobs

        return collect_blobs(self.layout, list(self.blobs.folders), dry_run)

    def upkeep_held(self, held: builtins.list[HeldUpkeep]) -> AbstractContextManager[None]:
        return self.catalog.upkeep_held(held)

    def run_upkeep(self, held: builtins.list[HeldUpkeep]) -> None:
        self.catalog.run_upkeep(held)
