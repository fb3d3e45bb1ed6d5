"""The in-memory tree of one session: entries by id, children, labels, name, leaf."""

from __future__ import annotations

from dataclasses import dataclass

from .. import corepath
from ..format.jsonl import Entry
from ..format.jsstr import js_trim

_CONVERSATION_ROLES = ("user", "assistant")


class SessionTree:
    """Entries in file order, indexed for the walks the protocol needs."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.by_id: dict[str, Entry] = {}
        # Built when first asked for (no walk of ours needs it; a list per entry is ~35 MB at 400,000 entries).
        self._children: dict[str | None, list[Entry]] | None = None
        # Entries whose parent was not in the tree when they were added, in file order: only they can be
        # dangling (entries are never taken out but by remove_last, which takes their children with them).
        self._orphans: list[Entry] = []
        self.labels: dict[str, str] = {}
        self.name: str | None = None
        self.leaf_id: str | None = None
        # pi 1.5 writes a file once it holds a user or assistant message (0.73.1: an assistant message).
        self.has_conversation = False
        # Fills entries, by_id and _orphans from a parse and walks paths: the chosen core's (corepath/treeing.py).
        self._index = corepath.tree_index()

    def add(self, entry: Entry) -> None:
        """Index one entry and make it the leaf, as appending does in pi."""
        assert entry.id is not None
        self.entries.append(entry)
        self.by_id[entry.id] = entry
        parent = self.by_id.get(entry.parent_id) if entry.parent_id is not None else None
        if parent is not None:
            entry.parent_id = parent.id  # the same string: one object instead of two (400,000 entries: ~20 MB)
        elif entry.parent_id is not None:
            self._orphans.append(entry)
        if self._children is not None:
            self._children.setdefault(entry.parent_id, []).append(entry)
        self.leaf_id = entry.id
        self._note(entry)

    def _note(self, entry: Entry) -> None:
        """What an entry of its type changes besides the tree: a label, the name, whether there is a conversation."""
        if entry.type == "label":
            obj = entry.obj()
            target, label = obj.get("targetId"), obj.get("label")
            if isinstance(target, str):
                if isinstance(label, str) and label:
                    self.labels[target] = label
                else:
                    self.labels.pop(target, None)
        elif entry.type == "session_info":
            name = entry.obj().get("name")
            self.name = (js_trim(name) or None) if isinstance(name, str) else None
        elif entry.type == "message" and not self.has_conversation and entry.role() in _CONVERSATION_ROLES:
            self.has_conversation = True

    @property
    def ids_unique(self) -> bool:
        """No id repeats among the entries (a sound file's case): an id then names one entry wherever it is met."""
        return len(self.by_id) == len(self.entries)

    @property
    def children(self) -> dict[str | None, list[Entry]]:
        """Each parent id's entries in file order (None: the roots)."""
        children = self._children
        if children is None:
            children = {}
            for entry in self.entries:
                siblings = children.get(entry.parent_id)
                if siblings is None:
                    children[entry.parent_id] = [entry]
                else:
                    siblings.append(entry)
            self._children = children
        return children

    def add_parsed(self, items: list[Entry | bytes]) -> None:
        """Add the entries of parsed lines in file order (unparsed lines and entries without an id are not in the tree).

        The same as ``add`` for each, in one loop: a large file has hundreds of thousands of them.
        """
        before = len(self.entries)
        last = self._index.add_parsed(
            items,
            Entry,
            self.entries,
            self.by_id,
            self._orphans,
            _NOTED_LATER if self.has_conversation else _NOTED,
            _NOTED_LATER,
            self._note_told,
        )
        if self._children is not None:
            children = self._children
            for entry in self.entries[before:]:
                children.setdefault(entry.parent_id, []).append(entry)
        if last is not None:
            self.leaf_id = last.id

    def _note_told(self, entry: Entry) -> bool:
        """``_note``, and whether a conversation has been met (from then on messages need no note)."""
        self._note(entry)
        return self.has_conversation

    def remove_last(self, count: int, previous_leaf: str | None, previous_state: TreeState) -> None:
        """Undo the last ``count`` adds after a failed write."""
        for _ in range(count):
            entry = self.entries.pop()
            assert entry.id is not None
            if self.by_id.get(entry.id) is entry:
                del self.by_id[entry.id]
            if self._orphans and self._orphans[-1] is entry:
                self._orphans.pop()
            siblings = self._children.get(entry.parent_id, []) if self._children is not None else None
            if siblings and siblings[-1] is entry:
                siblings.pop()
        self._index.truncate(len(self.entries))
        self.leaf_id = previous_leaf
        self.labels = previous_state.labels
        self.name = previous_state.name
        self.has_conversation = previous_state.has_conversation

    def snapshot(self) -> TreeState:
        return TreeState(dict(self.labels), self.name, self.has_conversation)

    def path(self, leaf_id: str | None) -> list[Entry]:
        """Entries from the root to ``leaf_id``; a parent cycle in a damaged file stops the walk."""
        if leaf_id is not None:
            walked = self._index.path(leaf_id, self.entries, self.by_id)
            if walked is not None:
                return walked
        get = self.by_id.get
        current = get(leaf_id) if leaf_id is not None else None
        entries = self.entries
        if current is not None and entries[-1] is current and self.ids_unique:
            walked = self._path_by_index()
            if walked is not None:
                return walked
        path: list[Entry] = []
        append = path.append
        # A walk of more steps than there are entries went round a cycle: only then is it walked again
        # remembering each entry (a path of 400,000 entries walks in half the time without).
        for _ in range(len(self.by_id) + 1):
            if current is None:
                break
            append(current)
            parent = current.parent_id
            current = get(parent) if parent else None
        else:
            return self._path_through_cycle(leaf_id)
        path.reverse()
        return path

    def _path_by_index(self) -> list[Entry] | None:
        """``path`` from the last entry, in a tree where no id repeats (so an entry whose id is the
        parent's is the parent): most entries follow their parent in the file, and the walk steps to
        the entry before without a lookup in ``by_id`` (half the time on a path of 400,000 entries).
        None when a parent comes later in the file than its child (a damaged file): ``path`` walks it."""
        entries, get = self.entries, self.by_id.get
        index = len(entries) - 1
        current = entries[index]
        path: list[Entry] = []
        append = path.append
        while True:
            append(current)
            parent = current.parent_id
            if not parent:
                break
            if index and (before := entries[index - 1]).id == parent:
                current = before
                index -= 1
                continue
            found = get(parent)
            if found is None:
                break
            current = found
            index = _index_before(entries, current, index)
            if index < 0:
                return None  # not before its child: with only steps back, the walk cannot go round a cycle
        path.reverse()
        return path

    def _path_through_cycle(self, leaf_id: str | None) -> list[Entry]:
        path: list[Entry] = []
        seen: set[str] = set()
        current = self.by_id.get(leaf_id) if leaf_id is not None else None
        while current is not None and current.id not in seen:
            seen.add(current.id)  # type: ignore[arg-type]  # an entry of a session has its id (Entry.id is typed str | None)
            path.append(current)
            current = self.by_id.get(current.parent_id) if current.parent_id else None
        path.reverse()
        return path

    def dangling(self) -> list[str]:
        """Ids of entries whose parentId names no entry here: the path to each stops at it.

        Such a file was written by a fork that dropped label entries without
        re-chaining (pi 0.73.1, sidecar before issue 23) or edited by hand.
        """
        by_id = self.by_id
        return [
            e.id  # type: ignore[misc]  # an entry of a session has its id (Entry.id is typed str | None)
            for e in self._orphans
            if e.parent_id not in by_id and by_id.get(e.id) is e  # type: ignore[arg-type]  # an entry of a session has its id (Entry.id is typed str | None)
        ]

    def effective_parents(self) -> list[tuple[Entry, str | None]]:
        """Each entry (the later line where an id repeats) with its parent for display.

        The parent is None for a root, for an orphan whose parent is missing
        (as pi shows them) and for the entry where a parent cycle (only in a
        damaged file) is cut, so every entry hangs below exactly one root.
        """
        latest = [e for e in self.entries if self.by_id.get(e.id) is e]  # type: ignore[arg-type]  # an entry of a session has its id (Entry.id is typed str | None)
        parent_of: dict[str, str | None] = {}
        for entry in latest:
            parent = entry.parent_id
            parent_of[entry.id] = parent if parent in self.by_id and parent != entry.id else None  # type: ignore[index]  # an entry of a session has its id (Entry.id is typed str | None)
        state: dict[str, int] = {}  # 1: on the current walk, 2: known to reach a root
        for entry in latest:
            walk: list[str] = []
            current: str | None = entry.id
            while current is not None and state.get(current) is None:
                state[current] = 1
                walk.append(current)
                current = parent_of[current]
            if current is not None and state.get(current) == 1:
                parent_of[current] = None  # cut the cycle where the walk met itself
            for visited in walk:
                state[visited] = 2
        return [(e, parent_of[e.id]) for e in latest]  # type: ignore[index]  # an entry of a session has its id (Entry.id is typed str | None)


def _index_before(entries: list[Entry], entry: Entry, stop: int) -> int:
    """Where ``entry`` is in ``entries[:stop]`` (-1: not there), looked for first just before ``stop``
    (a parent most often is; ``index`` compares by identity, as an Entry's equality is).

    The windows grow eightfold, so finding an entry ``d`` places back costs about ``8 * d`` steps;
    a path's steps back add up to at most the tree's size: a walk costs at most a few passes over it.
    """
    span = 8
    while True:
        start = max(stop - span, 0)
        try:
            return entries.index(entry, start, stop)
        except ValueError:
            if not start:
                return -1
            span *= 8


# The entry types ``_note`` looks at (a message only until the first of the conversation is seen).
_NOTED = frozenset(("label", "session_info", "message"))
_NOTED_LATER = frozenset(("label", "session_info"))


@dataclass(slots=True)
class TreeState:
    labels: dict[str, str]
    name: str | None
    has_conversation: bool
