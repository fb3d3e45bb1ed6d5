"""How a session file maps onto rows, and back.

A file is split at its newlines: each newline-terminated line is one row of
``sidecar_lines`` (its exact bytes, whatever they hold), and what follows the
last newline (nothing, or a torn line) is the session row's ``tail``. Joining
the rows with newlines and adding the tail gives the file back byte for byte.

The listing fields are folded line by line with the file store's own rules
(store/index/listing.py's ``Accumulator``), so both stores list a session alike, and
an append extends the stored fold instead of reading the session again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypedDict, overload

from ...format.titleslot import looks_like_slot, read_slot
from ..ids import valid_session_id
from ..index.listing import Accumulator, decode_line, iso_from_ms, modified_ms


@dataclass(slots=True)
class Placement:
    """Where the session is, as it would be in a file root: ``<area>/<folder>/<file_name>``."""

    area: str  # live, archive, trash
    folder: str  # --<cwd-encoded>--
    file_name: str  # <timestamp>_<id>.jsonl

    @property
    def relative(self) -> str:
        base = {"live": "", "archive": ".archive/", "trash": ".trash/"}[self.area]
        return f"{base}{self.folder}/{self.file_name}"


class SessionRow(TypedDict):
    """A ``sidecar_sessions`` row as the open reads it (lease.py's columns, schema.py's types)."""

    id: str
    area: str
    folder: str
    file_name: str
    cwd: str
    created: str
    parent_session: str | None
    title: str | None
    name: str | None
    first_message: str
    message_count: int
    last_activity: int
    modified_ms: int
    tokens_total: int
    tokens_last: int
    line_count: int
    tail: bytes
    lease_owner: str | None
    lease_fence: int
    lease_expires: datetime | None


@overload
def no_nul(text: str) -> str: ...


@overload
def no_nul(text: None) -> None: ...


def no_nul(text: str | None) -> str | None:
    """``text`` for a text column: PostgreSQL's text holds no NUL (a line keeps it: lines are bytea)."""
    return text.replace("\x00", "") if text is not None and "\x00" in text else text


@dataclass(slots=True)
class Fold:
    """The listing fields of a session so far (the session row's columns)."""

    session_id: str = ""
    cwd: str = ""
    created: str = ""
    header_timestamp: str | None = None
    parent_session: str | None = None
    title: str | None = None
    acc: Accumulator = field(default_factory=Accumulator)
    # Whether the header was seen (lines before it are a title slot or damage).
    has_header: bool = False
    # The first line is oh-my-pi's title line: the session's name is that line's (store/files/titles.py).
    titled: bool = False

    def modified(self, fallback_ms: int) -> int:
        return modified_ms(self.acc.last_activity, self.header_timestamp, fallback_ms)

    def columns(self, fallback_ms: int) -> dict[str, str | int | None]:
        acc = self.acc
        name = no_nul(acc.name)
        return {
            "name": name,
            "name_folded": fold_text(name),
            "first_message": no_nul(acc.first),
            "message_count": acc.count,
            "last_activity": acc.last_activity,
            "modified_ms": self.modified(fallback_ms),
            "tokens_total": acc.tokens_total,
            "tokens_last": acc.tokens_last,
        }

    @classmethod
    def of_row(cls, row: SessionRow) -> Fold:
        """The fold as a session row stored it (to extend it with appended lines)."""
        return cls(
            session_id=row["id"],
            cwd=row["cwd"],
            created=row["created"],
            header_timestamp=row["created"],
            has_header=True,
            acc=Accumulator(
                row["message_count"],
                row["first_message"],
                row["last_activity"],
                row["name"],
                row["tokens_total"],
                row["tokens_last"],
            ),
        )


def fold_text(text: str | None) -> str | None:
    """What a query is matched against: Python's casefolding, as the file store matches
    ("STRASSE" finds "straße", which PostgreSQL's lower() does not); written from here, never by SQL."""
    return text.casefold() if isinstance(text, str) else None


def split_file(data: bytes) -> tuple[list[bytes], bytes]:
    """The file's newline-terminated lines (without their newline) and what follows the last one."""
    pieces = data.split(b"\n")
    return pieces[:-1], pieces[-1]


def join_file(lines: list[bytes], tail: bytes) -> bytes:
    """``split_file`` undone. One join, the tail its last piece: a session's tens of megabytes are
    copied once (joining, then adding the newline and tail, copied them twice)."""
    if not lines:
        return tail
    lines.append(tail)
    try:
        return b"\n".join(lines)
    finally:
        lines.pop()


def fold_lines(fold: Fold, lines: list[bytes], first_seq: int) -> tuple[list[str | None], list[tuple[int, str]]]:
    """Fold ``lines`` (numbered from ``first_seq``) into ``fold``.

    Returns each line's entry id (None when it has none) and the searchable
    texts as (seq, text): the message texts ``session/list``'s query looks in.
    """
    ids: list[str | None] = []
    texts: list[tuple[int, str]] = []
    for offset, raw in enumerate(lines):
        seq = first_seq + offset
        if not fold.has_header and seq == 0 and looks_like_slot(raw):
            slot = read_slot(raw)[0]  # oh-my-pi's title line: its title wins over the header's
            fold.titled = True
            if slot is not None:
                fold.title = no_nul(slot.name)
            ids.append(None)
            continue
        line = decode_line(raw)
        if line is None:
            ids.append(None)
            continue
        ids.append(line.id if isinstance(line.id, str) else None)
        if not fold.has_header:
            if line.type != "session" or not isinstance(line.id, str):
                continue
            fold.has_header = True
            fold.session_id = line.id
            fold.cwd = no_nul(line.cwd) if isinstance(line.cwd, str) else ""
            if isinstance(line.timestamp, str):
                fold.created = no_nul(line.timestamp)
                fold.header_timestamp = line.timestamp
            if fold.title is None and isinstance(line.title, str):
                fold.title = no_nul(line.title)
            fold.parent_session = no_nul(line.parentSession) if isinstance(line.parentSession, str) else None
            continue
        text = fold.acc.feed(line)
        if text:
            texts.append((seq, no_nul(text)))
    return ids, texts


def id_of_file_name(name: str) -> str | None:
    """The session id in pi's ``<timestamp>_<id>.jsonl``, or None."""
    if not name.endswith(".jsonl") or "_" not in name:
        return None
    found = name[: -len(".jsonl")].rsplit("_", 1)[1]
    return found if valid_session_id(found) else None


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def created_or(fold: Fold, fallback_ms: int) -> str:
    return fold.created or iso_from_ms(fallback_ms)
