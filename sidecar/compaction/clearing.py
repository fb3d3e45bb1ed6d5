"""Tool-result clearing: old tool outputs give way to a placeholder in batches, long before a summary.

Like Anthropic's ``clear_tool_uses`` context edit and opencode's prune, but
written into the session: once the context passes ``triggerTokens``, every
tool output older than the newest ``keepToolResults`` is replaced by the
prune overlay's placeholder (sidecar.context.pruned), recorded as one
``custom`` entry that pi ignores. A clearing changes the context's prefix,
which costs the provider's prompt cache once; so it only happens when it
frees at least ``minimumTokens``, and then clears everything it may at once.
Until enough new output has piled up behind the kept ones, later appends
find nothing worth clearing and the cache holds.

Failed tool calls keep their output: an error is small, and the carry-over
of the next compaction quotes unresolved errors from it.
"""

from __future__ import annotations

from typing import Any

from ..config import ClearToolResultsSettings
from ..context.build import build_context
from ..context.pruned import PRUNE_CUSTOM_TYPE, pruned_ids, pruned_tool_result
from ..context.tokens import estimate_tokens
from ..format.jsonl import Entry
from .prune import PrunePlan

CLEAR_REASON = "clearToolResults"
_PRUNE_MARK = PRUNE_CUSTOM_TYPE.encode()


def already_pruned(path: list[Entry]) -> set[str]:
    """The toolResult entries a prune or clearing on the path already shows as a placeholder."""
    return {i for e in path if e.type == "custom" and _PRUNE_MARK in e.raw for i in pruned_ids(e.obj())}


def plan_clear(
    messages: list[dict[str, Any]],
    entry_ids: list[str],
    already: set[str],
    keep_tool_results: int,
    minimum_tokens: int,
) -> PrunePlan | None:
    """The tool outputs to clear, all older than the newest ``keep_tool_results``; None if they free too little."""
    seen = 0
    chosen: list[str] = []
    freed = 0
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") != "toolResult":
            continue
        seen += 1  # cleared ones count too: "the newest K" are the newest K results, whatever their state
        if seen <= keep_tool_results or entry_ids[index] in already or message.get("isError"):
            continue
        saving = estimate_tokens(message) - estimate_tokens(pruned_tool_result(message))
        if saving > 0:
            chosen.append(entry_ids[index])
            freed += saving
    if not chosen or freed < max(1, minimum_tokens):
        return None
    chosen.reverse()
    return PrunePlan(tool_result_ids=chosen, tokens_freed=freed, reason=CLEAR_REASON)


def clearing_due(tokens: int, settings: ClearToolResultsSettings) -> bool:
    return settings.enabled and tokens > settings.triggerTokens


def plan_for_path(path: list[Entry], settings: ClearToolResultsSettings) -> PrunePlan | None:
    """The clearing a context built from ``path`` calls for now (the caller checked ``clearing_due``)."""
    context = build_context(path)
    # Only what the latest compaction kept or what came after it is in the context; a compaction
    # shows what it summarized as its summary, so outputs before it are not there to clear.
    return plan_clear(context.messages, context.entry_ids, already_pruned(path), settings.keepToolResults, settings.minimumTokens)

