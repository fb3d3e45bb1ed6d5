"""Session metadata for pickers, with pi's rules, cached by file size and mtime.

modified = the time of the last user or assistant message (its own epoch-ms
timestamp, else the entry's), then the header's time, then the file's mtime.
messageCount counts message entries; firstMessage is the first user text.
"""

from __future__ import annotations

import base64
import mmap
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from ...format.jsonl import decode_lenient
from ...format.jsstr import js_trim
from ...format.jstime import js_time
from ...format.titleslot import TitleSlot, looks_like_slot, read_slot
from ...format.usage import usage_tokens


class _Message(msgspec.Struct):
    role: object = None
    content: object = None
    timestamp: object = None
    usage: object = None
    stopReason: object = None


class _Line(msgspec.Struct):
    type: object = None
    id: object = None
    timestamp: object = None
    cwd: object = None
    title: object = None
    parentSession: object = None
    name: object = None
    message: _Message | None = None


_line_decoder = msgspec.json.Decoder(_Line)


# The same fields with content blocks and usage typed: decoded into Structs rather than dicts (about a
# third less time per line, and most of a cold index rebuild is these lines). A line whose content or
# usage has another shape fails here and is decoded again with ``_Line`` (decode_line), so what is
# read is the same either way.
class _Block(msgspec.Struct):
    type: object = None
    text: object = None


class _Usage(msgspec.Struct):  # (a part of another type fails the typed decode: usage_tokens reads that dict)
    totalTokens: int | float | None = None
    input: int | float | None = None
    output: int | float | None = None
    cacheRead: int | float | None = None
    cacheWrite: int | float | None = None


class _TypedMessage(_Message):
    content: str | list[_Block] | None = None
    usage: _Usage | None = None


class _TypedLine(_Line):
    message: _TypedMessage | None = None


_typed_decode = msgspec.json.Decoder(_TypedLine).decode


