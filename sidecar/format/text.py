"""Plain text out of message content, for summaries (the offline summarizer and the carry-over share it)."""

from __future__ import annotations

from typing import Any

import msgspec

from .codec import encode_js

_encoder = msgspec.json.Encoder()


def content_text(content: Any) -> str:  # (read as JS would: a list of blocks, or a string)
    """The text blocks of ``content`` (or the string itself), one block a line."""
    if isinstance(content, str):
        return content
    return "\n".join(
        b["text"]
        for b in content or []
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def one_line(text: object, limit: int) -> str:
    """``text`` with its whitespace runs as single spaces, cut at ``limit`` characters with an ellipsis."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def cut_text(text: str, limit: int) -> str:
    """``text`` cut at ``limit`` characters, saying how many were cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... {len(text) - limit} more characters cut]"


def json_text(value: object) -> str:
    """``value`` as compact JSON, or its repr where JSON cannot hold it."""
    try:
        return encode_js(_encoder.encode, value).decode()  # (a lone surrogate as JSON.stringify's escape)
    except (TypeError, msgspec.EncodeError):
        return repr(value)


def format_tool_call(name: str, arguments: object) -> str:
    """``name(key=value, ...)`` with JSON values: a tool call on one line."""
    if isinstance(arguments, dict):
        inner = ", ".join(f"{key}={json_text(value)}" for key, value in arguments.items())
    else:
        inner = json_text(arguments)
    return f"{name}({inner})"
