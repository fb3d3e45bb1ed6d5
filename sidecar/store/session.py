"""The session handle, the same for every backend: its tree in memory, the rules of an append, its name.

A backend hands each session the writer its lines go to (``SessionWriting``) and
says how the session follows what others write; nothing here touches a file. The
file backend's session (files/session.py: reading pi files, the tree cache,
following another program) and PostgreSQL's (postgres/session.py) append JSONL
lines through a ``LineWriting`` writer (``LineSession``); the spec's folders
(spec/session.py) write records of their own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol

from ..errors import EntryNotFound, SidecarError, StorageError
from ..format.jsonl import Entry, serialize
from ..format.jsstr import session_name
from ..format.titleslot import TitleSlot
from ..format.version import CURRENT_VERSION
from .appending import UNSET, AddsBatches
from .batch import Redact
from .cached import CachedContext
from .changes import FileChange
from .compat import Compat
from .durability import FsyncPolicy
from .ids import iso_now
from .payload import Blobs
from .tree import SessionTree, TreeState


@dataclass(slots=True)
class LoadReport:
    """What an open found: lines that did not parse, and the version a file was migrated from."""

    parse_errors: int
    migrated_from: int | None


class SessionWriting(Protocol):
    """The writer a backend hands its sessions: where their lines go (``base.EntryWriter``'s part a session uses)."""

    @property
    def policy(self) -> FsyncPolicy: ...

    @property
    def exists(self) -> bool:
        """The session has been written (a first write creates it)."""
        ...

    @property
    def error(self) -> SidecarError | None:
        """A failed write (StorageError; PostgreSQL: a lease lost, SessionLocked) latches here: every later call answers it until the session is opened again."""
        ...

    @property
    def sync_pending(self) -> bool: ...

    def sync_deferred(self) -> None: ...

    def check(self) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


class LineWriting(SessionWriting, Protocol):
    """A writer of JSONL lines (a file, PostgreSQL's rows): a batch goes out in one write, wholly or not at all."""

    # Where a torn last line found on open starts (cut off before the next write), else None.
    torn_tail_at: int | None
    # Where the last write started (a file: another program's lines may have gone out just before).
    last_start: int

    def create(self, data: bytes, durable: bool = True) -> None: ...

    def append(
        self, lines: list[bytes], durable: bool, defer_sync: bool = False, expect_at: int | None = None
    ) -> int: ...


def new_header(session_id: str, cwd: str, parent_session: str | None = None, timestamp: str | None = None) -> Entry:
    """The header line of a session not written yet (pi's current version)."""
    header: dict[str, Any] = {
        "type": "session",
        "version": CURRENT_VERSION,
        "id": session_id,
        "timestamp": timestamp or iso_now(),
        "cwd": cwd,
    }
    if parent_session is not None:
        header["parentSession"] = parent_session
    return Entry.from_obj(header)


class Session(AddsBatches):
    """One open session. Reads answer from the tree; ``append`` checks a batch whole, then ``_persist``
    writes it (each backend its own way) before the tree keeps it."""

    # Told of every batch once its lines are on disk (the listing index listens).
    on_append: Callable[[Session, list[Entry]], None] | None = None
    # Told of what another writer did, once folded in (the store fans it out).
    on_follow: Callable[[Session, FileChange], None] | None = None
    # Whether another program's changes show up in a file here (inotify or a timer watches it);
    # a session whose changes come by other means (PostgreSQL's notices) is never polled.
    changes_on_disk: ClassVar[bool] = True
    # A run of pipelined appends may be written together (``start_run``): the file session's.
    runs_together: ClassVar[bool] = False

    def __init__(self, path: Path, header: Entry, writer: SessionWriting) -> None:
        self.path = path
        self.header = header
        self.writer = writer
        self._tree: SessionTree | None = SessionTree()
        self.id: str = header.id  # type: ignore[assignment]  # a header always holds its id (format/jsonl.py checks it)
        # buildContext at one leaf, kept with the session (the file store's tree cache); None: none kept.
        self.cached_context: CachedContext | None = None
        # What loading found.
        self.parse_errors = 0
        # How much of the session the tree describes (its length as a pi file).
        self.known_size = 0
        # Opened with readOnly: no lock is held and every write is refused.
        self.read_only = False
        # Where images of appended entries go (payload.py); None keeps them inline.
        self.blobs: Blobs | None = None
        # Created with persist: false: nothing is ever written (the tree is all there is).
        self.in_memory = False
        # The bytes before the header line (oh-my-pi's title slot), kept as they are.
        self.prefix = b""
        self.title_slot: TitleSlot | None = None
        self.title_fault: str | None = None
        # The tool this session must stay readable by (compat.py); the service sets it.
        self.compat: Compat = "pi"
        # store.redactOnAppend: each appended entry passes through this before it is written.
        self.redact_entry: Redact | None = None

    # -- reads -------------------------------------------------------------

    @property
    def tree(self) -> SessionTree:
        tree = self._tree
        assert tree is not None
        return tree

    @property
    def leaf_id(self) -> str | None:
        return self.tree.leaf_id

    @property
    def entry_count(self) -> int:
        return len(self.tree.entries)

    def dangling(self) -> list[str]:
        """Entries whose parent is not in the session (SessionTree.dangling)."""
        return self.tree.dangling()

    @property
    def info_name(self) -> str | None:
        """The last session_info's name (pi's)."""
        return self.tree.name

    @property
    def tree_loaded(self) -> bool:
        return self._tree is not None

    @property
    def persisted(self) -> bool:
        return self.writer.exists

    def header_obj(self) -> dict[str, Any]:
        return self.header.obj()

    def get(self, entry_id: str) -> Entry:
        entry = self.tree.by_id.get(entry_id)
        if entry is None:
            raise EntryNotFound(f"entry {entry_id!r} is not in session {self.id}", entryId=entry_id, sessionId=self.id)
        return entry

    def path_to(self, leaf_id: str | None) -> list[Entry]:
        if leaf_id is not None:
            self.get(leaf_id)
        return self.tree.path(leaf_id)

    # -- following another writer: nothing to follow unless the backend says so --------

    def follow(self, wait: bool = True) -> FileChange | None:
        """Catch up with what another writer did since the last look (None: nothing)."""
        return None

    def changed_behind(self, before_call: bool = False, turn: int | None = None) -> bool:
        """Another writer changed the session since the last look."""
        return False

    def settle_unfinished(self) -> bool:
        """Before a write: a last line another writer left unfinished is settled (True when one was)."""
        return False

    def _note_file(self) -> None:
        """Remember the session as loaded, to notice later changes behind our back."""

    def _saw_own_write(self) -> None:
        """Our own write went out: what we know of the session is current."""

    def _wrote(self, lines: list[bytes], fresh: bool) -> None:
        """Our own lines went out where we knew the session to end (``fresh``: it was just created)."""
        self._saw_own_write()

    def _interleaved_write(self) -> None:
        """Another writer's lines went out just before ours: read the session again at the next call."""

    # -- writes ------------------------------------------------------------

    def append(
        self,
        objs: list[dict[str, Any]],
        parent_id: Any = UNSET,
        defer_sync: bool = False,
        objs_out: list[dict[str, Any]] | None = None,
    ) -> list[Entry]:
        """Append a batch as a chain below ``parent_id`` (default: the leaf); the leaf moves to its end.

        An entry may carry its own ``id``, ``parentId`` and ``timestamp``;
        missing ones are assigned. The batch is validated whole before
        anything is written, and written in one go. With ``defer_sync`` an
        fsync the policy asks for is left to ``writer.sync_deferred``.
        ``objs_out`` receives each appended line as a dict (as written; not to be changed).
        """
        self.writer.check()
        self.check_writable()
        if not objs:
            return []
        self.settle_unfinished()
        previous_leaf, state = self.tree.leaf_id, self.tree.snapshot()
        prepared, prepared_objs = self.add_batch(objs, parent_id)
        try:
            self._persist(prepared, defer_sync)
        except BaseException:
            self.tree.remove_last(len(prepared), previous_leaf, state)
            raise
        if self.on_append is not None and self.writer.exists:
            self.on_append(self, prepared)
        if objs_out is not None:
            objs_out.extend(prepared_objs)
        return prepared

    def start_run(self) -> tuple[str | None, TreeState] | None:
        """Before a run of appends written together (``add_batch`` each, then ``persist_run``):
        what ``undo_run`` takes; None when this session cannot take one (then append one by one)."""
        if not self.runs_together or self.in_memory or not self.writer.exists:
            return None  # (the other stores write their own way; a first write creates the file)
        self.writer.check()
        self.check_writable()
        self.settle_unfinished()
        return self.tree.leaf_id, self.tree.snapshot()

    def persist_run(self, entries: list[Entry]) -> None:
        """Write the entries a run's batches added, in one write (the policy's fsync is not asked:
        the rpc layer runs appends that need one one at a time)."""
        if entries:
            self._persist(entries)

    def undo_run(self, count: int, before: tuple[str | None, TreeState]) -> None:
        """Take a run's ``count`` added entries out of the tree again (its write failed)."""
        self.tree.remove_last(count, before[0], before[1])

    def _persist(self, batch: list[Entry], defer_sync: bool = False) -> None:
        """Write a batch the tree holds already (each backend its own way)."""
        raise NotImplementedError

    def _create_file(self) -> None:
        """The first write: the header and every entry so far."""
        raise NotImplementedError

    def write_now(self) -> None:
        """Write the session now, conversation or not: pi writes a file once it holds a user or assistant
        message, but a session whose every entry must be kept (another tool's transcript lines, which
        may hold none) cannot wait for one."""
        self.writer.check()
        self.check_writable()
        if not self.in_memory and not self.writer.exists:
            self._create_file()
            if self.on_append is not None:
                self.on_append(self, list(self.tree.entries))

    def branch(self, entry_id: str | None) -> None:
        """Move the leaf only; None makes the next append a new root."""
        if entry_id is not None:
            self.get(entry_id)
        self.tree.leaf_id = entry_id

    def set_label(self, target_id: str, label: str | None) -> Entry:
        self.get(target_id)
        obj: dict[str, Any] = {"type": "label", "targetId": target_id}
        if label:
            obj["label"] = label
        return self.append([obj])[0]

    def set_name(self, name: str) -> Entry:
        """Name the session where the tool of its compatibility reads names (a title line is oh-my-pi's)."""
        if self.compat == "pi" and not self.prefix:
            return self.append([{"type": "session_info", "name": session_name(name)}])[0]
        return self._set_title(name)

    def _set_title(self, name: str) -> Entry:
        """oh-my-pi's name: its title line (the file session writes one)."""
        raise StorageError(f"session {self.id} keeps no title line: it is named as pi names it", sessionId=self.id)

    @property
    def name(self) -> str | None:
        """The session's name as the tool of its compatibility reads it (a title line is oh-my-pi's)."""
        return name_of(self, self.compat)

    def flush(self) -> None:
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()


class Titled(Protocol):
    """What a session's name is read from: pi's session_info entries, oh-my-pi's title line or header title."""

    prefix: bytes
    title_slot: TitleSlot | None

    @property
    def info_name(self) -> str | None: ...

    def header_obj(self) -> dict[str, Any]: ...


def name_of(session: Titled, compat: Compat) -> str | None:
    """The session's name as the tool of ``compat`` reads it (a file with a title line is oh-my-pi's)."""
    if compat == "omp" or session.prefix:
        if session.title_slot is not None:
            return session.title_slot.name
        title = session.header_obj().get("title")
        return title if isinstance(title, str) and title else None
    return session.info_name


class LineSession(Session):
    """A session whose entries go out as JSONL lines, one write a batch (the file and PostgreSQL stores)."""

    writer: LineWriting

    def __init__(self, path: Path, header: Entry, writer: LineWriting) -> None:
        super().__init__(path, header, writer)

    def _persist(self, batch: list[Entry], defer_sync: bool = False) -> None:
        if self.in_memory:
            return
        batch_has_assistant = any(e.type == "message" and e.role() == "assistant" for e in batch)
        if self.writer.exists:
            lines = [e.raw for e in batch]
            # A torn line found on load is cut off before the write (writer.py): the file ends there then.
            repaired = self.writer.torn_tail_at
            known = self.known_size if repaired is None else repaired
            offset = self.writer.append(lines, durable=batch_has_assistant, defer_sync=defer_sync, expect_at=known)
            for entry in batch:
                entry.offset, entry.length = offset, len(entry.raw)
                offset += entry.length + 1
            self.known_size = offset
            if repaired is not None:
                self._note_file()
            elif self.writer.last_start == known:
                self._wrote(lines, fresh=False)
            else:  # another program's lines went out just before ours: read the file again at the next call
                self._interleaved_write()
        elif self.tree.has_conversation:
            self._create_file()

    def _create_file(self) -> None:
        """Header and every entry so far in one write (forced to disk unless the policy leaves that to the OS)."""
        durable = self.writer.policy is not FsyncPolicy.NEVER
        self.writer.create(serialize(self.header, self.tree.entries, self.prefix), durable=durable)  # type: ignore[arg-type]  # serialize only reads the list
        offset = len(self.prefix) + len(self.header.raw) + 1
        for entry in self.tree.entries:
            entry.offset, entry.length = offset, len(entry.raw)
            offset += entry.length + 1
        self.known_size = offset
        self._wrote([self.header.raw, *(e.raw for e in self.tree.entries[-2:])], fresh=True)
