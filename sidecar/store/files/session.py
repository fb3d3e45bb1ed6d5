"""A pi file's session: read from the file (or its tree cache), appended to, followed, titled.

Persistence is deferred as in pi 1.5: nothing is written until the session holds
a user or assistant message; then the header and every entry go out in one write, and
each later append is one write of its lines. Unlike pi, a file is never
written twice with a header (pi's duplicate-header bug), and an entry is only
in memory once its line is on disk.

Opening reads the file into a session: from its tree cache when one matches the file
(only lines appended since are parsed), else the whole file parsed leniently, and an old
version migrated and rewritten atomically with the original kept as a backup.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ...errors import DamagedFile, StorageError
from ...format.cycles import cycles_paused
from ...format.jsonl import Entry, LineSource, NotASession, ParsedFile, parse_file, parse_path, parse_tail, serialize
from ...format.migrate import migrate
from ...format.titleslot import read_slot
from ..base import FsyncPolicy
from ..cached import CacheDamaged
from ..session import LineSession, LoadReport, new_header
from ..tree import SessionTree
from . import follow, titles, treecache
from .lock import lock_path, unlock
from .treecache import FileStamp, TreeCache, extend_tree, matches, read_cache, tree_of
from .writer import SessionWriter, atomic_write


class FileSession(follow.FollowsFile, LineSession):
    """A pi file's session: its tree from the file (or its tree cache), its lines appended to the file,
    another program's writes followed (follow.py), oh-my-pi's title line kept (titles.py)."""

    writer: SessionWriter
    runs_together = True

    def __init__(self, path: Path, header: Entry, writer: SessionWriter) -> None:
        super().__init__(path, header, writer)
        # None while the session was opened from its tree cache and no call needed the tree yet.
        self._cache: TreeCache | None = None
        self._source: LineSource | None = None
        # The file as its tree cache last described it (None: no cache matches it).
        self.cache_stamp: FileStamp | None = None
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
    ) -> FileSession:
        """A session not written yet; ``prefix`` goes before its header (oh-my-pi's title slot)."""
        session = cls(
            path, new_header(session_id, cwd, parent_session, timestamp), SessionWriter(path, policy, exists=False)
        )
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
        header_fields: Mapping[str, object] | None = None,
        owned: bool = False,
    ) -> FileSession:
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
    ) -> tuple[FileSession, LoadReport]:
        """Open a file: lock it, parse leniently, migrate (rewriting atomically, original kept), index.

        Read-only, no lock is taken and nothing is rewritten (a migration stays in memory).
        With ``cache_root``, a tree cache there that matches the file is used instead of parsing it.
        """
        lock_fd = None if read_only else lock_path(path)
        try:
            loaded = _from_cache(cls, path, policy, read_only, cache_root) if cache_root is not None else None
            session, report = loaded or _from_file(cls, path, policy, read_only)
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

    # -- writes (LineSession's; what following needs to know of them) --------------------

    def _wrote(self, lines: list[bytes], fresh: bool) -> None:
        self.tail = follow.extend_tail(b"" if fresh else self.tail, lines)
        self._saw_own_write()

    def _interleaved_write(self) -> None:
        self.seen, self._interleaved, self._checked_turn = None, True, None

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

    def _set_title(self, name: str) -> Entry:
        return titles.set_title(self, name)


