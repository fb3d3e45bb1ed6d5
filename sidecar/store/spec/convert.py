"""Converting between pi's format and the spec's: lossless where the target can hold it.

pi -> spec keeps one branch (the path to a leaf): its user, assistant and
tool result messages and its compactions as records, its name and model in
metadata.json; everything else is left out and listed (other branches,
labels, thinking and image blocks, custom entries...). spec -> pi
(operations/convert.py) keeps every record and the name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...format.jsonl import Entry
from .codec import entry_id, translate
from .metadata import fold, new_metadata
from .records import Record, SessionMetadata


@dataclass(slots=True)
class LeftOut:
    kind: str  # entry, part, field, branch, session (wire.ConvertLoss)
    what: str
    entry_ids: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ToSpec:
    metadata: SessionMetadata
    records: list[Record]
    left_out: list[LeftOut]


def records_up_to(path: list[Entry]) -> list[dict[str, Any]]:
    """The entries of ``path`` that are records, as objs to append to a new spec session (ids renumbered)."""
    renumbered: dict[str, str] = {}
    objs: list[dict[str, Any]] = []
    for entry in path:
        obj = entry.obj()
        if obj.get("type") not in ("message", "compaction"):
            continue
        renumbered[entry.id] = entry_id(len(objs) + 1)  # type: ignore[index]  # an entry of a session has its id (Entry.id is typed str | None)
        copy = {k: v for k, v in obj.items() if k not in ("id", "parentId")}
        if copy["type"] == "compaction":
            kept = obj.get("firstKeptEntryId")
            fallback = entry_id(len(objs) + 1)
            copy["firstKeptEntryId"] = renumbered.get(kept, fallback) if isinstance(kept, str) else fallback
        objs.append(copy)
    return objs


def pi_to_spec(session_id: str, header: dict[str, Any], path: list[Entry], all_entries: list[Entry]) -> ToSpec:
    """The records of ``path`` (root -> leaf) and what was left out, with the entries of other branches."""
    on_path = {e.id for e in path}
    seq_of: dict[str, int] = {}
    records: list[Record] = []
    translations = []
    lost: dict[tuple[str, str], list[str]] = {}
    for index, entry in enumerate(path):
        obj = entry.obj()
        kept = None
        if obj.get("type") == "compaction":
            kept_id = obj.get("firstKeptEntryId")
            at = next((i for i, e in enumerate(path) if e.id == kept_id), index)
            kept = next((seq_of[e.id] for e in path[at:index] if e.id in seq_of), len(records) + 1)
        t = translate(obj, len(records) + 1, kept)
        whole = "entry" if t.record is None else "part"
        for kind, what in [(whole, w) for w in t.lost] + [("field", w) for w in t.dropped]:
            lost.setdefault((kind, what), []).append(entry.id)  # type: ignore[arg-type]  # an entry of a session has its id (Entry.id is typed str | None)
        if t.record is not None:
            seq_of[entry.id] = t.record.seq  # type: ignore[index]  # an entry of a session has its id (Entry.id is typed str | None)
            records.append(t.record)
        translations.append(t)
    off_path = [e for e in all_entries if e.id not in on_path]
    left_out = [LeftOut(kind, what, ids) for (kind, what), ids in lost.items()]
    if off_path:
        left_out.insert(
            0,
            LeftOut(
                "branch",
                f"{len(off_path)} entries on other branches (the format holds one chain)",
                [e.id for e in off_path],  # type: ignore[misc]  # an entry of a session has its id (Entry.id is typed str | None)
            ),
        )
    if header.get("cwd"):
        left_out.append(LeftOut("session", f"the working folder {header['cwd']!r} (the format has none)"))
    metadata = fold(new_metadata(session_id, str(header.get("timestamp") or "")), translations)
    return ToSpec(metadata, records, left_out)
