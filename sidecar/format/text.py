"""Plain text out of message content, for summaries (the offline summarizer and the carry-over share it)."""

from __future__ import annotations

from typing import Any


def content_text(content: Any) -> str:
    """The text blocks of ``content`` (or the string itself), one block a line."""
    if isinstance(content, str):
        return content
    return "\n".join(
        b["text"] for b in content or [] if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def one_line(text: Any, limit: int) -> str:
    """``text`` with its whitespace runs as single spaces, cut at ``limit`` characters with an ellipsis."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
