"""The storage seam: what a backend must do for the service.

``sidecar/service/`` maps the protocol's methods onto these operations and
knows nothing of where sessions live. The embedded default is the file store
(``store/files/``: pi's JSONL files below a sessions root); another backend
implements the same two interfaces:

- ``SessionStore``: the sessions this process holds (the one-writer rule,
  read-only openers), creating, opening, copying (forks), releasing, moving
  between the live area, the archive and the trash, listing and search, blobs,
  and the upkeep of whatever serves the listing.
- ``Durability``: the point where an acknowledged batch is safe. An append
  may leave its sync to the caller (a group sync of the batches queued on one
  session); the caller asks the durability point the append went to, never the
  session it belongs to now, since a session can be opened again meanwhile.

The in-memory ``Session`` (store/session.py: its tree, leaf, labels and id
rules) is the same for every backend: a backend supplies its lines and the
writer that makes them durable.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from .changes import FileChange as FileChange  # (named here too: the seam's terms)
from .changes import Reason as Reason
from .durability import FsyncPolicy as FsyncPolicy

if TYPE_CHECKING:
    from ..config import Settings
    from ..errors import StorageError
    from ..format.jsonl import Entry
    from ..work import Work
    from .compat import Compat
    from .payload import Blobs
    from .session import LoadReport, Session
    from .usage import Erased, SessionFile, StoreUsage


# Where a session is: listed, archived (listed on request) or in the trash (restorable, never listed).
Area = Literal["live", "archive", "trash"]


class Durability(Protocol):
    """Where appended lines become durable (the file writer; a database transaction)."""

    @property
    def sync_pending(self) -> bool:
        """An append left its sync to ``sync_deferred``."""
        ...

    def sync_deferred(self) -> None:
        """Make every batch appended so far durable (raises the store's StorageError)."""
        ...


class EntryWriter(Durability, Protocol):
    """One session's append-only lines. ``append`` writes one batch wholly or not at all."""

    @property
    def error(self) -> StorageError | None:
        """A failed write latches here: every later call answers it until the session is opened again."""
        ...

    def check(self) -> None: ...

    def create(self, data: bytes, durable: bool = True) -> None: ...

    def append(self, lines: list[bytes], durable: bool, defer_sync: bool = False) -> int: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


@dataclass(slots=True)
class Listed:
    """One session of a listing page: the fields ``session/list`` answers with.

    ``location`` is what results call ``path``: a file for the file store, an
    address for a store with no files.
    """

    session_id: str
    location: str
    cwd: str
    created: str
    modified_ms: int
    message_count: int
    first_message: str | None
    tokens_total: int
    tokens_last: int
    name: str | None
    title: str | None
    parent_session: str | None
    archived: bool
    snippet: str | None = None
    in_memory: bool = False


# A decoded listing cursor, each store's own (its decode_cursor's): the sort key of the last session of the
# page before for the file store and PostgreSQL, an offset into the listing for the spec store.
Cursor = tuple[int, str] | int


def key_cursor(after: Cursor | None) -> tuple[int, str] | None:
    """``after`` as the sort key a store that pages by one decoded it to (an offset is another store's)."""
    if isinstance(after, int):
        raise TypeError(f"the cursor {after!r} is an offset, not a sort key")
    return after


@dataclass(slots=True)
class ListQuery:
    cwd: str | None
    all: bool
    include_archived: bool
    query: str | None
    limit: int
    after: Cursor | None  # a decoded cursor (the store's own), None for the first page


# A batch appended to a file whose listing upkeep is held (upkeep_held) for run_upkeep:
# (the file, its listed area: "" or "archive", the appended entries).
HeldUpkeep = tuple[Path, str, "list[Entry]"]


@dataclass(slots=True)
class ListPage:
    sessions: list[Listed]
    next_cursor: str | None


@runtime_checkable
class SessionStore(Protocol):
    """Everything the service needs of a backend.

    Upkeep of a store's bytes (``session/stats``, ``session/prune``, ``empty-trash``) is each store's,
    in the same terms (store/usage.py's ``StoreUsage`` and ``Erased``).
    """

    settings: Settings
    # The tool the sessions must stay readable by (pi or oh-my-pi): where images and names go.
    compat: Compat
    # What the store tells the service, set by it (every store keeps them as held.py's HeldSessions does):
    # another program changed a held session, a batch reached the store, a session was let go of, a
    # session fell behind another host's writes; and what an appended entry passes through first.
    on_change: Callable[[Session, FileChange], None] | None
    on_append: Callable[[Session], None] | None
    on_release: Callable[[str], None] | None
    on_behind: Callable[[str], None] | None
    redact_entry: Callable[[dict[str, object]], dict[str, object]] | None

    @property
    def blobs(self) -> Blobs:
        """Where images of appended entries go (payload.py's ``BlobStore`` below a root, a table in PostgreSQL)."""
        ...

    # Where sessions, indexes and the prompt history live on this host (a folder for every store:
    # the prompt history, terminal breadcrumbs and snapshots are kept there).
    root: Path

    # -- sessions held by this process --------------------------------------
    def held(self, session_id: str) -> Session | None:
        """The session if this process holds it (open, in memory), else None."""
        ...

    def is_current(self, session_id: str, turn: int | None = None) -> bool:
        """Held, its last write did not fail, and nothing else changed it: calls on it need no read.

        Asked just before a call on the session runs; an implementation may let that call's own
        check of the file take this answer (the file store does, see store/files/follow.py). ``turn``
        numbers the step of the caller's event loop (requests read together): within one, a
        check need not be repeated while only this process wrote since."""
        ...

    def live(self, session_id: str, wait: bool = True) -> tuple[Session, FileChange | None]:
        """The session, opened when not held, caught up with what others wrote (and what that was)."""
        ...

    def follow(self, session: Session, wait: bool = True) -> FileChange | None:
        """Catch a held session up with what others wrote since it last looked."""
        ...

    def forget(self, session_id: str) -> Session | None:
        """Stop holding a session that was never written (nothing to close or move)."""
        ...

    def open(self, session_id: str | None, location: str | None, read_only: bool) -> tuple[Session, LoadReport]:
        """Open by id or by location; a writable open takes the one-writer lock (SessionLocked when held)."""
        ...

    def create(self, cwd: str, session_id: str | None, parent_session: str | None, persist: bool) -> Session: ...

    def copy(self, source: Session, entries: list[Entry], labels: list[dict[str, object]], cwd: str) -> Session:
        """A new session holding ``entries`` (a connected path) then ``labels`` (forks)."""
        ...

    def import_session(
        self,
        session_id: str,
        cwd: str,
        timestamp: str,
        header_fields: Mapping[str, object],
        objs: list[dict[str, object]],
        write: bool = True,
    ) -> tuple[str, bool]:
        """Write an imported session (whole entries, parents first) in one go: (location, True); or the
        location of the session there already with that id and False (nothing written)."""
        ...

    def recent(self, cwd: str, preferred: str | None) -> Iterable[tuple[Session, LoadReport, bool]]:
        """Sessions of ``cwd`` to continue, the preferred one (a terminal's last) first, newest next;
        each with what loading found and whether it is the preferred one."""
        ...

    def release(self, session_id: str) -> Session:
        """Close a held session: its lock or lease is given up (SessionNotFound when not held)."""
        ...

    def close_all(self) -> builtins.list[Session]: ...

    def durability_of(self, session_id: str) -> Durability | None: ...

    def append_syncs(self, session_id: str, roles: AbstractSet[str]) -> bool:
        """An append of messages with these roles would wait for the disk (or the network)."""
        ...

    # -- names and moves -------------------------------------------------------
    def session_id_at(self, location: str) -> str | None:
        """The session id a location names, when it can be told without reading it."""
        ...

    def renamed(self, session: Session) -> None:
        """The session's name changed in place (the listing follows)."""
        ...

    def move(self, session_id: str, from_area: Area | None, to: Area) -> str:
        """Archive, unarchive, restore, or trash (``from_area`` None: live or archived); returns the new location."""
        ...

    def move_cwd(self, session_id: str, cwd: str) -> str:
        """Give a session another project folder; returns the new location."""
        ...

    def location(self, session: Session) -> str:
        """What results call ``path`` ("" for a session that is never written)."""
        ...

    # -- listing ---------------------------------------------------------------
    def list(self, query: ListQuery, work: Work) -> ListPage: ...

    def decode_cursor(self, cursor: str) -> Cursor | None:
        """A cursor this store gave out, decoded; None when it is not one."""
        ...

    def reindex(self) -> int: ...

    def upkeep_held(self, held: builtins.list[HeldUpkeep]) -> AbstractContextManager[None]:
        """Within the block, listing upkeep of this thread's appends is held for ``run_upkeep``."""
        ...

    def run_upkeep(self, held: builtins.list[HeldUpkeep]) -> None: ...

    # -- upkeep: session/stats, session/prune ------------------------------------
    def usage(self, find_unreferenced: bool) -> StoreUsage:
        """What the store holds: every session (live, archived, trashed) with its bytes as a pi file, the
        blobs, the index; with ``find_unreferenced``, the blobs no session (in any area) refers to."""
        ...

    def pinned(self, found: SessionFile) -> bool:
        """The session has a name or a label now: retention policies leave it alone unless told otherwise."""
        ...

    # -- upkeep that erases: empty-trash (and --blobs) --------------------------------
    def empty_trash(self, older_than_s: int | None, now_ns: int, dry_run: bool) -> Erased:
        """Erase trashed sessions (trashed longer ago than ``older_than_s``, when given) with the files kept
        beside them; one held by another sidecar is kept and listed in ``skipped``."""
        ...

    def collect_blobs(self, dry_run: bool) -> Erased:
        """Erase the blobs no session (live, archived or trashed) refers to, past their grace hour; a crash
        halfway, or an append racing it, never leaves a reference to a blob that is gone."""
        ...


# The hook a store calls with what another program did to a held session (the service fans it out).
ChangeHook = Callable[["Session", "FileChange"], None]
