"""Reading and writing session JSONL, line by line, without losing a byte.

Every line read from disk stays as its exact bytes. Only the four fields the
tree needs (type, id, parentId, timestamp) and a message's head are decoded
eagerly; the body is decoded on demand (entry.py). Writing a line we did not
change writes those bytes again, so fields and entry types we do not know
survive every rewrite and fork.

The codec lives in codec.py and the entry in entry.py; their names are
importable from here as before.
"""

from __future__ import annotations

import mmap
import os
from bisect import bisect_left
from dataclasses import dataclass, field

import msgspec

from .chunked import read_lines
from .codec import decode_lenient, decode_object, encode
from .entry import BLOB_MARK, BLOB_PREFIX, Entry, LineMoved, LineSource, MessageHead
from .lineread import _kinds, _strict_envelope_decoder, _types, parse_line, share_head
from .marks import marks_within
from .titleslot import TitleSlot, looks_like_slot, read_slot

__all__ = [
    "BLOB_MARK",
    "BLOB_PREFIX",
    "MAP_THRESHOLD",
    "Entry",
    "LineMoved",
    "LineSource",
    "MessageHead",
    "NotASession",
    "ParsedFile",
    "Unparsed",
    "decode_lenient",
    "decode_object",
    "encode",
    "parse_file",
    "parse_line",
    "parse_path",
    "parse_tail",
    "serialize",
]


# A line we could not parse stays in the file as these bytes.
Unparsed = bytes


@dataclass(slots=True)
class ParsedFile:
    """A session file split into lines, in file order."""

    header: Entry
    # Entries and unparseable lines after the header, in file order.
    items: list[Entry | Unparsed] = field(default_factory=list)
    parse_errors: int = 0
    # Byte offset where an unterminated, unparseable last line starts (a write
    # torn by a crash), or None. It must go before the next append.
    torn_tail_at: int | None = None
    # The last line parsed but has no newline; the next write must add one first.
    needs_newline: bool = False
    size: int = 0
    # The exact bytes before the header line (oh-my-pi's title slot, or damage),
    # written back unchanged before the header on every rewrite.
    prefix: bytes = b""
    # oh-my-pi's title slot, when the first line is one (see titleslot.py).
    title_slot: TitleSlot | None = None
    # What is wrong with the lines before the header, if anything (reported, never refused).
    title_fault: str | None = None


class NotASession(ValueError):
    """The file's first parsed line is not a session header."""


def parse_file(data: bytes) -> ParsedFile:
    """Split file bytes into a header and items, each entry holding its line; never raises for damaged lines.

    Raises ``NotASession`` when no line parses or the first parsed line is not
    a header with a string id (pi would silently replace such a file; we leave
    it alone and say why).
    """
    return _parse_buffer(data, None)


# Below this size a file is read into memory whole; above it, it is mapped and
# its entries read their lines back from the file when asked.
MAP_THRESHOLD = 256 * 1024
# Mapped pages already parsed are handed back every this many bytes, so the
# parse never holds the whole file resident (peak memory stays near the envelopes).
_RELEASE_EVERY = 8 * 1024 * 1024
# After the header, up to this many bytes of whole lines are read in one decode (chunked.py); 0 turns it off.
_CHUNK = 1024 * 1024


