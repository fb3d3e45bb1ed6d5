"""Where a session file holds blob marks: found in this process, or by a second one while this one parses.

The search for blob marks costs about a fifth of a large file's parse (0.3 s
a gigabyte: no byte of the mark is rare in JSON, so ``find`` cannot skip
far), and does not depend on the parse. For a large file a forked child
searches the whole file while the parent parses it and sends the positions
back as one array of integers; the parent marks the entries whose lines hold
one. Should the child fail for any reason, the parent searches itself: the
answer is the same either way, only the time differs.
"""

from __future__ import annotations

import mmap
import os
import signal
import sys
from array import array
from bisect import bisect_right
from operator import attrgetter
from typing import Any

from .entry import BLOB_MARK, Entry

# Files at least this large have their marks searched by a child (Linux only: forking a process that may
# run threads is safe there for a child that only reads a mapping and writes to a pipe, then _exits).
SEARCH_ELSEWHERE_FROM = 64 * 1024 * 1024
# The child hands back mapped pages every this many bytes (its own memory stays small).
_WINDOW = 64 * 1024 * 1024


def marks_within(buffer: Any, begin: int, end: int) -> list[int]:
    """Where blob marks lie wholly within ``buffer[begin:end]``, in order."""
    found: list[int] = []
    at = buffer.find(BLOB_MARK, begin, end)
    while at != -1:
        found.append(at)
        at = buffer.find(BLOB_MARK, at + 1, end)
    return found


def _windowed_marks(mapped: mmap.mmap, size: int) -> array:
    """Every mark of the mapping, searched a window at a time (a mark across a window's end is found once)."""
    found = array("q")
    overlap = len(BLOB_MARK) - 1
    for begin in range(0, size, _WINDOW):
        end = min(begin + _WINDOW, size)
        found.extend(at for at in marks_within(mapped, begin, min(end + overlap, size)) if at < end)
        mapped.madvise(mmap.MADV_DONTNEED, begin, end - begin)
    return found


class MarkSearch:
    """A child process searching a file's blob marks; ``positions()`` waits for its answer."""

    def __init__(self, pid: int, pipe: int) -> None:
        self.pid = pid
        self.pipe = pipe

    @classmethod
    def start(cls, fd: int, size: int) -> MarkSearch | None:
        """The search of the first ``size`` bytes of ``fd`` started elsewhere, or None (too small, or no fork)."""
        if size < SEARCH_ELSEWHERE_FROM or not sys.platform.startswith("linux"):
            return None
        try:
            read_end, write_end = os.pipe()
        except OSError:
            return None
        try:
            pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            return None
        if pid == 0:  # the child: search, write the positions, leave without running the parent's cleanups
            status = 1
            try:
                os.close(read_end)
                with mmap.mmap(fd, size, prot=mmap.PROT_READ) as mapped:
                    data = memoryview(_windowed_marks(mapped, size).tobytes())
                while data:
                    data = data[os.write(write_end, data):]
                status = 0
            finally:
                os._exit(status)
        os.close(write_end)
        return cls(pid, read_end)

    def positions(self) -> list[int] | None:
        """The marks' positions in file order; None when the child did not finish its search."""
        chunks = []
        try:
            while chunk := os.read(self.pipe, 1 << 20):
                chunks.append(chunk)
        except OSError:
            chunks = []
        finally:
            os.close(self.pipe)
            self.pipe = -1
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:  # reaped by someone else (a waitpid(-1) child watcher): its end is unknown
            return None
        finally:
            self.pid = 0
        if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            return None
        found = array("q")
        found.frombytes(b"".join(chunks))
        return found.tolist()

    def cancel(self) -> None:
        """Stop the child (the parse failed) and reap it."""
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except OSError:  # gone already, or reaped by someone else
                pass
            self.pid = 0
        if self.pipe >= 0:
            os.close(self.pipe)
            self.pipe = -1


_offset_of = attrgetter("offset")


def mark_entries(entries: list[Entry], positions: list[int]) -> None:
    """Set ``has_blobs`` on each entry (in file order, with offsets) whose line holds one of ``positions`` wholly."""
    size = len(BLOB_MARK)
    for at in positions:
        index = bisect_right(entries, at, key=_offset_of) - 1
        if index >= 0:
            entry = entries[index]
            if at + size <= entry.offset + entry.length:
                entry.has_blobs = True
