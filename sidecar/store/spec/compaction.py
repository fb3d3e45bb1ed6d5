"""What a spec compaction summarizes, and the record lists it carries (section 7.5.3).

Pure: from the session's chain of entries to a ``Plan``; the service asks a
summarizer and appends one compaction entry, which the writer turns into the
``compaction`` record (nothing is rewritten: S7.6).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import msgspec

from ...format.codec import encode_js
from ...format.jsonl import Entry

READ_TOOLS = frozenset({"read", "read_file"})
MODIFY_TOOLS = frozenset({"write", "edit", "write_file"})
_encoder = msgspec.json.Encoder()


@dataclass(slots=True)
class Plan:
    summarized: list[dict[str, Any]]  # the messages to summarize (pi-shaped: role, content)
    first_kept_id: str
    previous_summary: str | None
    read_files: list[str]
    modified_files: list[str]
    tokens_before: int


def estimate_tokens(message: dict[str, Any]) -> int:
    """Section 7.4: chars / 4, over text and tool calls."""
    chars = 0
    content = message.get("content")
    for block in content if isinstance(content, list) else [{"type": "text", "text": content or ""}]:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            chars += len(block.get("text") or "")
        elif block.get("type") == "toolCall":
            chars += len(str(block.get("name"))) + len(encode_js(_encoder.encode, block.get("arguments") or {}))
    return math.ceil(chars / 4)


def _path_argument(arguments: object) -> str | None:
    if isinstance(arguments, dict):
        for key in ("path", "file_path", "filePath"):
            if isinstance(arguments.get(key), str) and arguments[key]:
                return arguments[key]
    return None


def file_operations(messages: list[dict[str, Any]], read: set[str], modified: set[str]) -> None:
    for message in messages:
        if message.get("role") != "assistant":
            continue
        for block in message.get("content") or []:
            if not isinstance(block, dict) or block.get("type") != "toolCall":
                continue
            path = _path_argument(block.get("arguments"))
            if path is None:
                continue
            if block.get("name") in READ_TOOLS:
                read.add(path)
            elif block.get("name") in MODIFY_TOOLS:
                modified.add(path)


def find_cut(messages: list[dict[str, Any]], keep_recent_tokens: int) -> int | None:
    """Index of the first kept message: walk back until ``keep_recent_tokens`` are kept, then forward to a
    user or assistant message (never a tool result, whose call would be summarized away: S7.13). None: no cut."""
    kept = 0
    for index in range(len(messages) - 1, -1, -1):
        kept += estimate_tokens(messages[index])
        if kept >= keep_recent_tokens:
            for cut in range(index, len(messages)):
                if messages[cut].get("role") in ("user", "assistant"):
                    return cut if cut > 0 else None
            return None
    return None


def plan(path: list[Entry], keep_recent_tokens: int) -> Plan | None:
    """The compaction of the chain ``path``; None when there is nothing to summarize."""
    previous_at = max((i for i, e in enumerate(path) if e.type == "compaction"), default=None)
    previous = path[previous_at].obj() if previous_at is not None else None
    start = 0
    if previous is not None and previous_at is not None:
        kept_id = previous.get("firstKeptEntryId")
        start = next((i for i, e in enumerate(path) if e.id == kept_id), previous_at)
    in_context = [e for e in path[start:] if e.type == "message"]
    messages = [e.obj()["message"] for e in in_context]
    cut = find_cut(messages, keep_recent_tokens)
    if cut is None:
        return None
    summarized = messages[:cut]
    read: set[str] = set()
    modified: set[str] = set()
    if previous is not None:  # cumulative (S7.15)
        details: dict[str, Any] = found if isinstance(found := previous.get("details"), dict) else {}
        read.update(f for f in details.get("readFiles") or [] if isinstance(f, str))
        modified.update(f for f in details.get("modifiedFiles") or [] if isinstance(f, str))
    file_operations(summarized, read, modified)
    return Plan(
        summarized=summarized,
        first_kept_id=in_context[cut].id,  # type: ignore[arg-type]  # an entry of a session has its id (Entry.id is typed str | None)
        previous_summary=previous.get("summary") if previous is not None else None,
        read_files=sorted(read - modified),  # a file both read and modified is listed as modified only (S7.16)
        modified_files=sorted(modified),
        tokens_before=sum(estimate_tokens(m) for m in summarized),
    )
