"""Everything about a compaction that needs no model: what to summarize, what to keep.

Unlike pi, the summarized span starts at the previous compaction's
``firstKeptEntryId``, not at the entry after the previous compaction: the
messages that compaction kept are in the context now and must be in the new
summary too, or they vanish with the next cut.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..context.build import SessionContext, build_context
from ..context.pruned import PRUNE_CUSTOM_TYPE, pruned_ids
from ..context.system import current_system_message
from ..context.tokens import context_tokens
from ..errors import NothingToCompact
from ..format.jsonl import Entry
from ..format.text import cut_text
from .carryover import CarryOver, build_carry_over
from .cut import CutPoint, find_cut_point
from .files import FileOps, details_are_ours
from .prompts import strip_machine_blocks
from .prune import PRUNE_MINIMUM_TOKENS, PRUNE_PROTECT_TOKENS, PrunePlan, plan_prune

INITIAL_CONTEXT_MAX_CHARS = 16_000


@dataclass(slots=True)
class Preparation:
    path: list[Entry]
    context: SessionContext  # the context the cut was made in (prune applied)
    cut: CutPoint
    first_kept_entry_id: str
    history: list[dict[str, object]]  # messages the main summary replaces
    turn_prefix: list[dict[str, object]]  # the split turn's beginning, summarized on its own
    tokens_before: int
    previous_summary: str | None
    file_ops: FileOps
    initial_context: str
    prune: PrunePlan | None = None
    kept: list[dict[str, object]] = field(default_factory=list)
    # What the previous compaction carried plus what the summarized messages show (not yet bounded).
    carry_over: CarryOver = field(default_factory=CarryOver)
    # pi 1.5: the system message in force, which the compaction records (sidecar.context.system).
    system_message: dict[str, object] | None = None


def _placeholder_entry(obj: dict[str, object], parent: str | None, suffix: str) -> Entry:
    """An entry as it will be written, for building the prospective context before writing."""
    return Entry.from_obj(
        {**obj, "id": f"~pending-{suffix}", "parentId": parent, "timestamp": "1970-01-01T00:00:00.000Z"}
    )


def with_pending(path: list[Entry], objs: list[dict[str, object]]) -> list[Entry]:
    extended = list(path)
    for number, obj in enumerate(objs):
        extended.append(_placeholder_entry(obj, extended[-1].id if extended else None, str(number)))
    return extended


def prepare_compaction(
    path: list[Entry],
    keep_recent_tokens: int,
    prune: bool = True,
    prune_protect_tokens: int = PRUNE_PROTECT_TOKENS,
    prune_minimum_tokens: int = PRUNE_MINIMUM_TOKENS,
) -> Preparation:
    if not path:
        raise NothingToCompact("the session is empty: there is nothing to compact", reason="empty")
    if path[-1].type == "compaction":
        raise NothingToCompact(
            f"the leaf is a compaction already ({path[-1].id}): nothing was added since it, so another would "
            "summarize the same span again. Append first, or read that compaction with session/getEntries",
            entryId=path[-1].id,
            reason="leafIsCompaction",
        )
    context = build_context(path)
    tokens_before = context_tokens(context.messages, context.after_compaction)
    system_message = current_system_message(context.messages)
    plan = None
    if prune:
        already = {
            i for e in path if e.type == "custom" and PRUNE_CUSTOM_TYPE.encode() in e.raw for i in pruned_ids(e.obj())
        }
        plan = plan_prune(context.messages, context.entry_ids, already, prune_protect_tokens, prune_minimum_tokens)
        if plan is not None:
            context = build_context(with_pending(path, [plan.entry()]))
    previous = next((e for e in reversed(path) if e.type == "compaction"), None)
    previous_obj = previous.obj() if previous is not None else None
    # The messages the previous compaction put first (its system message, its summary) are not history.
    start = 0
    while previous is not None and start < len(context.entry_ids) and context.entry_ids[start] == previous.id:
        start += 1
    # The budget counts what the context will hold, so the cut is made in the pruned view.
    cut = find_cut_point(context.messages, start, keep_recent_tokens)
    if cut.first_kept <= start and plan is not None:
        # Pruned, everything fits the budget; the caller asked for a compaction, so cut unpruned.
        plan, context = None, build_context(path)
        cut = find_cut_point(context.messages, start, keep_recent_tokens)
    if cut.first_kept <= start:
        raise NothingToCompact(
            f"the context since the last compaction is within keepRecentTokens ({keep_recent_tokens}); "
            "everything would be kept. Pass a smaller keepRecentTokens to compact anyway",
            keepRecentTokens=keep_recent_tokens,
            reason="withinKeepRecentTokens",
        )
    history_end = cut.turn_start if cut.turn_start is not None else cut.first_kept
    history = context.messages[start:history_end]
    turn_prefix = context.messages[cut.turn_start : cut.first_kept] if cut.turn_start is not None else []
    file_ops = FileOps()
    previous_carry = None
    if previous_obj is not None and details_are_ours(previous_obj):
        file_ops.add_details(previous_obj.get("details"))
        details = previous_obj.get("details")
        previous_carry = CarryOver.from_obj(details.get("carryOver")) if isinstance(details, dict) else None
    file_ops.add_messages(history)
    file_ops.add_messages(turn_prefix)
    previous_summary = None
    if previous_obj is not None and isinstance(previous_obj.get("summary"), str):
        previous_summary = strip_machine_blocks(previous_obj["summary"]) or None
    kept_ids = set(context.entry_ids[cut.first_kept :])
    return Preparation(
        path=path,
        context=context,
        cut=cut,
        first_kept_entry_id=context.entry_ids[cut.first_kept],
        history=history,
        turn_prefix=turn_prefix,
        tokens_before=tokens_before,
        previous_summary=previous_summary,
        file_ops=file_ops,
        initial_context=initial_context(path, kept_ids),
        prune=plan,
        kept=context.messages[cut.first_kept :],
        carry_over=build_carry_over(previous_carry, history + turn_prefix),
        system_message=system_message,
    )


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(
        b["text"]
        for b in content or []
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def initial_context(path: list[Entry], kept_ids: set[str]) -> str:
    """The session's standing instructions, to place back into every summary (as codex does).

    They are the ``session_init`` entry's system prompt and task, and the
    custom messages a harness injected before the conversation began (rules
    files, environment notes), unless those are still in the kept part.
    """
    parts: list[str] = []
    leading = True
    for entry in path:
        if entry.type == "session_init":
            obj = entry.obj()
            if isinstance(obj.get("systemPrompt"), str) and obj["systemPrompt"].strip():
                parts.append("System instructions:\n" + obj["systemPrompt"].strip())
            if isinstance(obj.get("task"), str) and obj["task"].strip():
                parts.append("Task:\n" + obj["task"].strip())
        elif entry.type == "message" and entry.role() in ("user", "assistant"):
            leading = False
        elif entry.type == "custom_message" and leading and entry.id not in kept_ids:
            text = _content_text(entry.obj().get("content")).strip()
            if text:
                parts.append(text)
    return cut_text("\n\n".join(parts), INITIAL_CONTEXT_MAX_CHARS)
