"""Many whole lines read in one decode: the parse's fastest path for a large, undamaged file.

A stretch of lines is handed to msgspec's ``decode_lines`` in one call, and
the entries are made by ``map`` over its results, so a line costs no Python
step of its own but the search for its end. This must give exactly what
reading each line alone gives (jsonl.py's per-line paths), including pi's
rule that a line JSON.parse refuses is dropped on its own. ``decode_lines``
reads JSON values separated by any whitespace, not one value per line, so a
stretch is taken only when each of its lines starts with ``{`` and ends with
``}`` and the decode gives one value per line. Then each line holds exactly
one object: a string cannot hold a raw newline (msgspec refuses it, as
JSON.parse does), so a newline lies between tokens; one right after a ``}``
that closed an object nested in another would have to be followed by ``,``,
``]`` or ``}``, never by the next line's ``{``; so every line ends at the top
level, holds at least one value, and with as many values as lines, exactly
one. Any other stretch (a damaged, blank or indented line, a lone surrogate,
a field of an odd type) is read again line by line by the caller.
"""

from __future__ import annotations

import mmap
from bisect import bisect_right
from collections.abc import Iterator
from itertools import repeat

from ..corepath import line_scanner
from .entry import BLOB_MARK, Entry, LineSource
from .lineread import MAX_SHARED_HEADS, SharedHead, shared_heads


def read_lines(
    buffer: bytes | mmap.mmap,
    start: int,
    stop: int,
    shift: int,
    source: LineSource | None,
    kinds: dict[str | None, str],
) -> list[Entry] | None:
    """The entries of the whole lines in ``buffer[start:stop]`` (``stop`` is where a newline is), or None.

    None when a line there needs the per-line reading (see the module's
    docstring). The lines' fields come from the chosen core's scan
    (sidecar/corepath: Python's is the one described above). With no ``source`` the entries hold their lines' bytes (searched
    for blob marks), else they read them back from it (``has_blobs`` None). Offsets are ``shift`` past the buffer's.
    ``kinds`` maps an entry type to its one shared string (None to "").
    """
    columns = line_scanner(SharedHead).scan(buffer, start, stop)
    if columns is None:
        return None
    types, ids, parent_ids, timestamps, heads, starts, lengths = columns
    if len(shared_heads) < MAX_SHARED_HEADS:
        heads = list(map(shared_heads.setdefault, heads, heads))
    else:
        heads = list(map(shared_heads.get, heads, heads))
    if source is None:
        lines: Iterator[bytes | None] = map(buffer.__getitem__, map(slice, starts, map(int.__add__, starts, lengths)))
    else:
        lines = repeat(None)
    offsets = map(int.__add__, starts, repeat(shift)) if shift else starts
    entries = list(
        map(
            Entry,
            map(kinds.get, types, types),
            ids,
            parent_ids,
            timestamps,
            lines,
            heads,
            offsets,
            lengths,
            repeat(source),
            repeat(False if source is None else None),  # a mapped file's lines: not searched (jsonl.py)
        )
    )
    if source is None:
        _mark_blobs(buffer, start, stop, starts, lengths, entries)
    return entries


def _mark_blobs(
    buffer: bytes | mmap.mmap, start: int, stop: int, starts: list[int], lengths: list[int], entries: list[Entry]
) -> None:
    """Set ``has_blobs`` on the entries whose line holds a blob mark wholly (marks are rare: a search per stretch)."""
    size = len(BLOB_MARK)
    at = buffer.find(BLOB_MARK, start, stop)
    while at != -1:
        line = bisect_right(starts, at) - 1
        if at + size <= starts[line] + lengths[line]:
            entries[line].has_blobs = True
        at = buffer.find(BLOB_MARK, at + 1, stop)