@dataclass(slots=True)
class Summary:
    session_id: str
    path: str
    cwd: str
    created: str
    modified_ms: int
    message_count: int
    first_message: str
    name: str | None
    title: str | None
    parent_session: str | None
    all_text: str
    tokens_total: int = 0
    tokens_last: int = 0
    header_timestamp: bool = False  # ``created`` is the header's own timestamp (not the file's mtime)
    titled: bool = False  # the file starts with oh-my-pi's title line (``title`` is then that line's title)
    assistant_turns: int = 0  # assistant messages in the file
    last_role: str | None = None  # the role of its last message


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        if content and type(content[0]) is _Block:  # (a typed line's list holds nothing else)
            if len(content) == 1:  # (most messages: one block)
                block = content[0]
                return block.text if block.type == "text" and type(block.text) is str else ""
            return " ".join(b.text for b in content if b.type == "text" and type(b.text) is str)
        return " ".join(
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


def _usage_tokens(usage: object) -> int:
    """``usage_tokens`` of a typed line's usage as of the dict it was decoded from."""
    if type(usage) is not _Usage:
        return usage_tokens(usage)
    total = usage.totalTokens
    if isinstance(total, (int, float)) and total:
        return int(total)
    return int(sum(part or 0 for part in (usage.input, usage.output, usage.cacheRead, usage.cacheWrite)))


def iso_from_ms(ms: int) -> str:
    moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class Accumulator:
    """pi's listing fields, folded line by line (so appended lines extend a stored state)."""

    __slots__ = ("count", "first", "last_activity", "name", "tokens_total", "tokens_last", "assistants", "last_role")

    def __init__(
        self,
        count: int = 0,
        first: str = "",
        last_activity: int = 0,
        name: str | None = None,
        tokens_total: int = 0,
        tokens_last: int = 0,
        assistants: int = 0,
        last_role: str | None = None,
    ) -> None:
        self.count, self.first, self.last_activity, self.name = count, first, last_activity, name
        self.tokens_total, self.tokens_last = tokens_total, tokens_last
        # oh-my-pi's picker and continueRecent skip a stub (is_stub): they need these two
        self.assistants, self.last_role = assistants, last_role

    def feed(self, line: _Line | _TypedLine) -> str | None:
        """Fold one entry line in; returns its searchable text, if any.

        (Written for speed: a cold index rebuild folds every line of 100,000 files here.)"""
        if line.type != "message":
            if line.type == "session_info":
                self.name = (js_trim(line.name) or None) if isinstance(line.name, str) else None
            return None
        message = line.message
        if message is None:
            return None
        self.count += 1
        role = message.role
        self.last_role = role if type(role) is str else None
        if role == "assistant":
            self.assistants += 1
            if message.stopReason != "aborted" and message.stopReason != "error":
                used = _usage_tokens(message.usage)
                if used > 0:
                    self.tokens_total += used
                    self.tokens_last = used
        elif role != "user":
            return None
        stamp = message.timestamp
        when: int | None
        if type(stamp) is int:  # (JSON's numbers decode to exactly int and float; a bool is no time)
            when = stamp
        elif type(stamp) is float:
            when = int(stamp)
        else:
            when = js_time(line.timestamp)
        if when is not None and when > self.last_activity:
            self.last_activity = when
        content = message.content
        text = content if type(content) is str else _text(content)
        if not text:
            return None
        if not self.first and role == "user":
            self.first = text
        return text


def decode_line(raw: bytes) -> _Line | _TypedLine | None:
    if not raw.strip():
        return None
    try:
        return _typed_decode(raw)
    except msgspec.DecodeError:  # (a ValidationError is one too)
        pass
    try:
        return decode_lenient(_line_decoder, raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def modified_ms(last_activity: int, header_timestamp: object, mtime_ms: int) -> int:
    header_ms = js_time(header_timestamp)
    return last_activity if last_activity > 0 else header_ms if header_ms is not None else mtime_ms


def _lines(data: bytes | mmap.mmap) -> Iterator[bytes]:
    """The lines of ``data``. A mapped file is read a line at a time, its pages handed back every few
    megabytes, so a 1 GB session is summarized without holding it (or a copy split into lines) in memory."""
    if not isinstance(data, mmap.mmap):
        yield from data.split(b"\n")
        return
    find, size, start, released = data.find, len(data), 0, 0
    while start <= size:
        end = find(b"\n", start)
        if end == -1:
            end = size
        yield data[start:end]
        start = end + 1
        if start - released >= _RELEASE_EVERY and hasattr(mmap, "MADV_DONTNEED"):
            upto = min(start, size) - min(start, size) % mmap.PAGESIZE
            data.madvise(mmap.MADV_DONTNEED, released, upto - released)
            released = upto


_RELEASE_EVERY = 8 * 1024 * 1024


def summarize_full(
    path: Path | str, data: bytes | mmap.mmap, mtime_ms: int, join_texts: bool = True
) -> tuple[Summary, Accumulator, list[str]] | None:
    """Metadata of one file with its folded state and texts, or None when it is not a session.

    ``join_texts`` False leaves ``all_text`` empty (the listing index keeps the texts apart)."""
    header: _Line | None = None
    session_id = ""
    acc = Accumulator()
    texts: list[str] = []
    slot: TitleSlot | None = None
    titled = False
    lines = iter(data.split(b"\n") if isinstance(data, bytes) else _lines(data))
    first = True
    for raw in lines:
        if first:
            first = False
            if looks_like_slot(raw):
                slot = read_slot(raw)[0]  # oh-my-pi's title line (titleslot.py): its title wins over the header's
                titled = True
                continue
        line = decode_line(raw)
        if line is None:
            continue
        if line.type != "session" or not isinstance(line.id, str):
            return None
        header, session_id = line, line.id
        break
    if header is None:
        return None
    feed, keep, typed = acc.feed, texts.append, _typed_decode
    for raw in lines:
        try:
            line = typed(raw)  # (decode_line's first step, without its call: most lines take it)
        except msgspec.DecodeError:
            line = decode_line(raw)
            if line is None:
                continue
        text = feed(line)
        if text:
            keep(text)
    if header is None:
        return None
    summary = Summary(
        session_id=session_id,
        path=str(path),
        cwd=header.cwd if isinstance(header.cwd, str) else "",
        created=header.timestamp if isinstance(header.timestamp, str) else iso_from_ms(mtime_ms),
        modified_ms=modified_ms(acc.last_activity, header.timestamp, mtime_ms),
        message_count=acc.count,
        first_message=acc.first or "(no messages)",
        name=acc.name,
        title=(slot.name if slot is not None else header.title if isinstance(header.title, str) else None),
        parent_session=header.parentSession if isinstance(header.parentSession, str) else None,
        all_text=" ".join(texts) if join_texts else "",
        tokens_total=acc.tokens_total,
        tokens_last=acc.tokens_last,
        header_timestamp=isinstance(header.timestamp, str),
        titled=titled,
        assistant_turns=acc.assistants,
        last_role=acc.last_role,
    )
    return summary, acc, texts


def is_stub(assistant_turns: int, title: str | None, first_message: str | None, last_role: str | None) -> bool:
    """A session oh-my-pi 18.3's picker and ``continueRecent`` pass over (session-listing.ts, isEmptySession):
    no assistant message, no title, no first user text, and its last message no tool result (a "pending" or
    "unknown" status: a user message last, or none). A title or a first prompt is worth resuming."""
    if first_message == "(no messages)":  # (what a summary shows for none, as oh-my-pi's listing does)
        first_message = None
    return (
        assistant_turns == 0
        and not (title or "").strip()
        and not (first_message or "").strip()
        and last_role != "toolResult"
    )


# The same in SQL over the listing index's columns (indexschema.py).
STUB_SQL = (
    "(assistant_turns = 0 AND trim(coalesce(title, '')) = '' AND trim(coalesce(first_message, '')) = ''"
    " AND coalesce(last_role, '') != 'toolResult')"
)


def summarize(path: Path, data: bytes, mtime_ms: int) -> Summary | None:
    """Metadata of one file, or None when it is not a session."""
    full = summarize_full(path, data, mtime_ms)
    return None if full is None else full[0]


class SummaryCache:
    """Summaries keyed by path, valid while the file's size and mtime hold."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[int, int, Summary | None]] = {}

    def get(self, path: Path) -> Summary | None:
        try:
            stat = os.stat(path)
        except OSError:
            self._cache.pop(str(path), None)
            return None
        key = str(path)
        cached = self._cache.get(key)
        if cached is not None and cached[0] == stat.st_size and cached[1] == stat.st_mtime_ns:
            return cached[2]
        try:
            data = path.read_bytes()
        except OSError:
            return None
        summary = summarize(path, data, stat.st_mtime_ns // 1_000_000)
        self._cache[key] = (stat.st_size, stat.st_mtime_ns, summary)
        return summary


def matches(summary: Summary, query: str) -> bool:
    needle = query.casefold()
    return any(
        needle in field.casefold()
        for field in (
            summary.name or "",
            summary.title or "",
            summary.first_message,
            summary.all_text,
            summary.session_id,
        )
    )


def sort_key(summary: Summary) -> tuple[int, str]:
    return (-summary.modified_ms, summary.path)


def encode_cursor(summary: Summary) -> str:
    return encode_cursor_of(summary.modified_ms, summary.path)


def encode_cursor_of(modified: int, path: str) -> str:
    raw = msgspec.json.encode([modified, path])
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[int, str] | None:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        modified, path = msgspec.json.decode(raw, type=tuple[int, str])
    except (ValueError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    return (-modified, path)
