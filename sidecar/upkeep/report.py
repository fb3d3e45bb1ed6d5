"""Wire params to policies, measurements to wire results (kept out of service.py, which only maps)."""

from __future__ import annotations

from .. import wire
from ..config import RetentionSettings
from ..errors import InvalidParams
from .retention import RetentionPolicy, parse_duration, parse_size
from .usage import StoreUsage


def retention_policy(params: wire.PruneParams, defaults: RetentionSettings) -> RetentionPolicy:
    """The policy of a prune call: its own fields, else the settings'; none at all is an error."""
    older = params.olderThan if params.olderThan is not None else defaults.olderThan
    keep = params.keepPerCwd if params.keepPerCwd is not None else defaults.keepPerCwd
    total = params.maxTotal if params.maxTotal is not None else defaults.maxTotal
    if keep is not None and keep < 0:
        raise InvalidParams(f"keepPerCwd must be 0 or more, not {keep}", field="keepPerCwd")
    policy = RetentionPolicy(
        older_than_s=parse_duration(older, "olderThan") if older is not None else None,
        keep_per_cwd=keep,
        max_total_bytes=parse_size(total, "maxTotal") if total is not None else None,
        include_pinned=params.includePinned or defaults.includePinned,
    )
    if policy.empty:
        raise InvalidParams(
            "no retention policy: give olderThan, keepPerCwd or maxTotal (or set them in the settings' "
            "[retention] section)", field="olderThan")
    return policy


def stats_result(usage: StoreUsage, largest: int) -> wire.StatsResult:
    folders: dict[str, list[int]] = {}
    for found in usage.sessions:
        if found.area != "trash":
            entry = folders.setdefault(found.cwd_folder, [0, 0])
            entry[0] += found.size
            entry[1] += 1
    by_size = sorted(usage.sessions, key=lambda s: (-s.size, str(s.path)))[:largest]
    return wire.StatsResult(
        totalBytes=usage.total_bytes,
        liveBytes=usage.bytes_by_area["live"],
        archiveBytes=usage.bytes_by_area["archive"],
        trashBytes=usage.bytes_by_area["trash"],
        blobBytes=usage.blob_bytes,
        blobCount=usage.blob_count,
        indexBytes=usage.index_bytes,
        sessionCount=len(usage.sessions),
        folders=[wire.FolderUsage(folder=name, bytes=size, sessions=count)
                 for name, (size, count) in sorted(folders.items(), key=lambda item: (-item[1][0], item[0]))],
        largest=[wire.SessionUsage(sessionId=s.session_id, path=str(s.path), area=s.area, bytes=s.size)  # type: ignore[arg-type]
                 for s in by_size],
        unreferencedBlobs=None if usage.unreferenced_blobs is None else len(usage.unreferenced_blobs),
        unreferencedBytes=None if usage.unreferenced_blobs is None else usage.unreferenced_bytes,
    )
