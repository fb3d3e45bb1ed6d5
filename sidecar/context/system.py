"""pi 1.5's current system message: every system message of a context replayed into one.

A compaction records it (``systemMessage``) so the context after it still
starts with the system prompt and tools in force, though the messages that
set them were summarized away: later ``content`` is appended to the earlier
(blank lines between), ``sections`` are patched by name (null removes one),
tools are added and removed by name, and the first system message's
``timestamp`` is kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

_UNSET: object = object()


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


def current_system_message(messages: Sequence[Mapping[str, Any]]) -> dict[str, object] | None:
    """The system message ``messages`` add up to, or None when they hold none (and no tools)."""
    texts: list[str] = []
    sections: dict[str, object] = {}
    tools: dict[object, object] = {}  # insertion-ordered like a JS Map: a tool added again keeps its place
    timestamp = _UNSET
    for message in messages:
        if message.get("role") != "system":
            continue
        if timestamp is _UNSET or timestamp is None:  # JS `??=`
            timestamp = message.get("timestamp", _UNSET)
        text = _content_text(message.get("content"))
        if text:
            texts.append(text)
        for name, value in (message.get("sections") or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
        for tool in message.get("toolsRemoved") or []:
            tools.pop(tool.get("name") if isinstance(tool, dict) else None, None)
        for tool in message.get("toolsAdded") or []:
            tools[tool.get("name") if isinstance(tool, dict) else None] = tool
    if timestamp is _UNSET and not tools:
        return None
    current: dict[str, object] = {"role": "system", "content": "\n\n".join(texts)}
    if sections:
        current["sections"] = sections
    if tools:
        current["toolsAdded"] = list(tools.values())
    current["timestamp"] = 0 if timestamp is _UNSET or timestamp is None else timestamp
    return current
