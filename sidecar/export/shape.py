"""The JSON export's shape: one object per entry, stable for other tools to read.

protocol/export.schema.json is generated from these Structs (``python -m sidecar.export.shape``);
a test fails when it is stale. Fields that do not apply to an entry's kind are left out.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Final, Literal

import msgspec

EXPORT_FORMAT: Final = "session-sidecar/export"
EXPORT_VERSION: Final = 1


class ExportedSession(msgspec.Struct, omit_defaults=True, kw_only=True):
    id: str
    timestamp: str | None = None
    cwd: str | None = None
    # The session's name (its last session_info / title), if it has one.
    name: str | None = None
    parentSession: str | None = None


class ExportedEntry(msgspec.Struct, omit_defaults=True, kw_only=True):
    """One entry. ``kind`` is the entry's ``type`` in the session file."""

    id: str
    parentId: str | None
    kind: str
    timestamp: str | None = None
    # The label set on this entry, if any.
    label: str | None = None
    # message entries: role and content blocks (a string content becomes one text block).
    role: str | None = None
    content: list[dict[str, Any]] | None = None
    provider: str | None = None
    model: str | None = None
    usage: dict[str, Any] | None = None
    stopReason: str | None = None
    toolCallId: str | None = None
    toolName: str | None = None
    isError: bool | None = None
    # compaction and branch_summary: the summary text; compaction: where the kept part begins
    # and the tokens it folded; branch_summary: the entry the summarized branch left from.
    summary: str | None = None
    firstKeptEntryId: str | None = None
    tokensBefore: int | None = None
    fromId: str | None = None
    # custom / custom_message
    customType: str | None = None
    data: Any = None
    display: bool | None = None
    # thinking_level_change, label, session_info, mode_change
    thinkingLevel: str | None = None
    targetId: str | None = None
    name: str | None = None
    mode: str | None = None
    # Every other field of the line, as written (kinds this shape does not spell out).
    extra: dict[str, Any] | None = None


class RedactionCount(msgspec.Struct):
    kind: str
    count: int


class RedactionSummary(msgspec.Struct, kw_only=True):
    applied: bool
    # Secrets replaced, all kinds together (a secret met twice counts twice).
    total: int = 0
    kinds: list[RedactionCount] = []


class ExportDocument(msgspec.Struct, kw_only=True):
    format: Literal["session-sidecar/export"] = EXPORT_FORMAT
    version: Literal[1] = EXPORT_VERSION
    # "path": root to leafId; "tree": every entry, parents before children.
    scope: Literal["path", "tree"]
    leafId: str | None
    session: ExportedSession
    entries: list[ExportedEntry]
    redaction: RedactionSummary


SCHEMA_PATH = Path(__file__).resolve().parents[2] / "protocol" / "export.schema.json"


def schema_text() -> str:
    schema = msgspec.json.schema(ExportDocument)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "session-sidecar export (session/export format json)"
    return msgspec.json.format(msgspec.json.encode(schema), indent=2).decode() + "\n"


if __name__ == "__main__":
    SCHEMA_PATH.write_text(schema_text())
    print(f"wrote {SCHEMA_PATH}", file=sys.stderr)
