"""session/list over a spec root: metadata.json of every session folder, newest message first (S7.5).

A missing or damaged metadata.json is rebuilt in memory here (the next open
writes it back); the first user message is read from the head of session.jsonl.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .file import parse_records
from .layout import METADATA_FILE, SESSION_FILE, SpecLayout
from .metadata import rebuild
from .records import MessageRecord, SessionMetadata, TextBlock, decode_metadata

HEAD_BYTES = 64 * 1024


@dataclass(slots=True)
class Listed:
    folder: Path
    area: str | None
    metadata: SessionMetadata
    first_message: str


def _first_message(folder: Path) -> str:
    try:
        with open(folder / SESSION_FILE, "rb") as file:
            head = file.read(HEAD_BYTES)
    except OSError:
        return ""
    for record in parse_records(head).records:
        if isinstance(record, MessageRecord) and record.role == "user":
            return " ".join(b.text for b in record.content if isinstance(b, TextBlock))
    return ""


def listed(folder: Path, area: str | None) -> Listed | None:
    try:
        metadata = decode_metadata((folder / METADATA_FILE).read_bytes())
        if metadata.id != folder.name:
            raise ValueError("metadata of another session")
    except (OSError, ValueError):
        try:
            data = (folder / SESSION_FILE).read_bytes()
        except OSError:
            return None
        metadata = rebuild(folder.name, parse_records(data).records, "")
    return Listed(folder, area, metadata, _first_message(folder))


def read_listing(layout: SpecLayout, areas: tuple[str | None, ...]) -> list[Listed]:
    found = [item for area in areas for folder in layout.folders(area) if (item := listed(folder, area)) is not None]
    # ISO 8601 in UTC sorts as text; ties go to the newer id (ULIDs sort by creation).
    found.sort(key=lambda s: (s.metadata.lastMessageAt, s.metadata.id), reverse=True)
    return found
