"""The prune overlay: old tool outputs the context shows as a short placeholder.

A prune is recorded as a ``custom`` entry (``customType`` "sidecar.prune")
listing the ids of the toolResult message entries it hides. The file keeps
every output in full; only the built context swaps the content. pi ignores
``custom`` entries, so a pi reading the same file sees the full outputs.
"""

from __future__ import annotations

import math

PRUNE_CUSTOM_TYPE = "sidecar.prune"


def pruned_ids(obj: dict[str, object]) -> list[str]:
    """The toolResult entry ids a custom entry prunes ([] for any other custom entry)."""
    if obj.get("customType") != PRUNE_CUSTOM_TYPE:
        return []
    data = obj.get("data")
    ids = data.get("toolResultIds") if isinstance(data, dict) else None
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []


def _content_chars(content: object) -> int:
    if isinstance(content, str):
        return len(content)
    total = 0
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            total += len(block["text"])
    return total


def placeholder_text(chars: int) -> str:
    return (
        f"[Old tool output pruned to save context: about {math.ceil(chars / 4)} tokens. "
        "Run the tool again if the output is needed.]"
    )


def pruned_tool_result(message: dict[str, object]) -> dict[str, object]:
    """The toolResult message with its content replaced by the placeholder (other fields kept)."""
    shown = dict(message)
    shown["content"] = [{"type": "text", "text": placeholder_text(_content_chars(message.get("content")))}]
    return shown
