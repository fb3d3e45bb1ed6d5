"""Upkeep: what the store holds (stats), and retention (prune)."""

from __future__ import annotations

from typing import Literal

from .base import _Params, _Result


class StatsParams(_Params):
    # How many of the largest sessions to name.
    largest: int = 10
    # Also find the blobs no session refers to (reads every session file).
    blobs: bool = False


class FolderUsage(_Result):
    # The project folder below the root (its name encodes the cwd, as pi's does).
    folder: str
    bytes: int
    sessions: int


class SessionUsage(_Result):
    sessionId: str | None
    path: str
    area: Literal["live", "archive", "trash"]
    bytes: int


class StatsResult(_Result):
    totalBytes: int
    liveBytes: int
    archiveBytes: int
    trashBytes: int
    blobBytes: int
    blobCount: int
    indexBytes: int
    sessionCount: int
    # Live and archived sessions by project folder, the largest first.
    folders: list[FolderUsage]
    largest: list[SessionUsage]
    # With ``blobs``: blobs no session (live, archived or trashed) refers to.
    unreferencedBlobs: int | None = None
    unreferencedBytes: int | None = None


class PruneParams(_Params):
    """A retention policy; absent fields come from the settings' ``retention`` section."""

    # A duration: "90d", "12h", "2w" (s, m, h, d, w).
    olderThan: str | None = None
    keepPerCwd: int | None = None
    # A size: "5GB", "500MiB".
    maxTotal: str | None = None
    # Named or labelled sessions are pinned out of every policy unless this is true.
    includePinned: bool = False
    dryRun: bool = False
    # Needed when the policy would send every session to the trash.
    confirm: bool = False


class PrunedSession(_Result):
    sessionId: str | None
    path: str
    bytes: int
    reason: str


class PruneResult(_Result):
    # What the policy selected: moved to the trash (restorable), or only listed with dryRun.
    selected: list[PrunedSession]
    movedBytes: int
    pinned: int
    # Selected but left where they are (another sidecar holds them), with why.
    skipped: list[PrunedSession] = []
