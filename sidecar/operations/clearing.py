"""Tool-result clearing after ``session/append``: plan it, write it, and count the context again.

Planning builds the context at the leaf, which the append path otherwise
avoids (sidecar.context.tally). So each session keeps what a clearing could
free at its leaf, carried forward while the path only grows by messages:
a new tool output joins the kept window and pushes its oldest member out,
which becomes clearable. The context is built again only when that reaches
``minimumTokens`` (a batch is due), or when the path changed in another way
(a branch, a compaction, an edit, a prune).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

from .. import wire
from ..compaction.clearing import Clearable, assess, output_saving
from ..config import ClearToolResultsSettings
from ..context.build import message_of
from ..context.pruned import PRUNE_CUSTOM_TYPE
from ..context.tally import TokenTally
from ..format.jsonl import Entry
from ..store import Session

_PRUNE_MARK = PRUNE_CUSTOM_TYPE.encode()


@dataclass(slots=True)
class _Watch:
    leaf_id: str | None
    clearable: Clearable


_watches: weakref.WeakKeyDictionary[Session, _Watch] = weakref.WeakKeyDictionary()


def _carried(session: Session, appended: list[Entry], objs: list[dict[str, Any]] | None, keep: int) -> Clearable | None:
    """What is clearable after ``appended``, carried from the last look; None when it must be measured again."""
    watch = _watches.get(session)
    if watch is None or not appended or appended[0].parent_id != watch.leaf_id:
        return None
    tokens, kept = watch.clearable.tokens, list(watch.clearable.kept)
    for index, entry in enumerate(appended):
        if entry.type in ("compaction", "context_edit", "branch_summary") or (
            entry.type == "custom" and _PRUNE_MARK in entry.raw
        ):
            return None
        message = message_of(entry, objs[index] if objs is not None else None)
        if message is None or message.get("role") != "toolResult":
            continue
        kept.append(output_saving(message))
        while len(kept) > keep:
            tokens += kept.pop(0)
    return Clearable([], tokens, kept)


def clear_after_append(
    session: Session,
    appended: list[Entry],
    objs: list[dict[str, Any]] | None,
    tokens: int,
    settings: ClearToolResultsSettings,
    tallies: weakref.WeakKeyDictionary[Session, TokenTally],
    defer_sync: bool,
) -> tuple[wire.ClearedToolResults | None, int]:
    """Append the clearing the leaf's context calls for, if any; the result field and the context size after it."""
    if session.compat == "omp":
        return None, tokens  # oh-my-pi's rules do not read the overlay (it prunes with prunedAt itself)
    carried = _carried(session, appended, objs, settings.keepToolResults)
    if carried is not None and carried.tokens < max(1, settings.minimumTokens):
        _watches[session] = _Watch(session.leaf_id, carried)
        return None, tokens
    plan, left = assess(session.tree.path(session.leaf_id), settings)
    if plan is None:
        _watches[session] = _Watch(session.leaf_id, left)
        return None, tokens
    (entry,) = session.append([plan.entry()], defer_sync=defer_sync)
    _watches[session] = _Watch(entry.id, left)
    previous = tallies.get(session)
    # The outputs were counted in full: by the last usage the model reported when they came before
    # it (the next request will not send them), else by their estimates. Take the freed estimate
    # off, rather than build the context once more or wait for the next report.
    if previous is None:
        tally = TokenTally.of_path(session.tree.path(session.leaf_id))
    elif previous.usage > 0:
        tally = TokenTally(entry.id, max(0, previous.usage - plan.tokens_freed), previous.trailing)
    else:
        tally = TokenTally(entry.id, 0, max(0, previous.trailing - plan.tokens_freed))
    tallies[session] = tally
    return (
        wire.ClearedToolResults(
            entryId=entry.id,  # type: ignore[arg-type]  # written: it has an id (Entry's is optional for v1 lines)
            toolResultIds=plan.tool_result_ids,
            tokensFreed=plan.tokens_freed,
            contextTokensBefore=tokens,
        ),
        tally.total,
    )
