"""pi 1.5's context edits: a ``context_edit`` entry replaces, or drops, an earlier entry's content.

Only the edits among the entries a context is built from count (the path;
after a compaction, the entries it kept and those after it), the last edit of
a target winning. The entry stays in the file and in every other branch.
"""

from __future__ import annotations

from ..format.jsonl import Entry

NO_EDIT: object = object()  # an entry no context edit names
# Roles whose content a context edit replaces; other messages of an edited entry stay as they are.
_EDITABLE_ROLES = frozenset({"user", "assistant", "toolResult", "custom"})


def edits_among(entries: list[Entry]) -> dict[str, object]:
    """targetId -> replacement of the last context edit of each target among ``entries``."""
    edits: dict[str, object] = {}
    for entry in entries:
        if entry.type == "context_edit":
            obj = entry.obj()
            if isinstance(obj.get("targetId"), str):
                edits[obj["targetId"]] = obj.get("replacement")
    return edits


def edited(messages: list[dict[str, object]], replacement: object) -> list[dict[str, object]]:
    """pi 1.5's projection of an entry's messages through its context edit."""
    if replacement is NO_EDIT:
        return messages
    if replacement is None:
        return []
    has_content = isinstance(replacement, dict) and "content" in replacement
    content = replacement.get("content") if isinstance(replacement, dict) else None
    out = []
    for message in messages:
        role = message.get("role")
        if role not in _EDITABLE_ROLES:
            out.append(message)
            continue
        if not has_content:  # JS: `content: undefined`, which JSON leaves out
            out.append({k: v for k, v in message.items() if k != "content"})
            continue
        text_role = role in ("assistant", "toolResult") and isinstance(content, str)
        out.append({**message, "content": [{"type": "text", "text": content}] if text_role else content})
    return out
