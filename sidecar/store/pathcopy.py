"""Copying one path of a session's tree into another session, still connected.

Labels are entries of the tree, so the entry after a label has the label as
its parent. A copy leaves label entries out (it writes the labels of the
copied entries again after the path, so labels set on other branches come
along too), and that would leave the entry after each label pointing at an id
the new file does not hold: pi, and we, would then see the path stop there
and the history before it vanish (pi 0.73.1's fork bug, pi #5669).

So every copy goes through :func:`connected_path`: each kept entry's
``parentId`` becomes the kept entry before it, and a compaction whose
``firstKeptEntryId`` names a dropped label names the kept entry that followed
that label instead, as later pi releases do. Entries whose envelope does not
change keep their bytes; the others are encoded again in their own key order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..format.jsonl import Entry


@dataclass(slots=True)
class CopiedPath:
    # The path without its label entries, each one's parent the entry before it (None first).
    entries: list[Entry]
    # Label entries (type, targetId, label, timestamp) to append after ``entries``.
    labels: list[dict[str, object]] = field(default_factory=list)


def connected_path(
    path: list[Entry],
    labels: Mapping[str, str],
    label_times: Mapping[str, str] | None = None,
) -> CopiedPath:
    """``path`` (root first) as a connected run of entries for a new file, with its labels to re-write.

    ``labels`` maps entry ids to their current label (the source's, across all
    branches); ``label_times`` the timestamp of the label entry that set each
    one, kept on the re-written label entries as pi does.
    """
    kept: list[Entry] = []
    # A dropped label entry's id -> the kept entry that came after it on the path.
    replaced: dict[str, str] = {}
    pending: list[str] = []
    previous: str | None = None
    for entry in path:
        assert entry.id is not None
        if entry.type == "label":
            pending.append(entry.id)
            continue
        for label_id in pending:
            replaced[label_id] = entry.id
        pending.clear()
        kept.append(_rechained(entry, previous, replaced))
        previous = entry.id
    times = label_times or {}
    relabel = []
    for entry in kept:
        label = labels.get(entry.id)  # type: ignore[arg-type]  # an entry of a session has its id (Entry.id is typed str | None)
        if label:
            obj: dict[str, object] = {"type": "label", "targetId": entry.id, "label": label}
            if entry.id in times:
                obj["timestamp"] = times[entry.id]  # type: ignore[index]  # an entry of a session has its id (Entry.id is typed str | None)
            relabel.append(obj)
    return CopiedPath(kept, relabel)


def label_timestamps(entries: Iterable[Entry]) -> dict[str, str]:
    """When each entry's current label was set: the timestamp of the last label entry naming it."""
    times: dict[str, str] = {}
    for entry in entries:
        if entry.type != "label":
            continue
        obj = entry.obj()
        target = obj.get("targetId")
        if not isinstance(target, str):
            continue
        if isinstance(obj.get("label"), str) and obj["label"] and isinstance(entry.timestamp, str):
            times[target] = entry.timestamp
        else:
            times.pop(target, None)
    return times


def _rechained(entry: Entry, parent: str | None, replaced: Mapping[str, str]) -> Entry:
    """A detached copy of ``entry`` whose parent is ``parent`` (bytes kept when nothing changes)."""
    new_first_kept = None
    if entry.type == "compaction":
        first_kept = entry.obj().get("firstKeptEntryId")
        if isinstance(first_kept, str) and first_kept != entry.id and first_kept in replaced:
            new_first_kept = replaced[first_kept]
    if entry.parent_id == parent and new_first_kept is None:
        return entry.detached()
    obj = entry.obj()
    obj["parentId"] = parent
    if new_first_kept is not None:
        obj["firstKeptEntryId"] = new_first_kept
    copy = Entry.from_obj(obj)
    copy.head = copy.head or entry.head
    return copy
