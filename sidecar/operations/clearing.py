"""Tool-result clearing after ``session/append``: plan it, write it, and count the context again."""

from __future__ import annotations

import weakref

from .. import wire
from ..compaction.clearing import plan_for_path
from ..config import ClearToolResultsSettings
from ..context.tally import TokenTally
from ..store.session import Session


def clear_after_append(
    session: Session,
    tokens: int,
    settings: ClearToolResultsSettings,
    tallies: weakref.WeakKeyDictionary[Session, TokenTally],
    defer_sync: bool,
) -> tuple[wire.ClearedToolResults | None, int]:
    """Append the clearing the leaf's context calls for, if any; the result field and the context size after it."""
    plan = plan_for_path(session.tree.path(session.leaf_id), settings)
    if plan is None:
        return None, tokens
    (entry,) = session.append([plan.entry()], defer_sync=defer_sync)
    previous = tallies.get(session)
    if previous is not None and previous.usage > 0:
        # The last usage the model reported counted the outputs in full; the next request will not
        # send them. Take what they were estimated at off it, rather than wait for the next report.
        tally = TokenTally(entry.id, max(0, previous.usage - plan.tokens_freed), previous.trailing)
    else:
        tally = TokenTally.of_path(session.tree.path(session.leaf_id))
    tallies[session] = tally
    return (
        wire.ClearedToolResults(
            entryId=entry.id,  # type: ignore[arg-type]
            toolResultIds=plan.tool_result_ids,
            tokensFreed=plan.tokens_freed,
            contextTokensBefore=tokens,
        ),
        tally.total,
    )
