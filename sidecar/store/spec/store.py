"""``SessionStore`` over a spec-format root (store/base.py): one folder per session, ``<root>/<ULID>/``.

What differs from the file store: ids are ULIDs (checked before any path is
made), a session is created on disk at once (S7.1), nothing follows another
program's appends, metadata.json is the listing (no index), archive and trash
move the folder, a fork copies the records up to an entry, and there is no
working folder to move a session to.
"""

from __future__ import annotations

import builtins
import contextlib
import os
from collections.abc import Iterator, Mapping
from collections.abc import Set as AbstractSet
from pathlib import Path

import msgspec

from ...config import Settings
from ...errors import InvalidParams, InvalidState, SessionExists, SessionNotFound, StorageError
from ...format.jsonl import Entry
from ...work import Work
from ..base import Area, Cursor, FileChange, FsyncPolicy, HeldUpkeep, Listed, ListPage, ListQuery
from ..compat import Compat
from ..files.lock import lock_path, unlock
from ..files.writer import DIR_MODE
from ..held import HeldSessions
from ..ids import iso_now
from ..payload import BlobStore
from ..session import LoadReport, Session
from ..usage import Erased, SessionFile, StoreUsage
from .codec import iso_to_ms
from .convert import records_up_to
from .layout import ARCHIVE_DIR, SESSION_FILE, TRASH_DIR, SpecLayout, check_ulid, new_ulid
from .listing import read_listing
from .metadata import new_metadata
from .session import SpecSession, cannot_hold
from .writer import SpecWriter

_AREA_DIRS: dict[str, str | None] = {"live": None, "archive": ARCHIVE_DIR, "trash": TRASH_DIR}
_CURSOR = "spec:"


