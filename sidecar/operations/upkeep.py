"""``session/stats`` and ``session/prune``: what the store holds, and retention (to the trash, never erased)."""

from __future__ import annotations

import time
from typing import Callable

from .. import wire
from ..config import RetentionSettings
from ..errors import InvalidParams, SidecarError
from ..store.index import INDEX_DIR
from ..store.files import FileStore
from ..upkeep.report import retention_policy, stats_result
from ..upkeep.retention import select
from ..upkeep.usage import measure, session_files
from .results import MAX_LIST_LIMIT


def _files_only(store: FileStore, method: str) -> None:
    if not isinstance(store, FileStore):
        kept = "in PostgreSQL" if getattr(store.settings.store, "databaseUrl", None) else "in the spec format"
        raise InvalidParams(f"{method} covers session files below a pi-format root only for now (this sidecar keeps "
                            f"its sessions {kept}); run it on a file root")


def stats(store: FileStore, params: wire.StatsParams) -> wire.StatsResult:
    _files_only(store, "session/stats")
    if not 0 <= params.largest <= MAX_LIST_LIMIT:
        raise InvalidParams(f"largest must be between 0 and {MAX_LIST_LIMIT}", largest=params.largest)
    usage = measure(store.layout, list(store.blobs.folders), store.root / INDEX_DIR, params.blobs)
    return stats_result(usage, params.largest)


def prune(
    store: FileStore, params: wire.PruneParams, settings: RetentionSettings, trash: Callable[[str], None]
) -> wire.PruneResult:
    _files_only(store, "session/prune")
    policy = retention_policy(params, settings)
    candidates = [f for f in session_files(store.layout) if f.area != "trash" and f.session_id is not None]
    selected, pinned = select(candidates, policy, time.time_ns())
    if selected and len(selected) == len(candidates) and not params.confirm and not params.dryRun:
        raise InvalidParams(
            f"this policy would send every one of the {len(candidates)} sessions to the trash; "
            "pass confirm: true (--yes) if that is meant, or try it with dryRun first", field="confirm")
    chosen, skipped, moved = [], [], 0
    for item in selected:
        found = item.session
        listed = wire.PrunedSession(sessionId=found.session_id, path=str(found.path), bytes=found.size,
                                    reason=item.reason)
        if not params.dryRun:
            try:
                trash(found.session_id)  # type: ignore[arg-type]
            except SidecarError as exc:
                listed.reason = exc.message
                skipped.append(listed)
                continue
            moved += found.size
        chosen.append(listed)
    return wire.PruneResult(selected=chosen, movedBytes=moved, pinned=len(pinned), skipped=skipped)
