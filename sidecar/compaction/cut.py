"""Where to cut: the first context message kept verbatim after a compaction.

Works on the context as ``build_context`` emits it (one message per
context-visible entry, prunes applied), so the kept part is by construction
what the next context will show. A cut is valid only at a user-like or
assistant message, and never where a tool result after the cut would answer
a tool call before it: providers reject such orphans.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..context.tokens import estimate_tokens

# Roles that start a turn: what the user (or the harness on the user's behalf) says.
USER_LIKE_ROLES = frozenset({"user", "bashExecution", "custom", "branchSummary"})
CUT_ROLES = USER_LIKE_ROLES | {"assistant"}


@dataclass(slots=True, frozen=True)
class CutPoint:
    # Index of the first kept message; == len(messages) never happens, == start keeps everything.
    first_kept: int
    # Index of the user-like message opening the turn the cut splits, or None.
    turn_start: int | None
    kept_tokens: int

    @property
    def is_split_turn(self) -> bool:
        return self.turn_start is not None


def _tool_call_ids(message: Mapping[str, Any]) -> list[str]:
    if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
        return []
    ids = []
    for block in message["content"]:
        if isinstance(block, dict) and block.get("type") == "toolCall" and isinstance(block.get("id"), str):
            ids.append(block["id"])
    return ids


def valid_cut_points(messages: Sequence[Mapping[str, Any]], start: int = 0) -> list[bool]:
    """For each index, whether keeping from there leaves every tool result with its call."""
    n = len(messages)
    valid = [i >= start and messages[i].get("role") in CUT_ROLES for i in range(n)]
    # A cut at c in (call_index, result_index] would separate the pair: mark those ranges.
    blocked = [0] * (n + 1)
    call_index: dict[str, int] = {}
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "assistant":
            for call_id in _tool_call_ids(message):
                call_index[call_id] = index
        elif role == "toolResult":
            origin = call_index.get(message.get("toolCallId"))  # type: ignore[arg-type]  # a missing toolCallId looks up None, which no call has
            if origin is not None and origin + 1 <= index:
                blocked[origin + 1] += 1
                blocked[index + 1] -= 1
    running = 0
    for index in range(n):
        running += blocked[index]
        if running:
            valid[index] = False
    return valid


def find_cut_point(messages: list[dict[str, object]], start: int, keep_recent_tokens: int) -> CutPoint:
    """Keep at least ``keep_recent_tokens`` (estimated) from the newest backwards, cut validly.

    Walk back from the newest message adding estimates; at the first message
    where the sum reaches the budget, cut at the nearest valid point at or
    before it, so the kept part never holds less than the budget. When the
    budget is never reached, or no valid point precedes it, everything from
    ``start`` is kept.
    """
    n = len(messages)
    valid = valid_cut_points(messages, start)
    tokens = [estimate_tokens(m) for m in messages]
    accumulated = 0
    cut = start
    for index in range(n - 1, start - 1, -1):
        accumulated += tokens[index]
        if accumulated >= keep_recent_tokens:
            candidate = index
            while candidate >= start and not valid[candidate]:
                candidate -= 1
            cut = candidate if candidate >= start else start
            break
    kept_tokens = sum(tokens[cut:])
    turn_start = None
    if cut > start and messages[cut].get("role") not in USER_LIKE_ROLES:
        for index in range(cut - 1, start - 1, -1):
            if messages[index].get("role") in USER_LIKE_ROLES:
                turn_start = index
                break
    return CutPoint(first_kept=cut, turn_start=turn_start, kept_tokens=kept_tokens)


def has_pending_tool_calls(messages: list[dict[str, object]]) -> bool:
    """Whether the last assistant message's tool calls are still waiting for results."""
    answered: set[object] = set()
    for message in reversed(messages):
        if message.get("role") == "toolResult":
            answered.add(message.get("toolCallId"))
        elif message.get("role") == "assistant":
            return any(call_id not in answered for call_id in _tool_call_ids(message))
    return False
