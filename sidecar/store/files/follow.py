"""Following a session file that another program writes while the sidecar holds it open.

pi takes no lock: a user who goes on in pi's own CLI appends to the very file
an editor holds open through the sidecar. Our flock keeps sidecars apart, not
pi, so every call that reads or writes an open session first compares the
file with what the session last saw of it (one ``stat``: size, modification
and change times, inode) and, when it differs, works out what happened:

* ``grown``: the file only got longer and the bytes we knew are still there
  (the last few of them are compared). The new whole lines are read from
  where we stopped and folded into the tree; the leaf moves to the last entry
  appended, as pi's loader puts it. A last line without its newline is still
  being written: it is waited for briefly, then left for a later call (never
  counted as damage, never moved aside while it may still be finished).
* ``header``: same size, only the header line differs and still names the
  session (oh-my-pi rewrites its fixed-width title line in place): the header
  is read again, nothing else.
* ``rewritten`` / ``truncated`` / ``replaced``: anything else (same inode but
  other bytes, a shorter file, another file renamed over ours). The file is
  read again whole and the call says so.

The sidecar's own appends go out on an ``O_APPEND`` descriptor; the writer
notes where each of its batches ended, so our bytes are told from theirs: a
batch that did not start where we last knew the file to end had another
program's lines before it, and the file is read again at the next call.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...format.jsonl import Entry, parse_line
from ..base import FileChange, Reason
from .treecache import TAIL_SAMPLE

# How long a call waits for a last line another program is still writing.
PARTIAL_LINE_WAIT_S = 0.25
# Between these, a call checks the file through a descriptor it holds (fstat, cheap);
# at most this often it also stats the path, to notice another file renamed over ours.
PATH_CHECK_S = 0.1
# How long a check made just before a call stands for the call's own check (see ``_unchanged``).
FRESH_CHECK_NS = 1_000_000
_POLL_S = 0.002
# A file not modified for this long is not being written now: an unfinished last line
# in it was torn (its writer died), and is not waited for.
_FRESH_S = 0.1


def extend_tail(tail: bytes, lines: list[bytes]) -> bytes:
    """The last TAIL_SAMPLE bytes of a file that held ``tail`` at its end and then ``lines`` (each with its newline)."""
    last = lines[-1]
    if len(last) >= TAIL_SAMPLE - 1:  # the usual case: one line is enough
        return last[1 - TAIL_SAMPLE :] + b"\n"
    parts: list[bytes] = []
    size = 0
    for line in reversed(lines):
        parts.append(b"\n")
        parts.append(line)
        size += len(line) + 1
        if size >= TAIL_SAMPLE:
            break
    else:
        parts.append(tail)
    parts.reverse()
    return b"".join(parts)[-TAIL_SAMPLE:]


def classify(path: str, known_size: int, tail: bytes, header: bytes, size: int) -> str:
    """How the file at ``path`` (the same inode, ``size`` bytes now) relates to the ``known_size``
    bytes the session describes.

    Returns "same", "grown", "header", "rewritten" or "truncated".
    """
    if size < known_size:
        return "truncated"
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return "rewritten"
    try:
        start = max(0, known_size - TAIL_SAMPLE)
        if known_size > start and os.pread(fd, known_size - start, start) != tail[start - known_size :]:
            return "rewritten"
        first = os.pread(fd, len(header) + 1, 0)
    finally:
        os.close(fd)
    if first == header + b"\n":
        return "same" if size == known_size else "grown"
    if size == known_size and first.endswith(b"\n") and first.startswith(b"{"):
        return "header"  # the caller checks the new header still names the session
    return "rewritten"


def read_new_lines(path: str, start: int, wait_s: float) -> tuple[bytes, bool, os.stat_result]:
    """The whole lines written after ``start``, waiting up to ``wait_s`` for an unfinished last one
    while the file is being written (modified within _FRESH_S).

    Returns the bytes (ending with a newline, or empty), whether an unfinished
    line still follows them, and the file's stat before they were read.
    """
    deadline = time.monotonic() + wait_s
    with open(path, "rb", buffering=0) as file:
        while True:
            st = os.fstat(file.fileno())
            data = os.pread(file.fileno(), max(0, st.st_size - start), start)
            end = data.rfind(b"\n") + 1
            if end == len(data) or time.monotonic() >= deadline or time.time() - st.st_mtime > _FRESH_S:
                return data[:end], end < len(data), st
            time.sleep(_POLL_S)


def await_line_end(path: str | os.PathLike[str]) -> None:
    """Before a file is read whole: if its last line has no newline yet and the file is
    being written (modified within _FRESH_S), wait up to PARTIAL_LINE_WAIT_S for the rest,
    so that the line is read whole rather than taken for one a crash tore."""
    deadline = time.monotonic() + PARTIAL_LINE_WAIT_S
    try:
        with open(path, "rb", buffering=0) as file:
            while True:
                st = os.fstat(file.fileno())
                if st.st_size == 0 or os.pread(file.fileno(), 1, st.st_size - 1) == b"\n":
                    return
                if time.time() - st.st_mtime > _FRESH_S or time.monotonic() >= deadline:
                    return  # an old torn line (a crash), or one nobody finishes: the loader's rules apply
                time.sleep(_POLL_S)
    except OSError:
        return  # the loader reports what is wrong


def read_header_line(path: str, length: int) -> bytes:
    """The first ``length`` bytes of the file (the header line, rewritten in place at the same length)."""
    with open(path, "rb", buffering=0) as file:
        return os.pread(file.fileno(), length, 0)


class FollowsFile:
    """Session's half that follows its file (see the module's doc); Session provides the
    rest: ``path``, ``header``, ``writer``, ``known_size``, ``tree``, ``parse_errors``,
    ``_read_whole`` and ``_add_tail``."""

    # (on_follow and changes_on_disk: Session's, store/session.py)
    on_follow: Callable[[Any, FileChange], None] | None

    if TYPE_CHECKING:  # what Session provides
        from pathlib import Path

        from ..cached import CachedContext
        from ..tree import SessionTree
        from .treecache import FileStamp
        from .writer import SessionWriter

        path: Path
        id: str
        header: Entry
        writer: SessionWriter
        known_size: int
        parse_errors: int
        prefix: bytes
        cached_context: CachedContext | None
        cache_stamp: FileStamp | None

        @property
        def tree(self) -> SessionTree: ...
        def _read_whole(self) -> None: ...
        def _add_tail(self, data: bytes, start: int) -> list[Entry]: ...

    def _init_following(self) -> None:
        # The file's (size, mtime, ctime) when we last saw it agree with the tree (None:
        # look again), when its path was last checked, and its last bytes.
        self.seen: tuple[int, int, int] | None = None
        self._path_checked = 0.0
        self.tail = b""
        # An unfinished last line another program is writing: (where it starts, since when).
        self._partial: tuple[int, float] | None = None
        # The file's (device, inode) as we opened or last read it whole.
        self._inode: tuple[int, int] | None = None
        # Another program's lines went out between ours: the next call reads the file again.
        self._interleaved = False
        # When a check just before a call found the file unchanged (``changed_behind(before_call=True)``):
        # the call's own check, microseconds later, takes that answer instead of an fstat of its own.
        self._checked_at = 0
        # The step (``turn``) of the rpc layer's event loop in which a check last found the file
        # unchanged, kept while only our own writes follow it (``_saw_own_write``): a later call of
        # that same step need not look again (requests read together race any other writer alike).
        self._checked_turn: int | None = None

    def _note_file(self) -> None:
        """Remember the file as loaded, to notice later changes behind our back."""
        if not self.writer.exists:
            return
        try:
            with open(self.path, "rb", buffering=0) as file:
                st = os.fstat(file.fileno())
                start = max(0, self.known_size - TAIL_SAMPLE)
                self.tail = os.pread(file.fileno(), self.known_size - start, start)
        except OSError:
            return
        self._inode = (st.st_dev, st.st_ino)
        self._saw(st if st.st_size == self.known_size else None)

    def _saw(self, st: os.stat_result | None) -> None:
        """The file agrees with the tree as ``st`` shows it (None: not known to, look again)."""
        self.seen = (st.st_size, st.st_mtime_ns, st.st_ctime_ns) if st is not None else None
        self._path_checked = time.monotonic()
        self._checked_turn = None

    def _saw_own_write(self) -> None:
        # The writer's fstat just after an append, when it has one; it just wrote: its descriptor is open.
        st = getattr(self.writer, "last_stat", None) or os.fstat(self.writer.stat_fd())  # type: ignore[arg-type]  # the writer just wrote: its descriptor is open
        if self._inode is None:
            self._inode = (st.st_dev, st.st_ino)
        # A size past our end: another program appended right after us; the next call reads it.
        self.seen = (st.st_size, st.st_mtime_ns, st.st_ctime_ns) if st.st_size == self.writer.last_end else None

    def _unchanged(self) -> bool:
        """The file is as we last saw it: an fstat of a descriptor we hold, and every
        ``PATH_CHECK_S`` a stat of the path too (another file renamed over ours)."""
        seen = self.seen
        if seen is None:
            return False
        if self._checked_at:
            # Checked an instant ago, just before this call began (the rpc layer's inline test):
            # a write landing since is one landing between this check and our write, which the
            # writer notices (SessionWriter.append's offsets) as it always did. Used once.
            checked, self._checked_at = self._checked_at, 0
            if time.monotonic_ns() - checked < FRESH_CHECK_NS:
                return True
        fd = self.writer.stat_fd()
        if fd is None or time.monotonic() - self._path_checked > PATH_CHECK_S:
            try:
                st = os.stat(self.path)
            except OSError:
                return True  # gone: nothing to follow
            if (st.st_dev, st.st_ino) != self._inode:
                return False
            self._path_checked = time.monotonic()
        else:
            st = os.fstat(fd)
        return st.st_size == seen[0] and st.st_mtime_ns == seen[1] and st.st_ctime_ns == seen[2]

    def changed_behind(self, before_call: bool = False, turn: int | None = None) -> bool:
        """The file is not as we last saw it (a session without a file never is).

        ``before_call``: a call on this session follows at once (in the same step), whose
        own check may then take this answer instead of looking again. ``turn``: the step of
        the caller's event loop; in the step of a check that found the file unchanged, with
        nothing but our own appends since (each found the file ending where it wrote), the
        answer stands without another fstat."""
        if not self.writer.exists or self.writer.error is not None:
            return False
        if turn is None or turn != self._checked_turn or self.seen is None:
            if not self._unchanged():
                return True
            if turn is not None:
                self._checked_turn = turn
        if before_call:
            self._checked_at = time.monotonic_ns()
        return False

    def follow(self, wait: bool = True) -> FileChange | None:
        """Catch up with what another program did to the file since we last saw it.

        Lines appended are folded into the tree and the leaf moves to the last
        of them; anything else reads the file again whole. With ``wait`` an
        unfinished last line is waited for (briefly, once). None: nothing changed.
        """
        if not self.writer.exists or self.writer.error is not None or self._unchanged():
            return None
        try:
            st = os.stat(self.path)
        except OSError:
            return None  # gone (deleted, moved): nothing to follow
        path = os.fspath(self.path)
        if self._inode is not None and self._inode != (st.st_dev, st.st_ino):
            how = "replaced"
        elif self._interleaved:
            how = "interleaved"
        else:
            # The bytes before the header (oh-my-pi's title line) count as the header's: a title
            # rewritten in place reads the file again (rare: a rename), never as lost lines.
            how = classify(path, self.known_size, self.tail, self.prefix + self.header.raw, st.st_size)
        if how == "same":
            self._saw(st)
            return None
        if how == "header":
            header = parse_line(read_header_line(path, len(self.header.raw)))
            if header is not None and header.type == "session" and header.id == self.id:
                header.held().offset, header.length = 0, len(header.raw)
                self.header = header
                self._saw(st)
                self._forget_cached()
                return self._told(FileChange(header_changed=True))
            how = "rewritten"
        if how == "grown" and (self.writer.torn_tail_at is not None or self.writer.needs_newline):
            how = "rewritten"  # our end was not a line boundary: their first line is glued to it
        if how != "grown":
            return self._told(self._reload(how))  # type: ignore[arg-type]  # classify answers a Reason when it is not "grown"
        return self._told(self._fold_new_lines(path, wait))

    def _fold_new_lines(self, path: str, wait: bool) -> FileChange | None:
        start = self.known_size
        budget = 0.0
        if wait:
            since = self._partial[1] if self._partial is not None and self._partial[0] == start else time.monotonic()
            budget = max(0.0, PARTIAL_LINE_WAIT_S - (time.monotonic() - since))
        data, unfinished, st = read_new_lines(path, start, budget)
        if data:
            appended = self._add_tail(data, start)
            self.known_size = start + len(data)
            self.tail = extend_tail(self.tail, [data[:-1]])
        else:
            appended = []
        if unfinished:
            self._saw(None)  # looked at again by the next call
            if self._partial is None or self._partial[0] != self.known_size:
                self._partial = (self.known_size, time.monotonic())
        else:
            self._partial = None
            self._saw(st if st.st_size == self.known_size else None)
        if not data:
            return None
        return FileChange(appended=appended)

    def _told(self, change: FileChange | None) -> FileChange | None:
        if change is not None and self.on_follow is not None:
            self.on_follow(self, change)
        return change

    def settle_unfinished(self) -> bool:
        """Before a write: never after a line another program is still writing. It is waited
        for (what is left of the wait); one left unfinished past it is a torn line (its writer
        died) and goes to ``<file>.torn`` as on load. True when one was set aside."""
        partial = self._partial
        if partial is None or partial[0] != self.known_size:
            return False
        self._told(self._fold_new_lines(os.fspath(self.path), wait=True))
        if self._partial is None:
            return False  # finished: it is in the tree now, and the batch goes after it
        self.writer.set_aside(self.known_size)
        self._partial = None
        self.parse_errors += 1
        self._saw(None)
        return True

    def _reload(self, reason: Reason) -> FileChange:
        """Read the whole file again: it was rewritten, cut or replaced behind our back."""
        if reason == "replaced":
            self.writer.reopen()
        self._read_whole()
        self._forget_cached()
        self._partial, self._interleaved, self._inode = None, False, None
        self._note_file()
        return FileChange(reloaded=reason)

    def _forget_cached(self) -> None:
        self.cached_context = None
        self.cache_stamp = None
