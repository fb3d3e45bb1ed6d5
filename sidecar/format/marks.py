"""Where a session file holds blob marks (``blob:sha256:`` references to the blob store).

Marks are rare, and no byte of the mark is rare in JSON, so ``find`` cannot
skip far: the parse looks for them a stretch of lines at a time and a line
looks them up only when its stretch holds one.
"""

from __future__ import annotations

import mmap

from .entry import BLOB_MARK


def marks_within(buffer: bytes | mmap.mmap, begin: int, end: int) -> list[int]:
    """Where blob marks lie wholly within ``buffer[begin:end]``, in order."""
    found: list[int] = []
    at = buffer.find(BLOB_MARK, begin, end)
    while at != -1:
        found.append(at)
        at = buffer.find(BLOB_MARK, at + 1, end)
    return found
