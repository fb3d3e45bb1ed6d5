"""Reading a session file into a ``Session``: from its tree cache when one matches the file
(only lines appended since are parsed), else the whole file parsed leniently, and an old
version migrated and rewritten atomically with the original kept as a backup.

``Session.load`` takes the lock and calls these; they take the session class so the
stores' subclasses load as themselves.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import DamagedFile, StorageError
from ...format.cycles import cycles_paused
from ...format.jsonl import Entry, LineSource, NotASession, ParsedFile, parse_file, parse_path, serialize
from ...format.migrate import migrate
from . import follow, treecache
from .lock import lock_path
from .treecache import CacheDamaged, FileStamp, extend_tree, matches, read_cache, tree_of
from ..base import FsyncPolicy
from .writer import SessionWriter, atomic_write

if TYPE_CHECKING:
    from ..session import Session


@dataclass(slots=True)
class LoadReport:
    """What an open found: lines that did not parse, and the version a file was migrated from."""

    parse_errors: int
    migrated_from: int | None


def from_cache(
    cls: type[Session], path: Path, policy: FsyncPolicy, read_only: bool, cache_root: Path
) -> tuple[Session, LoadReport] | None:
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

def from_file(cls: type[Session], path: Path, policy: FsyncPolicy, read_only: bool) -> tuple[Session, LoadReport]:
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
        parsed.size = relocate(parsed)
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


def relocate(parsed: ParsedFile) -> int:
    """Give each entry its offset in the file ``serialize`` just wrote; returns the file's size."""
    offset = len(parsed.prefix) + len(parsed.header.raw) + 1
    for item in parsed.items:
        if isinstance(item, Entry):
            item.offset, item.length = offset, len(item.raw)
            offset += item.length + 1
        else:
            offset += len(item) + 1
    return offset
