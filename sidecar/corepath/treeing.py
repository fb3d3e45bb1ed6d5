"""The tree's index of its entries (issue 42, goal 2): the interface, and the pure-Python reference.

``SessionTree`` (sidecar/store/tree.py) keeps the lists and the dict its
callers read (``entries``, ``by_id``, the orphans); an index fills them from
a parse's items and may walk a path faster than the tree's own walk. The
Python index fills them with the loop the tree ran before there was a
compiled core and walks nothing (None: the tree walks). The compiled one
(core/src/tree.rs) fills them the same way, keeps each entry's parent as an
index in a column beside them, and walks that column; where it cannot vouch
for a walk it says None too. Both give the tree the same entries, dict,
orphans and paths (tests/store/test_tree_differential.py).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any, Protocol


class TreeIndex(Protocol):
    def add_parsed(
        self,
        items: list[Any],
        entry_type: type[Any],
        entries: list[Any],
        by_id: dict[str, Any],
        orphans: list[Any],
        noted: Collection[str],
        noted_later: Collection[str],
        note: Callable[[Any], bool],
    ) -> Any | None:
        """Each ``entry_type`` of ``items`` with an id onto ``entries`` and into ``by_id``, its ``parent_id`` made
        the parent's own id string, onto ``orphans`` when ``by_id`` holds no parent; ``note(entry)`` for each whose
        type is in ``noted`` (from its first True on, in ``noted_later``). The last entry added, or None."""
        ...

    def truncate(self, length: int) -> None:
        """The tree's ``entries`` were cut to ``length``."""
        ...

    def path(self, leaf_id: str, entries: list[Any], by_id: dict[str, Any]) -> list[Any] | None:
        """The entries from the root to ``by_id[leaf_id]`` (none when it is not there), or None: the tree walks."""
        ...


class PythonTreeIndex:
    """The loop ``SessionTree.add_parsed`` ran before the compiled core, and no walk of its own."""

    def add_parsed(
        self,
        items: list[Any],
        entry_type: type[Any],
        entries: list[Any],
        by_id: dict[str, Any],
        orphans: list[Any],
        noted: Collection[str],
        noted_later: Collection[str],
        note: Callable[[Any], bool],
    ) -> Any | None:
        last = None
        last_id = None  # the last entry's id: most entries' parent is the entry before them
        for item in items:
            if type(item) is not entry_type and not isinstance(item, entry_type):
                continue
            entry_id = item.id
            if entry_id is None:
                continue
            entries.append(item)
            by_id[entry_id] = item
            parent_id = item.parent_id
            if parent_id == last_id and parent_id is not None:
                # by_id holds the last entry under its id (it was just added): no lookup in a large dict
                item.parent_id = last_id
            elif parent_id is not None:
                parent = by_id.get(parent_id)
                if parent is not None:
                    item.parent_id = parent.id  # one string object for both (400,000 entries: ~20 MB)
                else:
                    orphans.append(item)
            if item.type in noted and note(item):
                noted = noted_later
            last, last_id = item, entry_id
        return last

    def truncate(self, length: int) -> None:
        pass

    def path(self, leaf_id: str, entries: list[Any], by_id: dict[str, Any]) -> list[Any] | None:
        return None
