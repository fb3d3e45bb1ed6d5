"""An export document as Markdown: readable as a conversation.

Tool calls and results go in fenced blocks (long outputs shortened with a marker),
thinking in a quote, compactions and branch summaries as what they are. A whole-tree
export walks the tree depth first and marks where each branch leaves its parent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping

from .shape import ExportDocument, ExportedEntry

MAX_BLOCK_LINES = 60
MAX_BLOCK_CHARS = 6000
_BACKTICKS = re.compile("`+")


def render_markdown(doc: ExportDocument) -> str:
    out: list[str] = []
    title = doc.session.name or f"Session {doc.session.id}"
    out.append(f"# {_inline(title)}\n")
    facts = [f"- Session: `{doc.session.id}`"]
    if doc.session.cwd:
        facts.append(f"- Folder: `{doc.session.cwd}`")
    if doc.session.timestamp:
        facts.append(f"- Started: {doc.session.timestamp}")
    if doc.session.parentSession:
        facts.append(f"- Forked from: `{doc.session.parentSession}`")
    scope = "the whole tree, every branch" if doc.scope == "tree" else f"the path to entry `{doc.leafId}`"
    facts.append(f"- Exported: {scope} ({len(doc.entries)} entries)")
    if doc.redaction.applied:
        found = ", ".join(f"{c.kind} x{c.count}" for c in doc.redaction.kinds) or "none found"
        facts.append(f"- Secrets redacted: {found}")
    out.append("\n".join(facts) + "\n")
    results = {e.toolCallId: e for e in doc.entries if e.role == "toolResult" and e.toolCallId}
    shown: set[str] = set()  # tool results already shown under their call
    for marker, entry in _ordered(doc):
        if marker:
            out.append(marker)
        text = _entry(entry, results, shown)
        if text:
            out.append(text)
    return "\n".join(out).rstrip() + "\n"


def _ordered(doc: ExportDocument) -> Iterator[tuple[str | None, ExportedEntry]]:
    """Entries in reading order; in a tree, depth first with a marker where a branch begins."""
    if doc.scope == "path":
        for entry in doc.entries:
            yield None, entry
        return
    children: dict[str | None, list[ExportedEntry]] = {}
    for entry in doc.entries:
        children.setdefault(entry.parentId, []).append(entry)
    stack: list[tuple[ExportedEntry, str | None]] = [(e, None) for e in reversed(children.get(None, []))]
    while stack:
        entry, marker = stack.pop()
        yield marker, entry
        kids = children.get(entry.id, [])
        for number in range(len(kids), 0, -1):
            note = None if len(kids) == 1 else (f"---\n\n**Branch {number} of {len(kids)}** from `{entry.id}`\n")
            stack.append((kids[number - 1], note))


def _entry(entry: ExportedEntry, results: dict[str, ExportedEntry], shown: set[str]) -> str:
    label = f" · label: *{_inline(entry.label)}*" if entry.label else ""
    stamp = f" · {entry.timestamp}" if entry.timestamp else ""
    kind = entry.kind
    if kind == "message":
        return _message(entry, label, stamp, results, shown)
    if kind == "compaction":
        folded = (
            f"Messages before entry `{entry.firstKeptEntryId}` were folded into this summary "
            f"({entry.tokensBefore or 0} tokens before); they remain above in this export."
        )
        return f"## Compaction{label}{stamp}\n\n*{folded}*\n\n{_quote(entry.summary or '')}\n"
    if kind == "branch_summary":
        return f"## Branch summary{label}{stamp}\n\n*Summary of a branch left at `{entry.fromId}`:*\n\n{_quote(entry.summary or '')}\n"
    if kind == "model_change":
        model = "/".join(x for x in (entry.provider, entry.model) if x) or "?"
        return f"*Model changed to `{model}`*{label}\n"
    if kind == "thinking_level_change":
        return f"*Thinking level: {entry.thinkingLevel}*{label}\n"
    if kind == "session_info":
        return f"*Session named “{_inline(entry.name or '')}”*\n" if entry.name else ""
    if kind == "label":
        return ""  # shown on the entry it labels
    if kind == "custom_message":
        return f"## {_inline(entry.customType or 'custom')}{label}{stamp}\n\n{_content(entry.content or [])}\n"
    if kind == "custom":
        return f"### Custom data: `{entry.customType}`{label}\n\n{_fence(_json(entry.data), 'json')}\n"
    if kind == "mode_change":
        return f"*Mode: {entry.mode}*{label}\n"
    return f"### `{kind}`{label}{stamp}\n\n{_fence(_json(entry.extra), 'json')}\n"


def _message(entry: ExportedEntry, label: str, stamp: str, results: dict[str, ExportedEntry], shown: set[str]) -> str:
    role = entry.role or "message"
    if role == "toolResult":
        if entry.toolCallId in shown and results.get(entry.toolCallId) is entry:
            return ""
        return f"**Result of `{entry.toolName}`**{label}\n\n{_result(entry)}\n"
    heading = {"user": "User", "assistant": "Assistant", "bashExecution": "Shell", "system": "System"}.get(role, role)
    meta = []
    if role == "assistant":
        if entry.model:
            meta.append(f"`{entry.model}`")
        usage = entry.usage or {}
        if isinstance(usage.get("input"), int) or isinstance(usage.get("output"), int):
            meta.append(f"{usage.get('input', 0)} in / {usage.get('output', 0)} out tokens")
    meta_text = f" · {' · '.join(meta)}" if meta else ""
    parts = [f"## {heading}{meta_text}{label}{stamp}"]
    if role == "bashExecution":
        extra = entry.extra or {}
        message = extra.get("message", {}) if isinstance(extra.get("message"), dict) else {}
        parts.append(_fence(f"$ {message.get('command', '')}\n{_cut(str(message.get('output', '')))}", "console"))
        return "\n\n".join(parts) + "\n"
    for block in entry.content or []:
        kind = block.get("type")
        if kind == "toolCall":
            call_id = block.get("id")
            parts.append(
                f"**Tool call `{block.get('name')}`** (`{call_id}`)\n\n{_fence(_json(block.get('arguments')), 'json')}"
            )
            result = results.get(call_id) if isinstance(call_id, str) else None
            if result is not None and isinstance(call_id, str):
                shown.add(call_id)
                parts.append(f"**Result**{' (error)' if result.isError else ''}\n\n{_result(result)}")
        else:
            rendered = _block(block)
            if rendered:
                parts.append(rendered)
    return "\n\n".join(parts) + "\n"


def _result(entry: ExportedEntry) -> str:
    texts = [b.get("text", "") for b in entry.content or [] if b.get("type") == "text"]
    images = [_block(b) for b in entry.content or [] if b.get("type") == "image"]
    body = _fence(_cut("\n".join(str(t) for t in texts)), "text") if texts else ""
    return "\n\n".join(x for x in (body, *images) if x)


def _content(blocks: list[dict[str, object]]) -> str:
    return "\n\n".join(x for x in (_block(b) for b in blocks) if x)


def _block(block: Mapping[str, object]) -> str:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "thinking":
        thinking = str(block.get("thinking", ""))
        return _quote("*Thinking:* " + thinking) if thinking.strip() else ""
    if kind == "image":
        data = block.get("data")
        size = len(data) * 3 // 4 if isinstance(data, str) else 0
        return f"*[image: {block.get('mimeType', 'image')}, {size // 1024} KiB]*"
    if kind == "toolCall":
        return f"**Tool call `{block.get('name')}`**\n\n{_fence(_json(block.get('arguments')), 'json')}"
    return _fence(_json(block), "json")


def _cut(text: str) -> str:
    lines = text.split("\n")
    if len(lines) <= MAX_BLOCK_LINES and len(text) <= MAX_BLOCK_CHARS:
        return text
    kept = "\n".join(lines[:MAX_BLOCK_LINES])[:MAX_BLOCK_CHARS]
    cut_lines = len(lines) - kept.count("\n") - 1
    return f"{kept}\n… [{cut_lines} more lines, {len(text) - len(kept)} more characters cut from this export]"


def _fence(text: str, lang: str = "") -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0) if "`" in text else 0
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _quote(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.split("\n"))


def _inline(text: str) -> str:
    return " ".join(text.split())


def _json(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)
