"""Making a summarization request fit the summarizer's own window, step by step.

When the transcript to summarize would overflow the model, we step down
instead of failing: first drop the oldest messages (at most half of them;
the previous summary still covers what came before), then replace tool
outputs with a marker, then keep only the most recent messages that fit.
Each stage is tried in order until the estimate fits; a provider that still
reports an overflow sends the request one stage further down.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .serialize import serialize_messages

STAGES = ("full", "dropOldest", "stripToolOutputs", "recentTurns")
_SEPARATOR = "\n\n"


@dataclass(slots=True, frozen=True)
class FittedConversation:
    text: str
    stage: str
    omitted: int  # messages left out of the request
    tokens: int


def _tokens(blocks: list[str]) -> int:
    return math.ceil((sum(len(b) for b in blocks) + len(_SEPARATOR) * max(0, len(blocks) - 1)) / 4)


def _omission_note(count: int) -> str:
    return f"[... {count} earlier messages omitted: the request had to fit the summarizer's context window ...]"


def _drop_oldest(blocks: list[str], budget: int | None) -> tuple[list[str], int]:
    limit = len(blocks) // 2
    if budget is None:
        return blocks[limit:], limit
    dropped = 0
    total = _tokens(blocks)
    while dropped < limit and total > budget:
        total -= math.ceil((len(blocks[dropped]) + len(_SEPARATOR)) / 4)
        dropped += 1
    return blocks[dropped:], dropped


def _newest_that_fit(blocks: list[str], budget: int | None) -> tuple[list[str], int]:
    if budget is None:
        keep = max(1, len(blocks) // 4)
        return blocks[-keep:], len(blocks) - keep
    kept: list[str] = []
    used = 0
    for block in reversed(blocks):
        cost = math.ceil((len(block) + len(_SEPARATOR)) / 4)
        if kept and used + cost > budget:
            break
        kept.append(block if used + cost <= budget else block[-max(1, budget * 4 - used * 4) :])
        used += cost
    kept.reverse()
    return kept, len(blocks) - len(kept)


def fit_conversation(messages: list[dict[str, object]], budget: int | None, stage: int) -> FittedConversation:
    """The transcript at ``stage`` (an index into ``STAGES``), trimmed toward ``budget`` tokens."""
    name = STAGES[stage]
    if name == "full":
        blocks, omitted = serialize_messages(messages), 0
    elif name == "dropOldest":
        blocks, omitted = _drop_oldest(serialize_messages(messages), budget)
    elif name == "stripToolOutputs":
        blocks, omitted = _drop_oldest(serialize_messages(messages, strip_tool_outputs=True), budget)
    else:
        blocks, omitted = _newest_that_fit(serialize_messages(messages, strip_tool_outputs=True), budget)
    if omitted:
        blocks = [_omission_note(omitted), *blocks]
    return FittedConversation(text=_SEPARATOR.join(blocks), stage=name, omitted=omitted, tokens=_tokens(blocks))


def first_fitting_stage(messages: list[dict[str, object]], budget: int | None) -> int:
    """The least lossy stage whose estimate fits ``budget`` (0 when the budget is unknown)."""
    if budget is None:
        return 0
    for stage in range(len(STAGES)):
        if fit_conversation(messages, budget, stage).tokens <= budget:
            return stage
    return len(STAGES) - 1
