"""Spec records <-> pi-shaped entries.

A spec session is a single chain: record ``seq`` order is entry order, and
each entry's parent is the one before it. Entry ids are made from ``seq``
(``entry_id``), so they survive a reopen. Message records become message
entries (a tool result gets back its ``toolName`` from the call it answers),
the compaction record becomes a compaction entry whose ``firstKeptEntryId`` is
the entry of ``firstKeptSeq`` and whose ``details`` hold the file lists.

The other way, ``translate`` says for one pi entry what the format keeps:
a record, a change to metadata.json (a ``session_info`` name, a
``model_change``, an assistant's model and usage), and what it cannot hold
(``lost``). The native store refuses an entry with anything lost; the
converter leaves it out and lists it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .records import CompactionRecord, ContentBlock, MessageRecord, Record, TextBlock, ToolCallBlock

SPEC_ROLES = ("user", "assistant", "toolResult")
# The fields of a pi message a record carries (toolName comes back from the call it answers).
_HELD_FIELDS = {
    "user": {"role", "content", "timestamp"},
    "assistant": {"role", "content", "timestamp"},
    "toolResult": {"role", "content", "timestamp", "toolCallId", "toolName", "isError"},
}


def entry_id(seq: int) -> str:
    """The entry id of record ``seq``: 8 hex digits, as pi's ids look."""
    return f"{seq:08x}"


def iso_to_ms(iso: str) -> int | None:
    try:
        return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def ms_to_iso(ms: object) -> str | None:
    if isinstance(ms, (int, float)) and not isinstance(ms, bool):
        try:
            moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    return None


# -- records -> entries -----------------------------------------------------------


def _content_obj(content: list[ContentBlock]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, TextBlock):
            blocks.append({"type": "text", "text": block.text})
        else:
            blocks.append({"type": "toolCall", "id": block.id, "name": block.name, "arguments": block.arguments})
    return blocks


class EntryBuilder:
    """Turns a session's records, in file order, into pi-shaped entry dicts (one chain)."""

    def __init__(self) -> None:
        self.parent: str | None = None
        self.tool_names: dict[str, str] = {}
        self.seqs: list[int] = []  # seq of every entry made, in order

    def copy(self) -> EntryBuilder:
        other = EntryBuilder()
        other.parent, other.tool_names, other.seqs = self.parent, dict(self.tool_names), list(self.seqs)
        return other

    def add(self, record: Record) -> dict[str, Any]:
        obj = self._entry(record)
        self.parent = obj["id"]
        self.seqs.append(record.seq)
        return obj

    def _entry(self, record: Record) -> dict[str, Any]:
        # An assistant message's model, usage and stop details have no place in a record: metadata.json
        # keeps the latest model and the usage totals; stopReason is read off the content.
        base = {"id": entry_id(record.seq), "parentId": self.parent, "timestamp": record.timestamp}
        if isinstance(record, CompactionRecord):
            kept = next((s for s in self.seqs if s >= record.firstKeptSeq), record.seq)
            return {
                "type": "compaction",
                **base,
                "summary": record.summary,
                "firstKeptEntryId": entry_id(kept),
                "tokensBefore": record.tokensBefore,
                "details": {"readFiles": list(record.readFiles), "modifiedFiles": list(record.modifiedFiles)},
            }
        message: dict[str, Any] = {"role": record.role, "content": _content_obj(record.content)}
        if record.role == "assistant":
            for block in record.content:
                if isinstance(block, ToolCallBlock):
                    self.tool_names[block.id] = block.name
            calls = any(isinstance(b, ToolCallBlock) for b in record.content)
            message["stopReason"] = "toolUse" if calls else "stop"
        elif record.role == "toolResult":
            call_id = record.toolCallId if isinstance(record.toolCallId, str) else ""
            message["toolCallId"] = call_id
            message["toolName"] = self.tool_names.get(call_id, "")
            message["isError"] = record.isError if isinstance(record.isError, bool) else False
        ms = iso_to_ms(record.timestamp)
        if ms is not None:
            message["timestamp"] = ms
        return {"type": "message", **base, "message": message}


# -- entries -> records -----------------------------------------------------------


