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

from dataclasses import dataclass

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


@dataclass(slots=True)
class Clearable:
    """What a context holds that a clearing could take: the outputs past the newest K, and what they free."""

    tool_result_ids: list[str]
    tokens: int
    # What each of the newest K outputs would free (oldest first; 0 for an error or a cleared one):
    # a newer output pushes the oldest of them out of the kept window, and it becomes clearable.
    kept: list[int]


def output_saving(message: dict[str, object]) -> int:
    """The tokens a toolResult message frees when shown as the placeholder (0 for an error, which stays)."""
    if message.get("role") != "toolResult" or message.get("isError"):
        return 0
    return max(0, estimate_tokens(message) - estimate_tokens(pruned_tool_result(message)))


def clearable(
    messages: list[dict[str, object]], entry_ids: list[str], already: set[str], keep_tool_results: int
) -> Clearable:
    found = Clearable([], 0, [])
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") != "toolResult":
            continue
        # Cleared ones count too: the newest K are the newest K results, whatever their state.
        saving = 0 if entry_ids[index] in already else output_saving(message)
        if len(found.kept) < keep_tool_results:
            found.kept.append(saving)
        elif saving > 0:
            found.tool_result_ids.append(entry_ids[index])
            found.tokens += saving
    found.tool_result_ids.reverse()
    found.kept.reverse()
    return found


def plan_clear(
    messages: list[dict[str, object]],
    entry_ids: list[str],
    already: set[str],
    keep_tool_results: int,
    minimum_tokens: int,
) -> PrunePlan | None:
    """The tool outputs to clear, all older than the newest ``keep_tool_results``; None if they free too little."""
    found = clearable(messages, entry_ids, already, keep_tool_results)
    if not found.tool_result_ids or found.tokens < max(1, minimum_tokens):
        return None
    return PrunePlan(tool_result_ids=found.tool_result_ids, tokens_freed=found.tokens, reason=CLEAR_REASON)


def clearing_due(tokens: int, settings: ClearToolResultsSettings) -> bool:
    return settings.enabled and tokens > settings.triggerTokens


def plan_for_path(path: list[Entry], settings: ClearToolResultsSettings) -> PrunePlan | None:
    """The clearing a context built from ``path`` calls for now (the caller checked ``clearing_due``)."""
    return assess(path, settings)[0]


def assess(path: list[Entry], settings: ClearToolResultsSettings) -> tuple[PrunePlan | None, Clearable]:
    """The clearing due at the end of ``path`` (or None), and what stays clearable after it."""
    context = build_context(path)
    # Only what the latest compaction kept or what came after it is in the context; a compaction
    # shows what it summarized as its summary, so outputs before it are not there to clear.
    found = clearable(context.messages, context.entry_ids, already_pruned(path), settings.keepToolResults)
    if found.tool_result_ids and found.tokens >= max(1, settings.minimumTokens):
        plan = PrunePlan(tool_result_ids=found.tool_result_ids, tokens_freed=found.tokens, reason=CLEAR_REASON)
        return plan, Clearable([], 0, found.kept)
    return None, found
