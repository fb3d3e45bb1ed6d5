"""Wire params to policies, measurements to wire results (kept out of sidecar/service/, which only maps)."""

from __future__ import annotations

from typing import TypeVar

from .. import wire
from ..config import RetentionSettings
from ..errors import InvalidParams
from ..store import StoreUsage
from .retention import RetentionPolicy, parse_duration, parse_size

T = TypeVar("T")


def retention_policy(params: wire.PruneParams, defaults: RetentionSettings) -> RetentionPolicy:
    """The policy of a prune call: its own fields, else the settings'; none at all is an error."""
    # A value from the settings is named as the settings name it, so the refusal says where to fix it.
    older, older_field = _given(params.olderThan, defaults.olderThan, "olderThan")
    keep, keep_field = _given(params.keepPerCwd, defaults.keepPerCwd, "keepPerCwd")
    total, total_field = _given(params.maxTotal, defaults.maxTotal, "maxTotal")
    if keep is not None and keep < 0:
        raise InvalidParams(f"{keep_field} must be 0 or more, not {keep}", field=keep_field)
    policy = RetentionPolicy(
        older_than_s=parse_duration(older, older_field) if older is not None else None,
        keep_per_cwd=keep,
        max_total_bytes=parse_size(total, total_field) if total is not None else None,
        include_pinned=params.includePinned or defaults.includePinned,
    )
    if policy.empty:
        raise InvalidParams(
            "no retention policy: give olderThan, keepPerCwd or maxTotal (or set them in the settings' "
            "[retention] section)",
            field="olderThan",
        )
    return policy


def _given(value: T | None, default: T | None, name: str) -> tuple[T | None, str]:
    """The call's value, else the settings' (then named ``retention.<name>``)."""
    if value is not None:
        return value, name
    return default, f"retention.{name}"


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
        folders=[
            wire.FolderUsage(folder=name, bytes=size, sessions=count)
            for name, (size, count) in sorted(folders.items(), key=lambda item: (-item[1][0], item[0]))
        ],
        largest=[
            wire.SessionUsage(sessionId=s.session_id, path=str(s.path), area=s.area, bytes=s.size)  # type: ignore[arg-type]  # area is one of SessionUsage's literals (the store's areas)
            for s in by_size
        ],
        unreferencedBlobs=None if usage.unreferenced_blobs is None else len(usage.unreferenced_blobs),
        unreferencedBytes=None if usage.unreferenced_blobs is None else usage.unreferenced_bytes,
    )