@dataclass(slots=True)
class Translation:
    """What the spec format keeps of one pi entry."""

    record: Record | None = None
    name: str | None = None  # session_info: metadata.json's name
    model: str | None = None  # model_change, or the model an assistant message names
    usage: Mapping[str, object] | None = None  # an assistant message's usage, for metadata.json's metrics
    lost: list[str] = field(default_factory=list)  # what cannot be held, in words
    # Fields of a message the record has no place for (model, usage, stopReason, a tool result's details):
    # the native store accepts the message without them (PROTOCOL.md says so); a conversion lists them.
    dropped: list[str] = field(default_factory=list)


def _blocks(content: Any, role: str, lost: list[str]) -> list[ContentBlock]:
    if isinstance(content, str):
        return [TextBlock(text=content)]
    blocks: list[ContentBlock] = []
    for block in content if isinstance(content, list) else []:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            blocks.append(TextBlock(text=block["text"]))
        elif kind == "toolCall" and role == "assistant" and isinstance(block.get("id"), str):
            arguments = block.get("arguments")
            blocks.append(
                ToolCallBlock(
                    id=block["id"],
                    name=str(block.get("name", "")),
                    arguments=arguments if isinstance(arguments, dict) else {},
                )
            )
        else:
            lost.append(f"a {kind or 'malformed'} content block ({role} message)")
    return blocks


def _message_time(message: dict[str, Any], entry_time: str) -> str:
    """A record's time: the message's own (pi's message.timestamp, ms), which pi keeps, and not the
    entry's (the append's), but the entry's string itself where both name the same millisecond (a
    record read back and written again keeps its bytes), or where the message has no time."""
    own = message.get("timestamp")
    if not isinstance(own, (int, float)) or isinstance(own, bool) or own == iso_to_ms(entry_time):
        return entry_time
    return ms_to_iso(own) or entry_time


def translate(obj: dict[str, Any], seq: int, kept_seq: int | None = None) -> Translation:
    """One pi entry (a dict) as record ``seq``. ``kept_seq``: for a compaction, the seq its
    ``firstKeptEntryId`` stands for (the caller knows the session's entries)."""
    kind = obj.get("type")
    timestamp = stamp if isinstance(stamp := obj.get("timestamp"), str) else ""
    out = Translation()
    if kind == "message":
        message: dict[str, Any] = found if isinstance(found := obj.get("message"), dict) else {}
        role = message.get("role")
        if role not in SPEC_ROLES:
            out.lost.append(f"a {role} message (the format holds user, assistant and toolResult messages only)")
            return out
        content = _blocks(message.get("content"), role, out.lost)
        held = _HELD_FIELDS[role]
        out.dropped = [f"{role} message field {key!r}" for key in message if key not in held]
        record = MessageRecord(seq=seq, role=role, content=content, timestamp=_message_time(message, timestamp))
        if role == "toolResult":
            record.toolCallId = str(message.get("toolCallId", ""))
            record.isError = bool(message.get("isError", False))
        elif role == "assistant":
            if isinstance(message.get("model"), str) and message["model"]:
                out.model = message["model"]
            if isinstance(message.get("usage"), dict):
                out.usage = message["usage"]
        out.record = record
    elif kind == "compaction":
        details: dict[str, Any] = found if isinstance(found := obj.get("details"), dict) else {}
        read = [f for f in details.get("readFiles") or [] if isinstance(f, str)]
        modified = [f for f in details.get("modifiedFiles") or [] if isinstance(f, str)]
        tokens = obj.get("tokensBefore")
        out.record = CompactionRecord(
            seq=seq,
            firstKeptSeq=kept_seq if kept_seq is not None else seq,
            summary=str(obj.get("summary", "")),
            tokensBefore=tokens if isinstance(tokens, int) else 0,
            readFiles=read,
            modifiedFiles=modified,
            timestamp=timestamp,
        )
    elif kind == "session_info":
        name = obj.get("name")
        out.name = name.strip() if isinstance(name, str) else ""
    elif kind == "model_change":
        model = obj.get("modelId") or obj.get("model")
        if isinstance(model, str) and model:
            out.model = model
        else:
            out.lost.append("a model_change entry without a model")
    elif kind == "label":
        out.lost.append("a label (the format has no labels)")
    elif kind == "branch_summary":
        out.lost.append("a branch summary (the format has no branches)")
    else:
        out.lost.append(f"a {kind} entry (the format has no such record)")
    return out
