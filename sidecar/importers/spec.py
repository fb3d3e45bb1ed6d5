"""Importing a spec-format session folder (``<ULID>/session.jsonl`` + ``metadata.json``) as pi entries.

``import_spec(folder)`` answers the same shape as the other importers' ``Imported``
(tool, original_id, source, cwd, timestamp, entries, tally, name, extra,
session_id, origin()), so ``session/import --from spec`` writes it like any other
source. Message and compaction records are mapped (store/spec/codec.py); a
damaged line is reported with its number and skipped; metadata.json's fields pi
has no place for (source, cronJobId, systemPromptOverride, metrics) are kept in
a ``custom`` entry, never dropped. The session id is the ULID itself, so a
second import of the same folder finds the first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from ..errors import SessionNotFound
from ..format.entry import Entry
from ..store.spec import (
    METADATA_FILE,
    SESSION_FILE,
    EntryBuilder,
    MessageRecord,
    check_ulid,
    decode_metadata,
    read_records,
    rebuild,
)
from .common import Imported, Tally
from .made import Assistant

TOOL = "spec"
METADATA_ENTRY = "spec-metadata"


class SpecImport(Imported):
    """A spec session as pi entries; its ULID stays its id (a valid pi session id), so a second
    import finds the first."""

    @property
    def session_id(self) -> str:
        return self.original_id


def import_spec(folder: Path, cwd: str = "") -> SpecImport:
    """The pi entries of the spec session in ``folder`` (or of the folder holding a ``session.jsonl`` given)."""
    folder = folder.parent if folder.name == SESSION_FILE else folder
    check_ulid(folder.name)
    if not (folder / SESSION_FILE).is_file():
        raise SessionNotFound(f"{folder} holds no session.jsonl: not a spec session folder", path=str(folder))
    read = read_records(folder / SESSION_FILE)
    tally = Tally()
    # The file again, for the text of damaged lines only (read_records read it once already).
    damaged = read.damaged_lines or read.torn_tail_at is not None
    lines = (folder / SESSION_FILE).read_bytes().split(b"\n") if damaged else []
    for number in read.damaged_lines:
        tally.damaged.append({"line": number, "error": f"not a record of schemaVersion 1: {lines[number - 1][:80]!r}"})
        tally.count("damaged line", "skipped", "a line that is no record this format defines: reported and skipped")
    if read.torn_tail_at is not None:
        tally.damaged.append({"line": len(lines), "error": "a partial last line (a write cut short)"})
        tally.count("partial last line", "skipped", "a crash's partial line, which the format's readers ignore")
    try:
        metadata = decode_metadata((folder / METADATA_FILE).read_bytes())
    except (OSError, ValueError):
        metadata = rebuild(folder.name, read.records, read.records[0].timestamp if read.records else "")
        tally.count(
            "metadata.json", "skipped", "missing or damaged: rebuilt from session.jsonl (its name and source are lost)"
        )
    builder = EntryBuilder()
    dicts: list[dict[str, Any]] = []
    for record in read.records:
        dicts.append(builder.add(record))
        kind = f"message/{record.role}" if isinstance(record, MessageRecord) else "compaction"
        tally.count(kind, "mapped")
    unheld = {
        k: v
        for k, v in msgspec.to_builtins(metadata).items()
        if k in ("source", "cronJobId", "systemPromptOverride", "metrics", "model") and v is not None
    }
    if dicts and unheld:
        dicts.append(
            {
                "type": "custom",
                "id": "m0000000",
                "parentId": dicts[-1]["id"],
                "timestamp": metadata.lastMessageAt or dicts[-1]["timestamp"],
                "customType": METADATA_ENTRY,
                "data": unheld,
            }
        )
        tally.count("metadata.json", "kept", "source, cronJobId, model and metrics kept in a custom entry")
    entries: list[dict[str, object] | Entry | Assistant] = list(dicts)
    return SpecImport(
        tool=TOOL,
        original_id=folder.name,
        source=str(folder),
        cwd=cwd,
        timestamp=metadata.createdAt or (dicts[0]["timestamp"] if dicts else ""),
        entries=entries,
        tally=tally,
        name=metadata.name,
    )
