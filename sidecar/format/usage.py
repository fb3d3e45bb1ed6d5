"""The tokens an assistant message's ``usage`` reports (pi's fields)."""

from __future__ import annotations


def usage_tokens(usage: object) -> int:
    """``totalTokens`` when set, else the sum of its parts (input, output, cache read and write)."""
    if not isinstance(usage, dict):
        return 0
    total = usage.get("totalTokens")
    if isinstance(total, (int, float)) and total:
        return int(total)
    return int(sum(usage.get(k) or 0 for k in ("input", "output", "cacheRead", "cacheWrite")))
