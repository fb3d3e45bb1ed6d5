"""Snapshots of the working tree, diffs and rewind."""

from __future__ import annotations

from typing import Literal

import msgspec

from .base import _Params, _Result


class SnapshotParams(_Params):
    sessionId: str
    # The entry the snapshot belongs to: the leaf (default) or an entry on the path to it.
    entryId: str | None = None
    # The folder to snapshot; default the session's cwd (header).
    cwd: str | None = None
    # Look only at these paths (relative to cwd); the rest is as in the session's last snapshot.
    paths: list[str] | None = None
    # Files bigger than this are not captured (listed in notCaptured). 10 MiB (null: the same,
    # snapshots.engine.DEFAULT_MAX_FILE_BYTES).
    maxFileBytes: int | None = 10 * 1024 * 1024


class NotCapturedFile(_Result):
    path: str
    size: int
    reason: str  # "tooLarge"; "nestedRepository": a folder with its own .git (size 0)


class SnapshotResult(_Result):
    entryId: str  # the custom entry (customType "session-sidecar/snapshot") naming the snapshot
    tree: str  # the snapshot's id (a git tree in the shadow repository)
    changedFiles: int  # files that differ from the session's previous snapshot of this folder
    notCaptured: list[NotCapturedFile] = []
    durationMs: int = 0


class DiffParams(_Params):
    sessionId: str
    # An entry id (the snapshot at or before it) or "worktree" (the folder as it is now).
    from_: str = msgspec.field(name="from")
    to: str
    # Include unified diffs of the changed text files.
    patch: bool = False
    contextLines: int = 3


class FileChange(_Result):
    path: str
    change: Literal["added", "modified", "removed", "renamed", "typeChanged"]
    oldPath: str | None = None
    binary: bool = False
    additions: int | None = None
    deletions: int | None = None


class DiffResult(_Result):
    fromTree: str
    toTree: str
    files: list[FileChange]
    patch: str | None = None


class RewindParams(_Params):
    sessionId: str
    entryId: str
    # Also put the files back to the snapshot at or before entryId.
    files: bool = False
    # Report what would change; change nothing.
    dryRun: bool = False
    # Overwrite files changed outside the agent since the last snapshot (they stay in the undo snapshot).
    force: bool = False


class SkippedFile(_Result):
    path: str
    reason: str


class RewindResult(_Result):
    leafId: str | None
    dryRun: bool = False
    # The snapshot entry the files were put back to.
    snapshotEntryId: str | None = None
    # The snapshot of the files taken just before: rewind to it to undo this rewind.
    undoEntryId: str | None = None
    restored: list[str] = []
    created: list[str] = []
    removed: list[str] = []
    # Files left as they are, and why (not captured, in the way, a symlinked folder).
    skipped: list[SkippedFile] = []
    # A rewind interrupted earlier (a crash) was finished first.
    resumed: bool = False
