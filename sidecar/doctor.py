"""``session-sidecar doctor``: find session files whose history is cut off, and mend them with --fix.

Today it looks for one fault: entries whose ``parentId`` names an entry that
is not in the file (store/files/repair.py says where they come from and how they
are mended). Every file below the root is checked (live, archived, trash), or
only the files named.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from .errors import SidecarError
from .store.files import ARCHIVE_DIR, TRASH_DIR, Layout, RepairReport, find_dangling, reconnect_dangling


def run_doctor(root: Path, files: list[Path], fix: bool, out: TextIO) -> int:
    """0: nothing wrong, or everything mended; 1: faults left (run again with --fix); 2: a file could not be read."""
    paths = files or _all_session_files(Layout(root))
    faults = failures = 0
    for path in paths:
        try:
            report = reconnect_dangling(path) if fix else find_dangling(path)
        except (SidecarError, OSError) as exc:
            failures += 1
            print(f"{path}: {getattr(exc, 'message', None) or exc}", file=out)
            continue
        if report.reconnected:
            faults += 0 if report.written else 1
            _describe(report, out)
    checked = len(paths)
    print(
        f"checked {checked} session file{'s' if checked != 1 else ''}"
        f"{'' if faults == 0 else f'; {faults} with entries cut off from their history (run with --fix)'}",
        file=out,
    )
    if failures:
        return 2
    return 1 if faults else 0


def _describe(report: RepairReport, out: TextIO) -> None:
    done = "reconnected" if report.written else "would reconnect"
    print(
        f"{report.path}: {len(report.reconnected)} entr{'y' if len(report.reconnected) == 1 else 'ies'} "
        f"named a parent not in the file; {done}:",
        file=out,
    )
    for item in report.reconnected:
        target = item.new_parent if item.new_parent is not None else "nothing (a new root)"
        print(f"  {item.entry_id}: parent {item.missing_parent} -> {target}", file=out)
    if report.backup is not None:
        print(f"  the original is kept at {report.backup}", file=out)


def _all_session_files(layout: Layout) -> list[Path]:
    found: list[Path] = []
    for base in (layout.root, layout.root / ARCHIVE_DIR, layout.root / TRASH_DIR):
        for folder in sorted(layout.project_dirs(base)):
            found.extend(sorted(layout.session_files(folder)))
    return found
