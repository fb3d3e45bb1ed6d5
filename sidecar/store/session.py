"""One open session: its tree in memory and its file on disk, kept in agreement.

Persistence is deferred as in pi 1.5: nothing is written until the session holds
a user or assistant message; then the header and every entry go out in one write, and
each later append is one write of its lines. Unlike pi, a file is never
written twice with a header (pi's duplicate-header bug), and an entry is only
in memory once its line is on disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ..errors import DamagedFile, EntryNotFound, InvalidState, StorageError
from ..format.entries import CURRENT_VERSION
from ..format.cycles import cycles_paused
from ..format.jsonl import Entry, LineSource, NotASession, parse_path, parse_tail, serialize
from ..format.migrate import migrate
from ..format.titleslot import TitleSlot, read_slot
from .files import titles
from .appending import UNSET, AddsBatches
from .compat import Compat
from .ids import iso_now
from .files.loading import LoadReport, from_cache, from_file
from .files.lock import lock_path, unlock
from .payload import BlobStore
from .tree import SessionTree
from .files import follow
from .files.treecache import CacheDamaged, CachedContext, FileStamp, TreeCache, tree_of
from .base import FsyncPolicy
from .files.writer import SessionWriter

class Session(follow.FollowsFile, AddsBatches):
    # Told of every batch once its lines are on disk (the listing index listens).
    on_append: Callable[["Session", list[Entry]], None] | None = None

    def __init__(self, path: Path, header: Entry, writer: SessionWriter) -> None:
        self.path = path
        self.header = header
        self.writer = writer
        # None while the session was opened from its tree cache and no call needed the tree yet.
        self._tree: SessionTree | None = SessionTree()
        self._cache: TreeCache | None = None
        self._source: LineSource | None = None
        self.id: str = header.id  # type: ignore[assignment]
        # The file as its tree cache last described it (None: no cache matches it).
        self.cache_stamp: FileStamp | None = None
        # buildContext at one leaf, kept with the tree cache.
        self.cached_context: CachedContext | None = None
        # What loading found (kept for the tree cache).
        self.parse_errors = 0
        # How much of the file the tree describes: a file longer than this at
        # close was appended to by someone else and gets no cache from us.
        self.known_size = 0
        # Opened with readOnly: no lock is held and every write is refused.
        self.read_only = False
        # Where images of appended entries go (payload.py); None keeps them inline.
        self.blobs: BlobStore | None = None
        # Created with persist: false: nothing is ever written (the tree is all there is).
        self.in_memory = False
        # The bytes before the header line (oh-my-pi's title slot), kept as they are.
        self.prefix = b""
        self.title_slot: TitleSlot | None = None
        self.title_fault: str | None = None
        # The tool this file must stay readable by (compat.py); the service sets it.
        self.compat: Compat = "pi"
        # store.redactOnAppend: each appended entry passes through this before it is written.
        self.redact_entry: Callable[[dict[str, Any]], dict[str, Any]] | None = None
        self._init_following()

    # -- construction ------------------------------------------------------

    @classmethod
    def new(
        cls,
        path: Path,
        session_id: str,
        cwd: str,
        policy: FsyncPolicy,
        parent_session: str | None = None,
        timestamp: str | None = None,
        prefix: bytes = b"",
    ) -> "Session":
        """A session not written yet; ``prefix`` goes before its header (oh-my-pi's title slot)."""
        header: dict[str, Any] = {
            "type": "session",
            "version": CURRENT_VERSION,
            "id": session_id,
            "timestamp": timestamp or iso_now(),
            "cwd": cwd,
        }
        if parent_session is not None:
            header["parentSession"] = parent_session
        session = cls(path, Entry.from_obj(header), SessionWriter(path, policy, exists=False))
        if prefix:
            session.prefix = prefix
            session.title_slot, session.title_fault = read_slot(prefix.rstrip(b"\n"))
        return session

    @classmethod
    def copied(
        cls,
        path: Path,
        session_id: str,
        cwd: str,
        policy: FsyncPolicy,
        entries: list[Entry],
        parent_session: str | None = None,
        timestamp: str | None = None,
        prefix: bytes = b"",
        header_fields: dict[str, Any] | None = None,
        owned: bool = False,
    ) -> "Session":
        """A new session holding ``entries`` byte for byte (a fork, an import); its file is
        written at once when they hold a user or assistant message, else deferred as usual.
        ``header_fields`` go into the header after pi's own (an import's ``importedFrom``).
        ``owned``: the entries were made for this session and belong to no other, so they
        go in as they are rather than as copies (an import's tens of thousands)."""
        session = cls.new(path, session_id, cwd, policy, parent_session, timestamp, prefix)
        if header_fields:
            session.header = Entry.from_obj({**session.header.obj(), **header_fields})
        add = session.tree.add
        for entry in entries:
            # A copy unless owned: offsets are per file, and the source session keeps reading its own.
            add(entry if owned else entry.detached())
        if session.tree.has_conversation:
            session._create_file()
        return session

    @classmethod
    def load(
        cls, path: Path, policy: FsyncPolicy, read_only: bool = False, cache_root: Path | None = None
    ) -> tuple["Session", LoadReport]:
        """Open a file: lock it, parse leniently, migrate (rewriting atomically, original kept), index.

        Read-only, no lock is taken and nothing is rewritten (a migration stays in memory).
        With ``cache_root``, a tree cache there that matches the file is used instead of parsing it.
        """
        lock_fd = None if read_only else lock_path(path)
        try:
            loaded = from_cache(cls, path, policy, read_only, cache_root) if cache_root is not None else None
            session, report = loaded or from_file(cls, path, policy, read_only)
        except BaseException:
            unlock(lock_fd)
            raise
        if session.writer.lock_fd is None:
            session.writer.lock_fd = lock_fd
        elif session.writer.lock_fd != lock_fd:
            unlock(lock_fd)
        session._note_file()
        return session, report

    # -- reads -------------------------------------------------------------

    @property
    def tree(self) -> SessionTree:
        """The tree, built from the tree cache the first time a call needs it."""
        tree = self._tree
        if tree is None:
            assert self._cache is not None and self._source is not None
            with cycles_paused():
                try:
                    tree = tree_of(self._cache, self._source)
                except CacheDamaged:
                    tree = self._parse_again()
            self._tree, self._cache = tree, None
        return tree

    def _parse_again(self) -> SessionTree:
        """The tree from the file itself, for a cache whose entries turned out damaged."""
        self.cache_stamp = None  # so that closing writes a sound cache
        tree = SessionTree()
        tree.add_parsed(parse_path(self.path).items)
        return tree

    @property
    def leaf_id(self) -> str | None:
        if self._tree is None:
            assert self._cache is not None
            return self._cache.leaf_id
        return self._tree.leaf_id

    @property
    def entry_count(self) -> int:
        if self._tree is None:
            assert self._cache is not None
            return self._cache.entry_count
        return len(self._tree.entries)

    def dangling(self) -> list[str]:
        """Entries whose parent is not in the file (SessionTree.dangling); from the tree cache while the tree is not built."""
        if self._tree is None:
            assert self._cache is not None
            return list(self._cache.dangling)
        return self._tree.dangling()

    @property
    def info_name(self) -> str | None:
        """The last session_info's name (pi's); from the tree cache while the tree is not built."""
        if self._tree is None:
            assert self._cache is not None
            return self._cache.session_name()
        return self._tree.name

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

    def start_run(self) -> tuple[str | None, Any] | None:
        """Before a run of appends written together (``add_batch`` each, then ``persist_run``):
        what ``undo_run`` takes; None when this session cannot take one (then append one by one)."""
        if type(self) is not Session or self.in_memory or not self.writer.exists:
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

    def undo_run(self, count: int, before: tuple[str | None, Any]) -> None:
        """Take a run's ``count`` added entries out of the tree again (its write failed)."""
        self.tree.remove_last(count, before[0], before[1])

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
                self.tail = follow.extend_tail(self.tail, lines)
                self._saw_own_write()
            else:  # another program's lines went out just before ours: read the file again at the next call
                self.seen, self._interleaved, self._checked_turn = None, True, None
        elif self.tree.has_conversation:
            self._create_file()

    def _create_file(self) -> None:
        """Header and every entry so far in one write (forced to disk unless the policy leaves that to the OS)."""
        durable = self.writer.policy is not FsyncPolicy.NEVER
        self.writer.create(serialize(self.header, self.tree.entries, self.prefix), durable=durable)
        offset = len(self.prefix) + len(self.header.raw) + 1
        for entry in self.tree.entries:
            entry.offset, entry.length = offset, len(entry.raw)
            offset += entry.length + 1
        self.known_size = offset
        self.tail = follow.extend_tail(b"", [self.header.raw, *(e.raw for e in self.tree.entries[-2:])])
        self._saw_own_write()

    # -- following another writer (the rest is follow.FollowsFile) --------------------

    def _read_whole(self) -> None:
        """Read the file again whole, as loading does (migrated in memory only): it was
        rewritten, cut or replaced behind our back."""
        try:
            with cycles_paused():
                parsed = parse_path(self.path)
        except NotASession as exc:
            raise DamagedFile(
                f"{self.path} was rewritten by another program and is no longer a session file: {exc}; "
                "the file was left unchanged",
                path=str(self.path),
            ) from exc
        except OSError as exc:
            raise StorageError(f"could not read {self.path} again: {exc.strerror or exc}", path=str(self.path)) from exc
        if migrate(parsed) is not None:  # an older version written over ours
            for item in parsed.items:
                if isinstance(item, Entry):
                    item.held().offset = -1
        self.header = parsed.header
        self.prefix, self.title_slot, self.title_fault = parsed.prefix, parsed.title_slot, parsed.title_fault
        self.writer.torn_tail_at, self.writer.needs_newline = parsed.torn_tail_at, parsed.needs_newline
        self.parse_errors = parsed.parse_errors
        self.known_size = parsed.size
        tree = SessionTree()
        with cycles_paused():
            tree.add_parsed(parsed.items)
        self._tree, self._cache, self._source = tree, None, None

    def _add_tail(self, data: bytes, start: int) -> list[Entry]:
        """Add the entries of whole lines another program appended at ``start``; returns them."""
        parsed = parse_tail(data, start)
        tree = self.tree
        before = len(tree.entries)
        with cycles_paused():
            tree.add_parsed(parsed.items)
        self.parse_errors += parsed.parse_errors
        return tree.entries[before:]

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
        """Name the session where the tool of its compatibility reads names (titles.py)."""
        return titles.set_name(self, name, self.compat)

    @property
    def name(self) -> str | None:
        return titles.name_of(self, self.compat)

    def flush(self) -> None:
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()
