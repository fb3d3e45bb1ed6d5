"""``session/stats`` and ``session/prune``: what the store holds, and retention (to the trash, never erased)."""

from __future__ import annotations

import time
from collections.abc import Callable

from .. import wire
from ..config import RetentionSettings
from ..errors import InvalidParams, SidecarError
from ..store import SessionStore
from ..upkeep.report import retention_policy, stats_result
from ..upkeep.retention import select
from .results import MAX_LIST_LIMIT


def stats(store: SessionStore, params: wire.StatsParams) -> wire.StatsResult:
    if not 0 <= params.largest <= MAX_LIST_LIMIT:
        raise InvalidParams(f"largest must be between 0 and {MAX_LIST_LIMIT}", largest=params.largest)
    return stats_result(store.usage(params.blobs), params.largest)


def prune(
    store: SessionStore, params: wire.PruneParams, settings: RetentionSettings, trash: Callable[[str], None]
) -> wire.PruneResult:
    policy = retention_policy(params, settings)
    candidates = [f for f in store.usage(False).sessions if f.area != "trash" and f.session_id is not None]
    selected, pinned = select(candidates, policy, time.time_ns(), store.pinned)
    if selected and len(selected) == len(candidates) and not params.confirm and not params.dryRun:
        raise InvalidParams(
            f"this policy would send every one of the {len(candidates)} sessions to the trash; "
            "pass confirm: true (--yes) if that is meant, or try it with dryRun first",
            field="confirm",
        )
    chosen, skipped, moved = [], [], 0
    for item in selected:
        found = item.session
        listed = wire.PrunedSession(
            sessionId=found.session_id, path=str(found.path), bytes=found.size, reason=item.reason
        )
        if not params.dryRun:
            try:
                trash(found.session_id)  # type: ignore[arg-type]  # a file the policy prunes is a session's: its id is known
            except SidecarError as exc:
                listed.reason = exc.message
                skipped.append(listed)
                continue
            moved += found.size
        chosen.append(listed)
    return wire.PruneResult(selected=chosen, movedBytes=moved, pinned=len(pinned), skipped=skipped)
