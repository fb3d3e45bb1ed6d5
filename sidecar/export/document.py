"""A selection of entries as an ``ExportDocument``: redacted, one object per entry.

Markdown, HTML and JSON are all written from this one document, so the three
formats show the same entries with the same placeholders.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from ..format.codec import encode_js
from ..format.entry import Entry
from .redact import Redactor
from .redact.verdicts import CleanEntries
from .shape import ExportDocument, ExportedEntry, ExportedSession, RedactionCount, RedactionSummary
from .walk import Selection

# Fields each kind of entry maps onto ExportedEntry by name; the rest of a line goes to ``extra``.
_ENVELOPE = {"type", "id", "parentId", "timestamp"}
_MESSAGE_FIELDS = ("provider", "model", "usage", "stopReason", "toolCallId", "toolName", "isError")
_TOP_FIELDS = {
    "compaction": ("summary", "firstKeptEntryId", "tokensBefore"),
    "branch_summary": ("summary", "fromId"),
    "custom": ("customType", "data"),
    "custom_message": ("customType", "content", "display"),
    "thinking_level_change": ("thinkingLevel",),
    "label": ("targetId", "label"),
    "session_info": ("name",),
    "mode_change": ("mode",),
    "model_change": ("provider", "model"),
}
_FIELD_TYPES = {
    "summary": str,
    "firstKeptEntryId": str,
    "tokensBefore": int,
    "fromId": str,
    "customType": str,
    "display": bool,
    "thinkingLevel": str,
    "targetId": str,
    "label": str,
    "name": str,
    "mode": str,
    "provider": str,
    "model": str,
    "usage": dict,
    "stopReason": str,
    "toolCallId": str,
    "toolName": str,
    "isError": bool,
}


def build_document(
    header: Mapping[str, object],
    name: str | None,
    selection: Selection,
    redactor: Redactor | None,
    clean: CleanEntries | None = None,
) -> ExportDocument:
    """``clean``: the entries of this session an earlier export found nothing to redact in (passed
    over without a look), added to as this one finds more."""
    entries = [
        _entry(_redacted(obj, raw, entry, redactor, clean), parent, selection.labels)
        for obj, parent, raw, entry in selection.entries
    ]
    session = ExportedSession(
        id=str(header.get("id", "")),
        timestamp=_str(header.get("timestamp")),
        cwd=_str(header.get("cwd")),
        name=redactor.text(name) if redactor and name else name,
        parentSession=_str(header.get("parentSession")),
    )
    return ExportDocument(
        scope=selection.scope, leafId=selection.leaf_id, session=session, entries=entries, redaction=summary(redactor)
    )


def summary(redactor: Redactor | None) -> RedactionSummary:
    if redactor is None:
        return RedactionSummary(applied=False)
    counts = redactor.report()
    return RedactionSummary(
        applied=True, total=sum(counts.values()), kinds=[RedactionCount(kind, count) for kind, count in counts.items()]
    )


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _redacted(
    obj: dict[str, Any], raw: bytes, entry: Entry, redactor: Redactor | None, clean: CleanEntries | None
) -> dict[str, Any]:
    if redactor is None:
        return obj
    if clean is None:
        return redactor.line(obj, raw)
    if clean.known(entry):
        return obj
    out = redactor.line(obj, raw)
    if out is obj:  # nothing in it to redact (``line`` copies only what it changes)
        clean.add(entry)
    return out


def _entry(obj: dict[str, Any], parent: str | None, labels: dict[str, str]) -> ExportedEntry:
    kind_value = obj.get("type")
    kind = kind_value if isinstance(kind_value, str) else "unknown"
    entry_id = str(obj.get("id"))
    label = labels.get(entry_id)
    fields: dict[str, Any] = {}
    rest = {k: v for k, v in obj.items() if k not in _ENVELOPE}
    if kind == "message" and isinstance(rest.get("message"), dict):
        message = dict(rest.pop("message"))
        fields["role"] = _str(message.pop("role", None))
        fields["content"] = _blocks(message.pop("content", None))
        for key in _MESSAGE_FIELDS:
            if key in message:
                fields[key] = message.pop(key)
        message.pop("timestamp", None)
        if message:
            rest["message"] = message
    else:
        for key in _TOP_FIELDS.get(kind, ()):
            if key in rest:
                fields[key] = rest.pop(key)
        if kind == "custom_message":
            fields["content"] = _blocks(fields.get("content"))
        if kind == "model_change" and fields.get("model") is None and "modelId" in rest:
            fields["model"] = rest.pop("modelId")
    clean = {k: v for k, v in fields.items() if v is not None and _fits(k, v)}
    dropped = {k: fields[k] for k in fields if k not in clean and fields[k] is not None}
    rest.update(dropped)  # a field of an unexpected type is kept, in extra
    if kind == "label":
        clean.pop("label", None)
        if isinstance(fields.get("label"), str):
            rest["setLabel"] = fields["label"]
    return ExportedEntry(
        id=entry_id,
        parentId=parent,
        kind=kind,
        timestamp=_str(obj.get("timestamp")),
        label=label,
        extra=rest or None,
        **clean,
    )


def _fits(key: str, value: object) -> bool:
    expected = _FIELD_TYPES.get(key)
    if expected is None:
        return True
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, expected)


def _blocks(content: object) -> list[dict[str, Any]] | None:
    if content is None:
        return None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [block if isinstance(block, dict) else {"type": "text", "text": str(block)} for block in content]
    return [{"type": "text", "text": encode_js(msgspec.json.encode, content).decode()}]
