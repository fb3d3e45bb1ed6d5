"""Session metadata for pickers, with pi's rules, cached by file size and mtime.

modified = the time of the last user or assistant message (its own epoch-ms
timestamp, else the entry's), then the header's time, then the file's mtime.
messageCount counts message entries; firstMessage is the first user text.
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import msgspec

from ..format.jsonl import decode_lenient
from ..format.jsstr import js_trim
from ..format.jstime import js_time
from ..format.usage import usage_tokens
from ..format.titleslot import TitleSlot, looks_like_slot, read_slot


class _Message(msgspec.Struct):
    role: Any = None
    content: Any = None
    timestamp: Any = None
    usage: Any = None
    stopReason: Any = None


class _Line(msgspec.Struct):
    type: Any = None
    id: Any = None
    timestamp: Any = None
    cwd: Any = None
    title: Any = None
    parentSession: Any = None
    name: Any = None
    message: _Message | None = None


_line_decoder = msgspec.json.Decoder(_Line)


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


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


def iso_from_ms(ms: int) -> str:
    moment = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class Accumulator:
    """pi's listing fields, folded line by line (so appended lines extend a stored state)."""

    __slots__ = ("count", "first", "last_activity", "name", "tokens_total", "tokens_last")

    def __init__(
        self, count: int = 0, first: str = "", last_activity: int = 0, name: str | None = None,
        tokens_total: int = 0, tokens_last: int = 0,
    ) -> None:
        self.count, self.first, self.last_activity, self.name = count, first, last_activity, name
        self.tokens_total, self.tokens_last = tokens_total, tokens_last

    def feed(self, line: _Line) -> str | None:
        """Fold one entry line in; returns its searchable text, if any."""
        if line.type == "session_info":
            self.name = (js_trim(line.name) or None) if isinstance(line.name, str) else None
            return None
        if line.type != "message" or line.message is None:
            return None
        self.count += 1
        message = line.message
        if message.role not in ("user", "assistant"):
            return None
        if message.role == "assistant" and message.stopReason not in ("aborted", "error"):
            used = usage_tokens(message.usage)
            if used > 0:
                self.tokens_total += used
                self.tokens_last = used
        stamp = message.timestamp if isinstance(message.timestamp, (int, float)) and not isinstance(message.timestamp, bool) else js_time(line.timestamp)
        if stamp is not None:
            self.last_activity = max(self.last_activity, int(stamp))
        text = _text(message.content)
        if not text:
            return None
        if not self.first and message.role == "user":
            self.first = text
        return text


def decode_line(raw: bytes) -> _Line | None:
    if not raw.strip():
        return None
    try:
        return decode_lenient(_line_decoder, raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def modified_ms(last_activity: int, header_timestamp: Any, mtime_ms: int) -> int:
    header_ms = js_time(header_timestamp)
    return last_activity if last_activity > 0 else header_ms if header_ms is not None else mtime_ms


def summarize_full(path: Path | str, data: bytes, mtime_ms: int) -> tuple[Summary, Accumulator, list[str]] | None:
    """Metadata of one file with its folded state and texts, or None when it is not a session."""
    header: _Line | None = None
    acc = Accumulator()
    texts: list[str] = []
    slot: TitleSlot | None = None
    first = True
    for raw in data.split(b"\n"):
        if first and looks_like_slot(raw):
            slot = read_slot(raw)[0]  # oh-my-pi's title line (titleslot.py): its title wins over the header's
            first = False
            continue
        first = False
        line = decode_line(raw)
        if line is None:
            continue
        if header is None:
            if line.type != "session" or not isinstance(line.id, str):
                return None
            header = line
            continue
        text = acc.feed(line)
        if text:
            texts.append(text)
    if header is None:
        return None
    summary = Summary(
        session_id=header.id,
        path=str(path),
        cwd=header.cwd if isinstance(header.cwd, str) else "",
        created=header.timestamp if isinstance(header.timestamp, str) else iso_from_ms(mtime_ms),
        modified_ms=modified_ms(acc.last_activity, header.timestamp, mtime_ms),
        message_count=acc.count,
        first_message=acc.first or "(no messages)",
        name=acc.name,
        title=(slot.name if slot is not None else header.title if isinstance(header.title, str) else None),
        parent_session=header.parentSession if isinstance(header.parentSession, str) else None,
        all_text=" ".join(texts),
        tokens_total=acc.tokens_total,
        tokens_last=acc.tokens_last,
        header_timestamp=isinstance(header.timestamp, str),
    )
    return summary, acc, texts


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
        for field in (summary.name or "", summary.title or "", summary.first_message, summary.all_text, summary.session_id)
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
