"""Finding and mending session files whose entries name parents that are not there.

A fork that dropped label entries without re-chaining (pi 0.73.1, this
sidecar before it copied paths through store/pathcopy.py) or a hand edit
leaves entries whose ``parentId`` names no entry of the file. Readers then
see the path stop at such an entry and the history before it vanish.

The mend is the one a reader would guess: an entry whose parent is missing
is reconnected to the entry written just before it in the file (the entry a
linear writer appended before it), unless that would close a loop, in which
case the nearest earlier entry that does not descend from it; an entry with
nothing before it becomes a root. The file is rewritten atomically with the
original kept beside it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import DamagedFile
from ...format.jsonl import Entry, NotASession, parse_path, serialize
from .lock import lock_path, unlock
from .writer import atomic_write


@dataclass(slots=True)
class Reconnection:
    entry_id: str
    missing_parent: str
    new_parent: str | None


@dataclass(slots=True)
class RepairReport:
    path: Path
    reconnected: list[Reconnection] = field(default_factory=list)
    backup: Path | None = None
    written: bool = False


def find_dangling(path: Path) -> RepairReport:
    """What :func:`reconnect_dangling` would change, without writing anything."""
    return _plan(path)[0]


def reconnect_dangling(path: Path) -> RepairReport:
    """Reconnect every entry of ``path`` whose parent is missing, under the session's lock.

    Raises SessionLocked when a sidecar holds the file open, DamagedFile when it is no session.
    """
    lock_fd = lock_path(path)
    try:
        report, header, items = _plan(path)
        if not report.reconnected:
            return report
        report.backup = _free_backup_name(path)
        # A torn last line stays in the backup only, as a migration's rewrite leaves it.
        atomic_write(path, serialize(header, items), backup=report.backup)
        report.written = True
        return report
    finally:
        unlock(lock_fd)


def _plan(path: Path) -> tuple[RepairReport, Entry, list]:
    try:
        parsed = parse_path(path)
    except NotASession as exc:
        raise DamagedFile(f"{path} is not a session file: {exc}", path=str(path)) from exc
    report = RepairReport(path)
    items = list(parsed.items)
    ids = {item.id for item in items if isinstance(item, Entry) and item.id is not None}
    parent_of: dict[str, str | None] = {}
    written_before: list[str] = []  # ids in file order, up to the entry being looked at
    for index, item in enumerate(items):
        if not isinstance(item, Entry) or item.id is None:
            continue
        parent = item.parent_id
        if parent is not None and parent not in ids:
            new_parent = _earlier_non_descendant(item.id, written_before, parent_of)
            obj = item.obj()
            obj["parentId"] = new_parent
            items[index] = Entry.from_obj(obj)
            report.reconnected.append(Reconnection(item.id, parent, new_parent))
            parent = new_parent
        parent_of[item.id] = parent
        written_before.append(item.id)
    return report, parsed.header, items


def _earlier_non_descendant(entry_id: str, earlier: list[str], parent_of: dict[str, str | None]) -> str | None:
    for candidate in reversed(earlier):
        if not _descends_from(candidate, entry_id, parent_of):
            return candidate
    return None


def _descends_from(candidate: str, ancestor: str, parent_of: dict[str, str | None]) -> bool:
    seen: set[str] = set()
    current: str | None = candidate
    while current is not None and current not in seen:
        if current == ancestor:
            return True
        seen.add(current)
        current = parent_of.get(current)
    return False


def _free_backup_name(path: Path) -> Path:
    backup = path.with_name(f"{path.name}.doctor.bak")
    number = 1
    while os.path.lexists(backup):
        number += 1
        backup = path.with_name(f"{path.name}.doctor-{number}.bak")
    return backup
