"""Reading session.jsonl: whole records, a damaged line skipped and counted, a torn last line ignored.

Spec section 7.6: each record is one line written in a single append, so a
crash leaves at most a partial last line (no newline), which a reader ignores.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from .records import SCHEMA_VERSION, Record, decode_record


@dataclass(slots=True)
class ReadRecords:
    records: list[Record] = field(default_factory=list)
    damaged_lines: list[int] = field(default_factory=list)  # 1-based numbers of lines that are no record we know
    torn_tail_at: int | None = None  # offset of a partial last line, if any
    size: int = 0


def parse_records(data: bytes) -> ReadRecords:
    out = ReadRecords(size=len(data))
    end = data.rfind(b"\n") + 1
    if end < len(data):
        out.torn_tail_at = end
    # The last piece of the split is what follows the last newline (empty, or the torn tail): never a record.
    for number, line in enumerate(data.split(b"\n")[:-1], start=1):
        if not line.strip():
            continue
        try:
            record = decode_record(line)
        except (msgspec.ValidationError, msgspec.DecodeError):
            out.damaged_lines.append(number)
            continue
        if record.schemaVersion != SCHEMA_VERSION:  # a newer writer's record: not ours to interpret
            out.damaged_lines.append(number)
            continue
        out.records.append(record)
    return out


def read_records(path: Path) -> ReadRecords:
    return parse_records(path.read_bytes())
