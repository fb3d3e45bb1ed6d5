"""What snapshots write: the ``custom`` entry naming a snapshot, and the journal of a rewind in progress."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import msgspec

# The customType of a snapshot entry. pi and oh-my-pi keep custom entries and leave them out of the context.
SNAPSHOT_TYPE = "session-sidecar/snapshot"


class NotCaptured(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A file the snapshot names but does not hold: over the size cap, or a folder that is a git repository."""

    path: str
    size: int
    reason: str = "tooLarge"


class SnapshotRecord(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The ``data`` of a snapshot entry.

    ``tree`` is a git tree id in ``repo`` (a folder relative to the sessions
    root); ``cwd`` is the folder it was taken of; ``entryId`` the entry of the
    conversation it belongs to (the leaf when it was taken).
    """

    tree: str
    repo: str
    cwd: str
    entryId: str | None = None
    reason: Literal["snapshot", "rewind"] = "snapshot"
    notCaptured: list[NotCaptured] = []
    version: int = 1


def snapshot_entry(record: SnapshotRecord) -> dict[str, object]:
    return {"type": "custom", "customType": SNAPSHOT_TYPE, "data": msgspec.to_builtins(record)}


def record_of(obj: Mapping[str, object]) -> SnapshotRecord | None:
    """The record of a snapshot entry; None for any other entry, or one whose data is not a record."""
    if obj.get("type") != "custom" or obj.get("customType") != SNAPSHOT_TYPE:
        return None
    try:
        return msgspec.convert(obj.get("data"), SnapshotRecord)
    except msgspec.ValidationError:
        return None


class Action(msgspec.Struct, kw_only=True, omit_defaults=True, array_like=True):
    """One change a rewind makes: put blob ``oid`` with git ``mode`` at ``path``, or remove ``path``."""

    path: str
    op: Literal["write", "remove"]
    kind: Literal["restored", "created", "removed"]
    mode: str = ""
    oid: str = ""


class RewindJournal(msgspec.Struct, kw_only=True):
    """Written (and forced to disk) before the first file is touched, removed after the last.

    Every file is changed by an atomic rename or an unlink, so after a crash
    each is either as before or as after; running the actions again finishes
    the rewind (each one is idempotent).
    """

    sessionId: str
    cwd: str
    repo: str
    fromTree: str
    toTree: str
    targetEntryId: str
    snapshotEntryId: str
    undoEntryId: str
    actions: list[Action]
