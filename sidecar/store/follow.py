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
from dataclasses import dataclass, field
from typing import Literal

from ..format.jsonl import Entry
from .treecache import TAIL_SAMPLE

# How long a call waits for a last line another program is still writing.
PARTIAL_LINE_WAIT_S = 0.25
# Between these, a call checks the file through a descriptor it holds (fstat, cheap);
# at most this often it also stats the path, to notice another file renamed over ours.
PATH_CHECK_S = 0.1
_POLL_S = 0.002

# rewritten: same file, other bytes; truncated: shorter than we knew it; replaced: another
# file renamed over ours; interleaved: another program's lines went out just before a batch of ours.
Reason = Literal["rewritten", "truncated", "replaced", "interleaved"]


@dataclass(slots=True)
class FileChange:
    """What a session learnt from its file at one call."""

    # Entries another program appended, in file order, now in the tree.
    appended: list[Entry] = field(default_factory=list)
    # Their lines as read (for the listing index).
    lines: list[bytes] = field(default_factory=list)
    # The file was read again whole, and why; None when it only grew.
    reloaded: Reason | None = None
    # The header line was rewritten in place (same length): only the header was read again.
    header_changed: bool = False


def extend_tail(tail: bytes, lines: list[bytes]) -> bytes:
    """The last TAIL_SAMPLE bytes of a file that held ``tail`` at its end and then ``lines`` (each with its newline)."""
    last = lines[-1]
    if len(last) >= TAIL_SAMPLE - 1:  # the usual case: one line is enough
        return last[1 - TAIL_SAMPLE:] + b"\n"
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
        if known_size > start and os.pread(fd, known_size - start, start) != tail[start - known_size:]:
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
    """The whole lines written after ``start``, waiting up to ``wait_s`` for an unfinished last one.

    Returns the bytes (ending with a newline, or empty), whether an unfinished
    line still follows them, and the file's stat before they were read.
    """
    deadline = time.monotonic() + wait_s
    with open(path, "rb", buffering=0) as file:
        while True:
            st = os.fstat(file.fileno())
            data = os.pread(file.fileno(), max(0, st.st_size - start), start)
            end = data.rfind(b"\n") + 1
            if end == len(data) or time.monotonic() >= deadline:
                return data[:end], end < len(data), st
            time.sleep(_POLL_S)


def read_header_line(path: str, length: int) -> bytes:
    """The first ``length`` bytes of the file (the header line, rewritten in place at the same length)."""
    with open(path, "rb", buffering=0) as file:
        return os.pread(file.fileno(), length, 0)