def _from_cache(
    cls: type[FileSession], path: Path, policy: FsyncPolicy, read_only: bool, cache_root: Path
) -> tuple[FileSession, LoadReport] | None:
    """The session from its tree cache, or None when there is none that matches the file."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None  # the full load reports what is wrong
    try:
        stamp = FileStamp.of(os.fstat(fd))
        cache = read_cache(cache_root, path) if stamp.size >= treecache.MIN_CACHED_BYTES else None
        how = matches(cache, fd, stamp) if cache is not None else None
    except OSError:
        how = None
    if how is None:
        os.close(fd)
        return None
    assert cache is not None
    source = LineSource(fd, str(path))
    try:  # the cached first lines: oh-my-pi's title slot, if any, then the header
        first = parse_file(cache.header)
    except NotASession:
        return None
    header = first.header
    if first.items or first.needs_newline is False:
        return None
    writer = SessionWriter(path, policy, exists=True)
    session = cls(path, header, writer)
    session.prefix, session.title_slot, session.title_fault = first.prefix, first.title_slot, first.title_fault
    session.read_only = read_only
    session.cached_context = cache.context
    session.parse_errors = cache.parse_errors
    session.known_size = stamp.size
    if how == "exact":
        session._tree, session._cache, session._source = None, cache, source
        writer.torn_tail_at, writer.needs_newline = cache.torn_tail_at, cache.needs_newline
        session.cache_stamp = stamp
    else:  # lines were appended since the cache was made: read only those
        try:
            with cycles_paused():
                session._tree = tree_of(cache, source)
                errors, torn, newline = extend_tree(session._tree, fd, cache.stamp.size, stamp.size)
        except CacheDamaged:
            return None
        session.parse_errors += errors
        writer.torn_tail_at, writer.needs_newline = torn, newline
    return session, LoadReport(session.parse_errors, None)


def _from_file(
    cls: type[FileSession], path: Path, policy: FsyncPolicy, read_only: bool
) -> tuple[FileSession, LoadReport]:
    """The session parsed from its file (pi may be finishing a line: waited for), migrated and rewritten when old."""
    follow.await_line_end(path)  # pi may be writing its last line right now
    try:
        with cycles_paused():
            parsed = parse_path(path)
    except FileNotFoundError:
        raise
    except NotASession as exc:
        raise DamagedFile(
            f"{path} is not a session file: {exc}; the file was left unchanged",
            path=str(path),
        ) from exc
    except OSError as exc:
        raise StorageError(f"could not read {path}: {exc.strerror or exc}", path=str(path)) from exc
    migrated_from = migrate(parsed)
    writer = SessionWriter(path, policy, exists=True)
    if migrated_from is not None:
        # Lines still read from the old file must not outlive it, nor keep its offsets.
        for item in parsed.items:
            if isinstance(item, Entry):
                item.held().offset = -1
    if migrated_from is not None and not read_only:
        backup = path.with_name(f"{path.name}.v{migrated_from}.bak")
        try:
            atomic_write(path, serialize(parsed.header, parsed.items, parsed.prefix), backup=backup)
        except OSError as exc:
            raise StorageError(
                f"could not rewrite {path} after migrating it from v{migrated_from}: {exc.strerror or exc}",
                path=str(path),
            ) from exc
        parsed.torn_tail_at = None  # the rewrite left the torn line out
        parsed.needs_newline = False
        parsed.size = _relocate(parsed)
        # The rewrite is a new file (inode): the lock must be taken on it.
        writer.lock_fd = lock_path(path)
    writer.torn_tail_at = parsed.torn_tail_at
    writer.needs_newline = parsed.needs_newline
    session = cls(path, parsed.header, writer)
    session.read_only = read_only
    session.prefix, session.title_slot, session.title_fault = parsed.prefix, parsed.title_slot, parsed.title_fault
    session.parse_errors = parsed.parse_errors
    session.known_size = parsed.size
    with cycles_paused():
        session.tree.add_parsed(parsed.items)
    return session, LoadReport(parsed.parse_errors, migrated_from)


def _relocate(parsed: ParsedFile) -> int:
    """Give each entry its offset in the file ``serialize`` just wrote; returns the file's size."""
    offset = len(parsed.prefix) + len(parsed.header.raw) + 1
    for item in parsed.items:
        if isinstance(item, Entry):
            item.offset, item.length = offset, len(item.raw)
            offset += item.length + 1
        else:
            offset += len(item) + 1
    return offset
