"""Session names where each tool reads them.

pi names a session with ``session_info`` entries (the last one wins).
oh-my-pi reads its title slot line (format/titleslot.py) and, in a file
without one, the header's ``title``; it writes a rename as a ``title_change``
entry (an audit record it never reads back) plus the slot, overwritten in
place. Under oh-my-pi's compatibility we do the same, so that its
``getSessionName()`` shows the name we set.

A session has one name wherever we answer it (open, setName, list: ``name``,
and ACP's ``title`` the same): the one the tool of its compatibility reads.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Protocol

from ...errors import InvalidParams, StorageError
from ...format.jsonl import Entry
from ...format.titleslot import SLOT_BYTES, TITLE_CHANGE_TYPE, clean_title, read_slot, slot_line
from ..ids import iso_now
from ..session import Session, Titled, name_of
from ..tree import SessionTree
from .lock import lock_path, unlock
from .treecache import FileStamp
from .writer import SessionWriter, atomic_write


class TitledFile(Titled, Protocol):
    """What a rename as oh-my-pi's needs of a session: its file, its title line, its writer (files/session.py)."""

    path: Path
    title_fault: str | None
    cache_stamp: FileStamp | None
    known_size: int
    writer: SessionWriter

    @property
    def tree(self) -> SessionTree: ...

    @property
    def persisted(self) -> bool: ...

    def append(self, objs: list[dict[str, Any]]) -> list[Entry]: ...

    def _note_file(self) -> None: ...


def new_file_prefix(timestamp: str) -> bytes:
    """The first line oh-my-pi starts a new file with: an empty title slot."""
    return slot_line("", timestamp, None) + b"\n"


def fork_prefix(source: Session, timestamp: str) -> bytes:
    """The title line of a fork of ``source``: its title carried over, as oh-my-pi's forks carry it."""
    title = name_of(source, "omp")
    if not title:
        return new_file_prefix(timestamp)
    origin = source.title_slot.source if source.title_slot is not None else None
    return slot_line(title, timestamp, origin) + b"\n"


def set_title(session: TitledFile, name: str) -> Entry:
    """oh-my-pi's rename: a ``title_change`` entry, then the title line (overwritten, or the file rewritten with one)."""
    title = clean_title(name)
    if not title:
        raise InvalidParams(
            "name is empty once control characters and spaces are removed; send a visible name", field="name"
        )
    previous = name_of(session, "omp")
    obj = {"type": TITLE_CHANGE_TYPE, "timestamp": iso_now(), "title": title, "source": "user"}
    if previous:
        obj["previousTitle"] = previous
    entry = session.append([obj])[0]
    line = slot_line(title, obj["timestamp"], "user") + b"\n"
    if session.persisted:
        if session.title_slot is not None and session.title_fault is None and len(session.prefix) == SLOT_BYTES:
            _overwrite_slot(session, line)
        else:
            _rewrite_with_prefix(session, line)
    session.prefix = line
    session.title_slot, session.title_fault = read_slot(line[:-1])
    session.cache_stamp = None
    if session.persisted:
        session._note_file()  # our own rewrite: not a change behind our back for following (follow.py)
    return entry


def _overwrite_slot(session: TitledFile, line: bytes) -> None:
    """The slot's bytes replaced in place, as oh-my-pi does (same width: no other byte moves)."""
    try:
        fd = os.open(session.path, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            if os.pwrite(fd, line, 0) != len(line):
                raise OSError(0, "short write")
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise StorageError(
            f"could not rewrite the title line of {session.path}: {exc.strerror or exc}; "
            "the title_change entry is written, the title line is not",
            path=str(session.path),
            errno=exc.errno,
            latched=False,
        ) from exc


def _rewrite_with_prefix(session: TitledFile, prefix: bytes) -> None:
    """The file again with ``prefix`` instead of what came before its header, atomically.

    For a file without a (sound) title line: oh-my-pi rewrites such a file whole
    at its first rename too. Every other byte stays as it was.
    """
    writer = session.writer
    writer.check()
    old = len(session.prefix)
    try:
        with open(session.path, "rb") as handle:
            handle.seek(old)
            rest = handle.read()
        for entry in session.tree.entries:
            entry.held()  # its offset changes: keep its bytes, not a place in the old file
        atomic_write(session.path, prefix + rest)
    except OSError as exc:
        raise StorageError(
            f"could not rewrite {session.path} with a title line: {exc.strerror or exc}; "
            "the title_change entry is written, the title line is not",
            path=str(session.path),
            errno=exc.errno,
            latched=False,
        ) from exc
    shift = len(prefix) - old
    for entry in session.tree.entries:
        if entry.offset >= 0:
            entry.offset += shift
            entry.source = None
    if writer.torn_tail_at is not None:
        writer.torn_tail_at += shift
    session.known_size += shift
    # The rename made a new file (inode): the writer and the lock must move to it.
    lock_fd = writer.lock_fd
    writer.lock_fd = None
    writer.close()
    unlock(lock_fd)
    writer.lock_fd = lock_path(session.path)
