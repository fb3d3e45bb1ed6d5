"""The conversation as flat text for the summarizer.

A model given real user/assistant turns tends to continue the conversation;
given a transcript with ``[User]:`` / ``[Assistant]:`` markers it summarizes
it. Tool outputs are cut: the summary needs what was learnt, not every byte.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..context.llm import convert_to_llm
from ..format.text import cut_text, format_tool_call

TOOL_RESULT_MAX_CHARS = 2000
THINKING_MAX_CHARS = 2000


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif block.get("type") == "image":
            parts.append("[image]")
    return "\n".join(parts)


def serialize_message(message: Mapping[str, Any], *, strip_tool_outputs: bool = False) -> str | None:
    """One LLM message (user / assistant / toolResult) as marked lines, or None when it says nothing."""
    role = message.get("role")
    if role == "user":
        text = _text_of(message.get("content"))
        return f"[User]: {text}" if text else None
    if role == "assistant":
        thinking, texts, calls = [], [], []
        for block in message.get("content") or []:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and block.get("text"):
                texts.append(block["text"])
            elif kind == "thinking" and block.get("thinking"):
                thinking.append(block["thinking"])
            elif kind == "toolCall":
                calls.append(format_tool_call(str(block.get("name")), block.get("arguments")))
        lines = []
        if thinking:
            lines.append(f"[Assistant thinking]: {cut_text(chr(10).join(thinking), THINKING_MAX_CHARS)}")
        if texts:
            lines.append(f"[Assistant]: {chr(10).join(texts)}")
        if calls:
            lines.append(f"[Assistant tool calls]: {'; '.join(calls)}")
        if message.get("stopReason") == "error" and message.get("errorMessage"):
            lines.append(f"[Assistant]: (the request failed: {message['errorMessage']})")
        return "\n".join(lines) or None
    if role == "toolResult":
        name = message.get("toolName")
        label = f"[Tool result]: ({name}{', error' if message.get('isError') else ''}) " if name else "[Tool result]: "
        if strip_tool_outputs:
            return label + "(output omitted)"
        text = _text_of(message.get("content"))
        return label + cut_text(text, TOOL_RESULT_MAX_CHARS) if text else label + "(no output)"
    return None


def serialize_messages(agent_messages: list[dict[str, object]], *, strip_tool_outputs: bool = False) -> list[str]:
    """Each context message as its block of text (summaries and custom messages as user text)."""
    blocks = []
    for message in convert_to_llm(agent_messages):
        block = serialize_message(message, strip_tool_outputs=strip_tool_outputs)
        if block is not None:
            blocks.append(block)
    return blocks


def serialize_conversation(agent_messages: list[dict[str, object]]) -> str:
    return "\n\n".join(serialize_messages(agent_messages))
