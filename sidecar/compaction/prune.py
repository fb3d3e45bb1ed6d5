"""Pruning (after opencode): old tool outputs give way to a placeholder.

The newest ``protect_tokens`` of tool output stay as they are; older outputs
are pruned, but only when that frees at least ``minimum_tokens``, since every
prune changes the context prefix and costs the provider's prompt cache.
Failed tool calls keep their output: errors are small and say what went wrong.
The plan becomes a ``custom`` entry (see ``sidecar.context.pruned``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..context.pruned import PRUNE_CUSTOM_TYPE, pruned_tool_result
from ..context.tokens import estimate_tokens

PRUNE_PROTECT_TOKENS = 40_000
PRUNE_MINIMUM_TOKENS = 20_000


@dataclass(slots=True, frozen=True)
class PrunePlan:
    tool_result_ids: list[str]
    tokens_freed: int
    # Why the outputs went: None for the prune before a summary, "clearToolResults" for the
    # batch clearing of sidecar.compaction.clearing (the overlay reads both the same way).
    reason: str | None = None

    def entry(self) -> dict[str, object]:
        data: dict[str, object] = {"toolResultIds": self.tool_result_ids, "tokensFreed": self.tokens_freed}
        if self.reason is not None:
            data["reason"] = self.reason
        return {"type": "custom", "customType": PRUNE_CUSTOM_TYPE, "data": data}


def plan_prune(
    messages: list[dict[str, object]],
    entry_ids: list[str],
    already_pruned: set[str],
    protect_tokens: int = PRUNE_PROTECT_TOKENS,
    minimum_tokens: int = PRUNE_MINIMUM_TOKENS,
) -> PrunePlan | None:
    """Which tool results of a context to prune, newest protected first; None if not worth it."""
    seen_output = 0
    chosen: list[str] = []
    freed = 0
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") != "toolResult" or entry_ids[index] in already_pruned:
            continue
        tokens = estimate_tokens(message)
        seen_output += tokens
        if seen_output <= protect_tokens or message.get("isError"):
            continue
        saving = tokens - estimate_tokens(pruned_tool_result(message))
        if saving > 0:
            chosen.append(entry_ids[index])
            freed += saving
    if not chosen or freed < minimum_tokens:
        return None
    chosen.reverse()
    return PrunePlan(tool_result_ids=chosen, tokens_freed=freed)
