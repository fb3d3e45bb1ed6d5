"""What a store holds and what erasing did, in the same terms for every backend.

``session/stats`` and ``session/prune`` read a ``StoreUsage`` (each session with its bytes as a
pi file, the blobs, the index); ``empty-trash`` and blob collection answer an ``Erased``. The file
backend measures and erases below its root (files/usage.py, files/trash.py), the PostgreSQL
backend in its rows (postgres/upkeep.py, postgres/erasing.py); upkeep/ turns both into answers.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

# A blob stored or reused this recently is never collected (an append may be taking it now).
BLOB_GRACE_S = 3600


@dataclass(slots=True)
class Erased:
    files: list[Path] = field(default_factory=list)
    bytes: int = 0
    skipped: list[tuple[Path, str]] = field(default_factory=list)


@dataclass(slots=True, frozen=True)
class SessionFile:
    path: Path
    area: str  # "live", "archive" or "trash"
    cwd_folder: str  # the encoded cwd folder it sits in
    session_id: str | None
    size: int
    mtime_ns: int


@dataclass(slots=True)
class StoreUsage:
    sessions: list[SessionFile] = field(default_factory=list)
    bytes_by_area: dict[str, int] = field(default_factory=dict)
    blob_bytes: int = 0
    blob_count: int = 0
    index_bytes: int = 0
    # With blob references looked up: blobs no session (live, archived or trashed) refers to.
    unreferenced_blobs: list[Path] | None = None
    unreferenced_bytes: int = 0

    @property
    def total_bytes(self) -> int:
        return sum(self.bytes_by_area.values()) + self.blob_bytes + self.index_bytes


def folder_bytes(folder: Path) -> int:
    """Bytes of every file below ``folder`` (the listing index, history and tree caches)."""
    total = 0
    for base, _, names in os.walk(folder):
        for name in names:
            try:
                total += os.lstat(os.path.join(base, name)).st_size
            except OSError:
                continue
    return total
