"""The spec's compaction prompts (section 7.5.4) and its flat serialization (section 7.5.5).

These texts are the format's contract with the agents built on it, so a spec
root is summarized with exactly them (a pi root uses compaction/prompts.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from ...format.codec import encode_js

SYSTEM_PROMPT = """You are a context summarization assistant. Your task is to read a conversation between
a user and an AI agent, then produce a structured summary following the exact format
specified. Do NOT continue the conversation. Do NOT respond to any questions in the
conversation. ONLY output the structured summary."""

SECTIONS = ("Goal", "Constraints & Preferences", "Progress", "Key Decisions", "Next Steps", "Critical Context")

FORMAT = """Use this EXACT format:

## Goal
[What is the user trying to accomplish? Can be multiple items.]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned by user]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Current work]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [Ordered list of what should happen next]

## Critical Context
- [Any data, examples, or references needed to continue]

Keep each section concise. Preserve exact file paths, function names, and error messages."""

INITIAL_PROMPT = f"""The messages above are a conversation to summarize. Create a structured context
checkpoint summary that another LLM will use to continue the work.

{FORMAT}"""

UPDATE_PROMPT = f"""The messages above are NEW conversation messages to incorporate into the existing
summary provided in <previous-summary> tags.

Update the existing structured summary with new information. RULES:
- PRESERVE all existing information from the previous summary
- ADD new progress, decisions, and context from the new messages
- UPDATE the Progress section: move items from "In Progress" to "Done" when completed
- UPDATE "Next Steps" based on what was accomplished
- PRESERVE exact file paths, function names, and error messages
- If something is no longer relevant, you may remove it

{FORMAT}"""

_encoder = msgspec.json.Encoder()


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(
        b["text"]
        for b in content or []
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def _call(block: Mapping[str, object]) -> str:
    arguments: Mapping[str, object] = found if isinstance(found := block.get("arguments"), dict) else {}
    inner = ", ".join(f"{key}={encode_js(_encoder.encode, value).decode()}" for key, value in arguments.items())
    return f"{block.get('name')}({inner})"


def serialize(messages: list[dict[str, Any]]) -> str:
    """Messages (pi-shaped: role, content) as the flat text of section 7.5.5, one marker per line group."""
    lines: list[str] = []
    for message in messages:
        role, content = message.get("role"), message.get("content")
        if role == "user":
            lines.append(f"[User]: {_text(content)}")
        elif role == "assistant":
            text = _text(content)
            if text:
                lines.append(f"[Assistant]: {text}")
            calls = [_call(b) for b in content or [] if isinstance(b, dict) and b.get("type") == "toolCall"]
            if calls:
                lines.append(f"[Assistant tool calls]: {'; '.join(calls)}")
        elif role == "toolResult":
            lines.append(f"[Tool result]: {_text(content)}")
    return "\n".join(lines)


def build_prompt(conversation: str, previous_summary: str | None, custom_instructions: str | None = None) -> str:
    """The user prompt: the serialized messages first ("the messages above"), then the instructions."""
    parts = [conversation]
    if previous_summary is not None:
        parts.append(f"<previous-summary>\n{previous_summary}\n</previous-summary>")
    parts.append(UPDATE_PROMPT if previous_summary is not None else INITIAL_PROMPT)
    if custom_instructions:
        parts.append(f"Additional focus: {custom_instructions}")
    return "\n\n".join(parts)


def file_tags(read_files: list[str], modified_files: list[str]) -> str:
    """The file operations appended to a summary (section 7.5.4)."""
    blocks = []
    if read_files:
        blocks.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        blocks.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    return "\n\n".join(blocks)


def strip_file_tags(summary: str) -> str:
    """A summary without the file tags a compaction appended (the update prompt gets the prose)."""
    for tag in ("read-files", "modified-files"):
        start = summary.find(f"<{tag}>")
        end = summary.find(f"</{tag}>")
        if start != -1 and end > start:
            summary = summary[:start] + summary[end + len(tag) + 3 :]
    return summary.strip()
