"""``session-sidecar du``, ``prune`` and ``empty-trash``: the upkeep commands, printed for a person."""

from __future__ import annotations

import time
from typing import TextIO

from .. import wire
from ..errors import SidecarError
from ..service import SessionService
from .retention import parse_duration


def human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if value < 1000 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{size} B"


def run_du(service: SessionService, largest: int, blobs: bool, out: TextIO) -> int:
    stats = service.stats(wire.StatsParams(largest=largest, blobs=blobs))
    print(f"{human(stats.totalBytes):>10}  total below {service.root}", file=out)
    for label, size in (
        ("live sessions", stats.liveBytes),
        ("archive", stats.archiveBytes),
        ("trash", stats.trashBytes),
        (f"blobs ({stats.blobCount})", stats.blobBytes),
        ("listing index and history", stats.indexBytes),
    ):
        print(f"{human(size):>10}  {label}", file=out)
    if stats.unreferencedBlobs is not None:
        print(
            f"{human(stats.unreferencedBytes or 0):>10}  in {stats.unreferencedBlobs} blobs no session refers to "
            "(empty-trash --blobs removes them)",
            file=out,
        )
    print(f"\n{stats.sessionCount} session files; by project folder (live and archived):", file=out)
    for folder in stats.folders:
        print(f"{human(folder.bytes):>10}  {folder.sessions:>6}  {folder.folder}", file=out)
    if stats.largest:
        print("\nlargest sessions:", file=out)
        for item in stats.largest:
            print(f"{human(item.bytes):>10}  {item.area:<7}  {item.path}", file=out)
    return 0


def run_prune(service: SessionService, params: wire.PruneParams, out: TextIO) -> int:
    try:
        result = service.prune(params)
    except SidecarError as exc:
        print(f"session-sidecar prune: {exc.message}", file=out)
        return 2
    verb = "would go to the trash" if params.dryRun else "moved to the trash (session/restore brings one back)"
    for item in result.selected:
        print(f"{human(item.bytes):>10}  {item.path}  ({item.reason})", file=out)
    for item in result.skipped:
        print(f"   skipped  {item.path}: {item.reason}", file=out)
    total = sum(item.bytes for item in result.selected)
    print(
        f"{len(result.selected)} sessions, {human(total)}, {verb}; {result.pinned} named or labelled sessions pinned",
        file=out,
    )
    return 1 if result.skipped else 0


def run_empty_trash(service: SessionService, older_than: str | None, blobs: bool, dry_run: bool, out: TextIO) -> int:
    try:
        seconds = parse_duration(older_than, "--older-than") if older_than is not None else None
    except SidecarError as exc:
        print(f"session-sidecar empty-trash: {exc.message}", file=out)
        return 2
    verb = "would erase" if dry_run else "erased"
    try:
        trashed = service.store.empty_trash(seconds, time.time_ns(), dry_run)
    except SidecarError as exc:  # a store that keeps no trash of this kind (the spec format), the database away
        print(f"session-sidecar empty-trash: {exc.message}", file=out)
        return 2
    print(f"{verb} {len(trashed.files)} files from the trash, {human(trashed.bytes)}", file=out)
    for path, why in trashed.skipped:
        print(f"  kept {path}: {why}", file=out)
    skipped = bool(trashed.skipped)
    if blobs:
        try:
            collected = service.store.collect_blobs(dry_run)
        except SidecarError as exc:
            print(f"session-sidecar empty-trash --blobs: {exc.message}", file=out)
            return 2
        print(f"{verb} {len(collected.files)} blobs no session refers to, {human(collected.bytes)}", file=out)
        skipped = skipped or bool(collected.skipped)
    return 1 if skipped else 0
