"""What an export holds: one path (root to a leaf) or the whole tree, every entry on it.

The whole history, not the built context: entries a compaction folded into its
summary are still on the path and are exported, with the compaction shown in place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import EntryNotFound, InvalidState
from ..format.entry import Entry
from ..store import Session


@dataclass(slots=True)
class Selection:
    scope: Literal["path", "tree"]
    leaf_id: str | None
    # (entry as a dict, parent id for display, its line as written, the entry), parents before children.
    entries: list[tuple[dict[str, Any], str | None, bytes, Entry]]
    labels: dict[str, str]


def select(
    session: Session, leaf_id: str | None, whole_tree: bool, resolve: Callable[[Entry], dict[str, Any]] | None = None
) -> Selection:
    """The entries to export. ``resolve`` turns an entry into its dict (blob references put back)."""
    tree = session.tree
    leaf = leaf_id if leaf_id is not None else tree.leaf_id
    if leaf_id is not None and leaf_id not in tree.by_id:
        raise EntryNotFound(f"leafId {leaf_id!r} is not in session {session.id}", entryId=leaf_id)
    as_dict = resolve or (lambda entry: entry.obj())
    if whole_tree:
        pairs = [(as_dict(entry), parent, entry.raw, entry) for entry, parent in tree.effective_parents()]
        return Selection("tree", leaf, pairs, dict(tree.labels))
    if leaf is None:
        raise InvalidState(
            f"session {session.id} has no leaf (it is empty or was reset); name a leafId or ask for all",
            sessionId=session.id,
        )
    path = tree.path(leaf)
    pairs = [(as_dict(entry), path[i - 1].id if i else None, entry.raw, entry) for i, entry in enumerate(path)]
    return Selection("path", leaf, pairs, dict(tree.labels))
