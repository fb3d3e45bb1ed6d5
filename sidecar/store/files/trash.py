"""Emptying the trash, and collecting the blobs no session refers to any more.

Both erase, so both are explicit commands, never a side effect of a policy.
A blob is collected only when no session file anywhere below the root (live,
archived or trashed) refers to it, and only when it was not stored or reused
in the last hour (the blob store touches a blob it reuses): an append that
takes an existing blob while the collection runs keeps it. Each blob is
removed on its own, so a collection stopped halfway leaves only blobs that
nothing refers to, never a reference to a blob that is gone.
"""

from __future__ import annotations

import time
from pathlib import Path

from ..usage import BLOB_GRACE_S, Erased
from .layout import TRASH_DIR, Layout
from .lock import lock_path, unlock
from .usage import blob_files, blob_references, session_files
from .writer import fsync_dir


def empty_trash(layout: Layout, older_than_s: int | None, now_ns: int, dry_run: bool) -> Erased:
    """Erase trashed sessions (those trashed longer ago than ``older_than_s``, when given) and their backups."""
    erased = Erased()
    cutoff = None if older_than_s is None else now_ns - older_than_s * 1_000_000_000
    for found in session_files(layout):
        if found.area != "trash":
            continue
        # The trash keeps a file's mtime; its ctime is when it was moved there.
        try:
            trashed_ns = found.path.stat().st_ctime_ns
        except OSError:
            continue
        if cutoff is not None and trashed_ns >= cutoff:
            continue
        if dry_run:
            erased.files.append(found.path)
            erased.bytes += found.size
            continue
        try:
            held = lock_path(found.path)
        except Exception as exc:  # held by a sidecar that opened it from the trash
            erased.skipped.append((found.path, str(getattr(exc, "message", exc))))
            continue
        try:
            for extra in [found.path, *found.path.parent.glob(found.path.name + ".*")]:
                size = extra.stat().st_size
                extra.unlink()
                erased.files.append(extra)
                erased.bytes += size
            fsync_dir(found.path.parent)
        except OSError as exc:
            erased.skipped.append((found.path, exc.strerror or str(exc)))
        finally:
            unlock(held)
        try:
            found.path.parent.rmdir()  # the folder, once empty
        except OSError:
            pass
    return erased


def collect_blobs(layout: Layout, blob_folders: list[Path], dry_run: bool, grace_s: int = BLOB_GRACE_S) -> Erased:
    started_ns = time.time_ns()
    referenced = blob_references(found.path for found in session_files(layout))
    erased = Erased()
    for path, size, mtime_ns in blob_files(blob_folders):
        if path.name in referenced or mtime_ns > started_ns - grace_s * 1_000_000_000:
            continue
        if not dry_run:
            try:
                path.unlink()
            except OSError as exc:
                erased.skipped.append((path, exc.strerror or str(exc)))
                continue
        erased.files.append(path)
        erased.bytes += size
    if erased.files and not dry_run:
        for folder in {p.parent for p in erased.files}:
            fsync_dir(folder)
    return erased


__all__ = ["BLOB_GRACE_S", "Erased", "collect_blobs", "empty_trash", "TRASH_DIR"]