class SpecStore(HeldSessions[SpecSession]):
    def __init__(self, root: Path, settings: Settings) -> None:
        super().__init__()
        self.spec = SpecLayout(root)
        self.root = root
        # Images have no place in the format (refused), so there is no blob folder to keep.
        self.compat: Compat = "pi"
        self.settings = msgspec.structs.replace(settings, store=msgspec.structs.replace(settings.store, compat="pi"))
        self.blobs = BlobStore(root)

    @property
    def fsync_policy(self) -> FsyncPolicy:
        return FsyncPolicy(self.settings.store.fsync)

    # -- held sessions -------------------------------------------------------------

    def _check_id(self, session_id: str) -> None:
        check_ulid(session_id)

    def import_session(
        self,
        session_id: str,
        cwd: str,
        timestamp: str,
        header_fields: Mapping[str, object],
        objs: list[dict[str, object]],
        write: bool = True,
    ) -> tuple[str, bool]:
        """session/import writes pi sessions: their trees, subagent branches and custom entries are what
        this format cannot hold, so an import is refused here before anything is read into it."""
        from ...errors import FormatCannotHold

        raise FormatCannotHold(
            "session/import writes pi-format sessions (branches, subagents, custom entries), which a spec-format "
            "root cannot hold; import into a pi root, then copy a session here with session/convert",
            format="spec",
        )

    def is_current(self, session_id: str, turn: int | None = None) -> bool:
        session = self.held(session_id)
        return session is not None and session.writer.error is None

    def live(self, session_id: str, wait: bool = True) -> tuple[Session, FileChange | None]:
        found = self.held(session_id)
        if found is not None:
            found.writer.check()
            return found, None
        located = self.spec.find(session_id)
        if located is None:
            raise SessionNotFound(
                f"no session {session_id!r} below {self.root}; create it, or check the id with session/list",
                sessionId=session_id,
            )
        return self._load(located[0])[0], None

    def follow(self, session: Session, wait: bool = True) -> FileChange | None:
        return None  # another program's appends are not followed (store/spec/session.py)

    def open(self, session_id: str | None, location: str | None, read_only: bool) -> tuple[Session, LoadReport]:
        if session_id is not None:
            check_ulid(session_id)
            session = self.held(session_id)
            if session is not None and session.writer.error is None and (read_only or not session.read_only):
                return session, LoadReport(0, None)
            located = self.spec.find(session_id)
            if located is None:
                raise SessionNotFound(f"no session {session_id!r} below {self.root}", sessionId=session_id)
            return self._load(located[0], read_only)
        return self._load(self.resolve_location(location), read_only)  # type: ignore[arg-type]  # location is given when session_id is not (open's params)

    def resolve_location(self, raw: str) -> Path:
        """A session folder (or its session.jsonl) named by a client; outside the root only when allowed."""
        path = Path(raw).expanduser()
        if not path.is_absolute():
            path = self.root / path
        if not self.settings.store.allowExternalPaths:
            from ..files.layout import Layout

            Layout(self.root).check_inside(path)
        return path.parent if path.name == SESSION_FILE else path

    def _load(self, folder: Path, read_only: bool = False) -> tuple[Session, LoadReport]:
        check_ulid(folder.name)
        with self._lock:
            here = self._open.get(folder.name)
            if here is not None and here.writer.error is None and (read_only or not here.read_only):
                return here, LoadReport(0, None)
            if here is not None:  # failed or read-only, and a writable one is asked for
                self._open.pop(here.id, None)
                here.close()
        if not (folder / SESSION_FILE).is_file():
            raise SessionNotFound(f"no spec session at {folder}", path=str(folder))
        session, report = SpecSession.load(folder, self.fsync_policy, read_only)
        with self._lock:
            self._hold(session)
        return session, report

    def _hold(self, session: SpecSession) -> None:
        session.on_append = self._appended
        self._open[session.id] = session

    def _appended(self, session: Session, entries: list[Entry]) -> None:
        if self.on_append is not None:
            self.on_append(session)

    def create(
        self,
        cwd: str,
        session_id: str | None,
        parent_session: str | None,
        persist: bool,
        source: str | None = None,
        cron_job_id: str | None = None,
    ) -> Session:
        session_id = check_ulid(session_id) if session_id is not None else new_ulid()
        source = source or ("cron" if cron_job_id is not None else "interactive")
        if source == "interactive" and cron_job_id is not None:
            raise InvalidParams('cronJobId goes with source "cron"', field="cronJobId")
        metadata = new_metadata(session_id, iso_now(), source=source, cron_job_id=cron_job_id)
        folder = self.spec.folder(session_id)
        with self._lock:
            if session_id in self._open or self.spec.find(session_id, (None, ARCHIVE_DIR, TRASH_DIR)) is not None:
                raise SessionExists(
                    f"session {session_id} already exists; open it or pick another id", sessionId=session_id
                )
            if persist:
                session: SpecSession = SpecSession.create(folder, metadata, self.fsync_policy)
            else:
                session = SpecSession(folder, metadata, SpecWriter(folder, self.fsync_policy, exists=True))
                session.in_memory = True
            self._hold(session)
        return session

    def copy(self, source: Session, entries: list[Entry], labels: list[dict[str, object]], cwd: str) -> Session:
        """A fork: a new session holding the records of ``entries`` (a spec session has no labels)."""
        new_id = new_ulid()
        name = source.metadata.name if isinstance(source, SpecSession) else None
        forked = SpecSession.create(
            self.spec.folder(new_id), new_metadata(new_id, iso_now(), name=name), self.fsync_policy
        )
        objs = records_up_to(entries)
        if objs:
            forked.append(objs)
        with self._lock:
            self._hold(forked)
        return forked

    def recent(self, cwd: str, preferred: str | None) -> Iterator[tuple[Session, LoadReport, bool]]:
        """The terminal's last session, then the newest by lastMessageAt (spec sessions have no cwd to pick by)."""
        if preferred is not None:
            try:
                yield (
                    *self._load(Path(preferred).parent if preferred.endswith(SESSION_FILE) else Path(preferred)),
                    True,
                )
            except (SessionNotFound, InvalidState, StorageError):
                pass
        for listed in read_listing(self.spec, (None,)):
            try:
                session, report = self._load(listed.folder)
            except (SessionNotFound, InvalidState, StorageError):
                continue
            yield session, report, False

    def append_syncs(self, session_id: str, roles: AbstractSet[str]) -> bool:
        return True  # every append renames metadata.json: never a call to run on the event loop

    # -- names and moves -------------------------------------------------------------

    def session_id_at(self, location: str) -> str | None:
        path = Path(location)
        name = path.parent.name if path.name == SESSION_FILE else path.name
        try:
            return check_ulid(name)
        except Exception:
            return None

    def renamed(self, session: Session) -> None:
        pass  # the name is in metadata.json, written with the append that set it

    def location(self, session: Session) -> str:
        return "" if session.in_memory else str(session.folder)  # type: ignore[attr-defined]  # this store holds SpecSessions only

    def move(self, session_id: str, from_area: Area | None, to: Area) -> str:
        check_ulid(session_id)
        verb = {"archive": "archive", "trash": "delete", "live": "unarchive" if from_area == "archive" else "restore"}[
            to
        ]
        areas = (None, ARCHIVE_DIR) if from_area is None else (_AREA_DIRS[from_area],)
        with self._lock:
            located = self.spec.find(session_id, areas)
            if located is None:
                where = {
                    None: "among live or archived sessions",
                    "live": "among live sessions",
                    "archive": "in the archive",
                    "trash": "in the trash",
                }[from_area]
                raise SessionNotFound(f"cannot {verb}: no session {session_id!r} {where}", sessionId=session_id)
            source = located[0]
            target = self.spec.folder(session_id, _AREA_DIRS[to])
            if target.exists():
                raise SessionExists(f"cannot {verb}: {target} already exists", path=str(target))
            session = self._open.pop(session_id, None)
            if session is not None:
                if self.on_release is not None:
                    self.on_release(session_id)
                session.close()
            held = lock_path(source / SESSION_FILE)  # another sidecar writing it keeps it where it is
            try:
                os.makedirs(target.parent, mode=DIR_MODE, exist_ok=True)
                os.rename(source, target)
            except OSError as exc:
                raise StorageError(f"could not {verb} {source}: {exc.strerror or exc}", path=str(source)) from exc
            finally:
                unlock(held)
            return str(target)

    def move_cwd(self, session_id: str, cwd: str) -> str:
        raise cannot_hold("a working folder (session/move)", session_id)

    # -- listing: metadata.json of every folder, newest message first (S7.5) ---------------

    def list(self, query: ListQuery, work: Work) -> ListPage:
        areas = (None, ARCHIVE_DIR) if query.include_archived else (None,)
        found = read_listing(self.spec, areas)
        if query.query:
            needle = query.query.lower()
            found = [s for s in found if needle in (s.metadata.name or "").lower() or needle in s.first_message.lower()]
        start = query.after if isinstance(query.after, int) else 0  # (its own cursors are offsets)
        page = found[start : start + query.limit]
        sessions = [
            Listed(
                session_id=s.metadata.id,
                location=str(s.folder),
                cwd="",
                created=s.metadata.createdAt,
                modified_ms=iso_to_ms(s.metadata.lastMessageAt) or 0,
                message_count=s.metadata.messageCount,
                first_message=s.first_message,
                tokens_total=s.metadata.metrics.totalTokens if s.metadata.metrics else 0,
                tokens_last=0,
                name=s.metadata.name,
                title=s.metadata.name,
                parent_session=None,
                archived=s.area == ARCHIVE_DIR,
            )
            for s in page
        ]
        more = start + query.limit < len(found)
        return ListPage(sessions=sessions, next_cursor=f"{_CURSOR}{start + query.limit}" if more else None)

    def decode_cursor(self, cursor: str) -> Cursor | None:
        offset = cursor[len(_CURSOR) :] if cursor.startswith(_CURSOR) else ""
        return int(offset) if offset.isdigit() else None

    def reindex(self) -> int:
        return 0  # metadata.json is the listing

    def usage(self, find_unreferenced: bool) -> StoreUsage:
        raise InvalidParams(
            "session/stats and session/prune cover pi-format sessions (files below a root, or "
            "PostgreSQL); this sidecar keeps its sessions in the spec format"
        )

    def pinned(self, found: SessionFile) -> bool:
        self.usage(False)  # (refused, as session/stats is)
        return False

    def empty_trash(self, older_than_s: int | None, now_ns: int, dry_run: bool) -> Erased:
        raise InvalidParams(
            "empty-trash covers pi-format sessions (files below a root, or PostgreSQL); this "
            "sidecar keeps its sessions in the spec format"
        )

    def collect_blobs(self, dry_run: bool) -> Erased:
        return self.empty_trash(None, 0, dry_run)

    def upkeep_held(self, held: builtins.list[HeldUpkeep]) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def run_upkeep(self, held: builtins.list[HeldUpkeep]) -> None:
        pass