def parse_path(path: str | os.PathLike[str]) -> ParsedFile:
    """``parse_file`` of the file at ``path``; a large file's entries keep offsets, not bytes."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        size = os.fstat(fd).st_size
        if size <= MAP_THRESHOLD:
            chunks = []
            while True:
                chunk = os.read(fd, max(size, 65536))
                if not chunk:
                    break
                chunks.append(chunk)
            return _parse_buffer(b"".join(chunks), None)
        source = LineSource(fd, os.fspath(path))
    except BaseException:
        os.close(fd)
        raise
    fd = -1  # the source owns it now
    with mmap.mmap(source.fd, size, prot=mmap.PROT_READ) as mapped:
        if hasattr(mapped, "madvise"):
            mapped.madvise(mmap.MADV_SEQUENTIAL)
        return _parse_buffer(mapped, source)


def parse_tail(data: bytes, base: int) -> ParsedFile:
    """The lines of ``data``, read from a file at offset ``base`` after its header (held in memory)."""
    return _parse_buffer(data, None, base)


def _parse_buffer(buffer: bytes | mmap.mmap, source: LineSource | None, base: int | None = None) -> ParsedFile:
    size = len(buffer)
    view = memoryview(buffer)
    try:
        parsed = _parse_view(buffer, view, size, source, base)
    finally:
        view.release()
    parsed.size = size
    return parsed


_BOM = b"\xef\xbb\xbf"


def _parse_view(
    buffer: bytes | mmap.mmap,
    view: memoryview,
    size: int,
    source: LineSource | None,
    base: int | None,
) -> ParsedFile:
    """The lines of ``buffer``; with ``base``, a part of a file from that offset on, after its header.

    Once the header is read, a stretch of whole lines is first read in one
    decode (chunked.py); a stretch that cannot be read that way goes line by
    line, each first taking the per-line fast path: one decode with the strict
    envelope and the entry built in place. A line that does not
    decode that way (damaged, blank, a lone surrogate, a field of an odd type)
    takes the general path below it, which reads it exactly as ``parse_line``.
    """
    held = source is None
    release = hasattr(buffer, "madvise") and hasattr(mmap, "MADV_DONTNEED")
    released_to = 0
    header: Entry | None = None
    prefix = b""
    tail_only = base is not None
    shift = base or 0
    items: list[Entry | Unparsed] = []
    append = items.append
    parse_errors = 0
    torn_tail_at: int | None = None
    needs_newline = False
    start = 0
    find = buffer.find
    fast = tail_only  # the fast path starts after the header
    strict = _strict_envelope_decoder.decode
    types, share = _types, share_head
    # Blob marks are rare: they are looked for a stretch at a time, and a line looks them up only when its
    # stretch holds one (a search of every line for them costs a fifth of the parse). A mapped file's lines
    # are not searched at all (``has_blobs`` None): the entries whose content is read settle it (entry.py).
    marks: list[int] = []
    marks_to = 0 if held else size
    segment: memoryview | bytes | None = None
    if not tail_only and buffer[:3] == _BOM:
        # pi 1.5 reads no entries from such a file (0.73.1 read it); we refuse it unchanged and never write one.
        raise NotASession(
            "the file starts with a UTF-8 byte order mark, which pi 1.5 does not read: remove its first 3 bytes"
        )
    slot: TitleSlot | None = None
    slot_fault: str | None = None
    chunk = _CHUNK
    lined_to = 0  # lines before this offset are read one by one (their stretch needed it)
    extend = items.extend
    try:
        while start < size:
            if fast and chunk and start >= lined_to:
                stop = buffer.rfind(b"\n", start, min(start + chunk, size))
                if stop > start:
                    entries = read_lines(buffer, start, stop, shift, source, _kinds)
                    if entries is not None:
                        extend(entries)
                        start = stop + 1
                        if release and start - released_to >= _RELEASE_EVERY:
                            upto = start - start % mmap.PAGESIZE
                            buffer.madvise(mmap.MADV_DONTNEED, released_to, upto - released_to)  # type: ignore[union-attr]  # release is set only when buffer is an mmap
                            released_to = upto
                        continue
                    lined_to = stop
            end = find(b"\n", start)
            is_unterminated = end == -1
            if is_unterminated:
                end = size
            if end > marks_to:  # a stretch an eighth of the release step: the pages it reads ahead stay few
                marks_to = max(end, start + max(_RELEASE_EVERY // 8, 1))
                marks = marks_within(buffer, start, marks_to)
            if fast:
                segment = buffer[start:end] if held else view[start:end]
                try:
                    env = strict(segment)
                except msgspec.MsgspecError:
                    env = None
                if env is not None:
                    head = env.message
                    if head is not None:
                        head = share(head)
                    kind = env.type
                    made = Entry(
                        types.get(kind, kind) if kind else "",
                        env.id,
                        env.parentId,
                        env.timestamp,
                        segment if held else None,  # type: ignore[arg-type]  # a held segment is a view of the mapped file, kept as the line's bytes
                        head,
                        start + shift,
                        end - start,
                        source,
                        (bool(marks) and _holds_mark(marks, start, end)) if held else None,
                    )
                    append(made)
                    if is_unterminated:
                        needs_newline = True
                    start = end + 1
                    if release and start - released_to >= _RELEASE_EVERY:
                        upto = start - start % mmap.PAGESIZE
                        buffer.madvise(mmap.MADV_DONTNEED, released_to, upto - released_to)  # type: ignore[union-attr]  # release is set only when buffer is an mmap
                        released_to = upto
                    continue
            segment = view[start:end]
            first = buffer[start : start + 1]
            if first != b"{" and not bytes(segment).strip():
                parse_errors += 1
                if is_unterminated:
                    torn_tail_at = start + shift
                start = end + 1
                continue
            if header is None and not tail_only and start == 0 and looks_like_slot(bytes(segment)):
                # oh-my-pi's title slot: not an entry; kept as bytes before the header.
                slot, slot_fault = read_slot(bytes(segment))
                if is_unterminated:
                    slot_fault = "the file holds a title line and nothing else"
                start = end + 1
                continue
            entry = parse_line(bytes(segment) if held else segment)
            if entry is None:
                parse_errors += 1
                if is_unterminated:
                    torn_tail_at = start + shift
                elif header is not None or tail_only:
                    append(bytes(segment))
                start = end + 1
                continue
            if is_unterminated:
                needs_newline = True
            entry.offset, entry.length = start + shift, end - start
            if not held:
                entry.source = source
            entry.has_blobs = (bool(marks) and _holds_mark(marks, start, end)) if held else None
            if header is None and not tail_only:
                if entry.type != "session" or entry.id is None:
                    raise NotASession(
                        "the first line is not a session header "
                        '(expected an object with "type": "session" and a string "id")'
                    )
                header = entry.held()
                prefix = bytes(buffer[0:start])
                fast = True
            else:
                append(entry)
            start = end + 1
            if release and start - released_to >= _RELEASE_EVERY:
                upto = start - start % mmap.PAGESIZE
                buffer.madvise(mmap.MADV_DONTNEED, released_to, upto - released_to)  # type: ignore[union-attr]  # release is set only when buffer is an mmap
                released_to = upto
    finally:
        # A slice still alive (say, in a traceback) would keep the map from closing.
        if isinstance(segment, memoryview):
            segment.release()
    if header is None and not tail_only:
        raise NotASession("the file holds no session header (it is empty or every line is damaged)")
    if not tail_only and slot is None and slot_fault is None and prefix:
        slot_fault = "lines before the header are not a title line"
    return ParsedFile(
        header=header,  # type: ignore[arg-type]  # None only for a tail read (tail_only), whose callers know it has no header
        items=items,
        parse_errors=parse_errors,
        torn_tail_at=torn_tail_at,
        needs_newline=needs_newline,
        prefix=b"" if tail_only else prefix,
        title_slot=slot,
        title_fault=slot_fault,
    )


def _holds_mark(marks: list[int], start: int, end: int) -> bool:
    """Whether one of ``marks`` (sorted) lies wholly within the line ``[start, end)``."""
    at = bisect_left(marks, start)
    return at < len(marks) and marks[at] + len(BLOB_MARK) <= end


def serialize(header: Entry, items: list[Entry | Unparsed], prefix: bytes = b"") -> bytes:
    """The whole file, one line per item, each line as its kept bytes (``prefix`` before the header)."""
    parts = [prefix + header.raw]
    for item in items:
        parts.append(item.raw if isinstance(item, Entry) else item)
    parts.append(b"")  # the last line's newline from the same join: no second copy of the whole file
    return b"\n".join(parts)
