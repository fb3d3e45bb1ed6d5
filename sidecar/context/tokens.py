"""Token estimates: chars / 4, as pi counts them, and the hybrid context size.

The hybrid uses the last real usage an assistant reported (input + output +
cache reads + cache writes) and estimates only what came after it, which is
closer to the truth than estimating everything.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import msgspec

from ..format.codec import encode_js
from ..format.usage import usage_tokens

IMAGE_CHARS = 4800  # an image counts as 1200 tokens
_encoder = msgspec.json.Encoder()


def _text_chars(content: object, images: bool) -> int:
    if isinstance(content, str):
        return len(content)
    chars = 0
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                chars += len(block["text"])
            elif images and block.get("type") == "image":
                chars += IMAGE_CHARS
    return chars


def estimate_tokens(message: Mapping[str, Any]) -> int:
    role = message.get("role")
    chars = 0
    if role == "user":
        chars = _text_chars(message.get("content"), images=True)
    elif role == "assistant":
        for block in message.get("content") or []:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                chars += len(block.get("text") or "")
            elif kind == "thinking":
                chars += len(block.get("thinking") or "")
            elif kind == "toolCall":
                chars += len(block.get("name") or "") + len(encode_js(_encoder.encode, block.get("arguments")))
    elif role in ("custom", "toolResult"):
        chars = _text_chars(message.get("content"), images=True)
    elif role == "bashExecution":
        chars = len(message.get("command") or "") + len(message.get("output") or "")
    elif role in ("branchSummary", "compactionSummary"):
        chars = len(message.get("summary") or "")
    return math.ceil(chars / 4)


def reported_usage(message: dict[str, object]) -> int:
    """Tokens an assistant message reported, 0 when it reported none worth trusting."""
    if message.get("role") != "assistant" or message.get("stopReason") in ("aborted", "error"):
        return 0
    return usage_tokens(message.get("usage"))


def context_tokens(messages: list[dict[str, object]], usage_from: int = 0) -> int:
    """Last reported usage plus estimates of what follows it; all estimated when none.

    Usage reported by messages before ``usage_from`` is ignored: in a context
    built after a compaction, the kept messages reported the size of the
    context before it, which the summary has since replaced.
    """
    last = None
    for index in range(len(messages) - 1, usage_from - 1, -1):
        if reported_usage(messages[index]) > 0:
            last = index
            break
    if last is None:
        return sum(estimate_tokens(m) for m in messages)
    return reported_usage(messages[last]) + sum(estimate_tokens(m) for m in messages[last + 1 :])
