"""Summaries of abandoned branches (pi's ``branch_summary``), written when leaving one.

The branch runs from just below the common ancestor of the old leaf and the
target down to the old leaf. Its messages are taken newest first until the
token budget is spent (older ones matter least to what comes next); file
lists are carried over from summaries nested in the branch.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..context.build import branch_summary_message, compaction_summary_message, custom_message
from ..context.tokens import estimate_tokens
from ..format.jsonl import Entry
from .files import FileOps, details_are_ours

DEFAULT_WINDOW = 128_000
BRANCH_SUMMARY_MAX_TOKENS = 2048


@dataclass(slots=True)
class BranchPreparation:
    entries: list[Entry]  # the abandoned branch, oldest first
    messages: list[dict[str, object]]  # what the summary covers, oldest first
    file_ops: FileOps
    tokens: int


def abandoned_branch(old_path: list[Entry], target_path: list[Entry]) -> list[Entry]:
    """Entries of ``old_path`` below its deepest entry shared with ``target_path``."""
    on_target = {e.id for e in target_path}
    shared = 0
    for index, entry in enumerate(old_path):
        if entry.id in on_target:
            shared = index + 1
    return old_path[shared:]


def _branch_message(entry: Entry) -> dict[str, object] | None:
    if entry.type == "message":
        message = entry.obj().get("message")
        # The tool call says what was done; its output adds bulk, not meaning, to a branch summary.
        if not isinstance(message, dict) or message.get("role") == "toolResult":
            return None
        return message
    if entry.type == "custom_message":
        return custom_message(entry.obj())
    if entry.type == "branch_summary":
        return branch_summary_message(entry.obj())
    if entry.type == "compaction":
        return compaction_summary_message(entry.obj())
    return None


def prepare_branch(entries: list[Entry], token_budget: int) -> BranchPreparation:
    # Files from the whole branch, even the part the budget leaves out of the summary.
    file_ops = FileOps()
    messages: list[tuple[Entry, dict[str, object]]] = []
    for entry in entries:
        if entry.type == "branch_summary":
            obj = entry.obj()
            if details_are_ours(obj):
                file_ops.add_details(obj.get("details"))
        message = _branch_message(entry)
        if message is not None:
            file_ops.add_message(message)
            messages.append((entry, message))
    chosen: list[dict[str, object]] = []
    total = 0
    for entry, message in reversed(messages):
        tokens = estimate_tokens(message)
        if token_budget > 0 and total + tokens > token_budget:
            # An earlier summary is dense context: squeeze it in while there is some room.
            if entry.type in ("compaction", "branch_summary") and total < token_budget * 0.9:
                chosen.append(message)
                total += tokens
            break
        chosen.append(message)
        total += tokens
    chosen.reverse()
    return BranchPreparation(entries=entries, messages=chosen, file_ops=file_ops, tokens=total)
