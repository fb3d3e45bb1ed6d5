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

from ..context.build import js_time
from ..format.jsonl import decode_lenient


class _Message(msgspec.Struct):
    role: Any = None
    content: Any = None
    timestamp: Any = None


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


def summarize(path: Path, data: bytes, mtime_ms: int) -> Summary | None:
    """Metadata of one file, or None when it is not a session."""
    header: _Line | None = None
    name: str | None = None
    count = 0
    first = ""
    texts: list[str] = []
    last_activity = 0
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            line = decode_lenient(_line_decoder, raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
        if header is None:
            if line.type != "session" or not isinstance(line.id, str):
                return None
            header = line
            continue
        if line.type == "session_info":
            name = (line.name.strip() or None) if isinstance(line.name, str) else None
            continue
        if line.type != "message" or line.message is None:
            continue
        count += 1
        message = line.message
        if message.role not in ("user", "assistant"):
            continue
        stamp = message.timestamp if isinstance(message.timestamp, (int, float)) and not isinstance(message.timestamp, bool) else js_time(line.timestamp)
        if stamp is not None:
            last_activity = max(last_activity, int(stamp))
        text = _text(message.content)
        if not text:
            continue
        texts.append(text)
        if not first and message.role == "user":
            first = text
    if header is None:
        return None
    header_ms = js_time(header.timestamp)
    modified = last_activity if last_activity > 0 else header_ms if header_ms is not None else mtime_ms
    return Summary(
        session_id=header.id,
        path=str(path),
        cwd=header.cwd if isinstance(header.cwd, str) else "",
        created=header.timestamp if isinstance(header.timestamp, str) else iso_from_ms(mtime_ms),
        modified_ms=modified,
        message_count=count,
        first_message=first or "(no messages)",
        name=name,
        title=header.title if isinstance(header.title, str) else None,
        parent_session=header.parentSession if isinstance(header.parentSession, str) else None,
        all_text=" ".join(texts),
    )


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
    raw = msgspec.json.encode([summary.modified_ms, summary.path])
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[int, str] | None:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        modified, path = msgspec.json.decode(raw, type=tuple[int, str])
    except (ValueError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    return (-modified, path)
