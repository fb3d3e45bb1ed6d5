"""The tree's walks take shortcuts on large files (a parent is most often the entry just before its
child); on any file, however its parents point, they answer as the plain walk through ``by_id`` does."""

from __future__ import annotations

import random

import pytest
from session_builders import header, line, message, user

from sidecar.format.jsonl import parse_file
from sidecar.store.tree import SessionTree


def _plain_path(tree: SessionTree, leaf_id: str | None) -> list[str]:
    """The path as its definition says: parent after parent through ``by_id``, cut where it comes round."""
    ids: list[str] = []
    seen: set[str] = set()
    current = tree.by_id.get(leaf_id) if leaf_id is not None else None
    while current is not None and current.id not in seen:
        seen.add(current.id)
        ids.append(current.id)
        current = tree.by_id.get(current.parent_id) if current.parent_id else None
    return ids[::-1]


def _file(rng: random.Random, count: int, repeats: bool) -> bytes:
    """Entries whose parents are mostly the entry before, else one far back, later, missing, themselves
    or empty; ``repeats``: some ids used twice."""
    ids: list[str] = []
    rows = [line(header()).encode()]
    for n in range(count):
        own = f"e{n}" if not (repeats and ids and rng.random() < 0.05) else rng.choice(ids)
        pick = rng.random()
        if pick < 0.6 and ids:
            parent = ids[-1]
        elif pick < 0.75 and ids:
            parent = rng.choice(ids)
        elif pick < 0.8:
            parent = f"e{n + rng.randint(1, 20)}"  # later in the file, or never there
        elif pick < 0.85:
            parent = own
        elif pick < 0.9:
            parent = ""
        else:
            parent = None
        ids.append(own)
        rows.append(line(message(own, parent, user(f"m{n}"))).encode())
    return b"\n".join(rows) + b"\n"


@pytest.mark.parametrize("repeats", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_paths_and_orphans_are_the_plain_walks(seed, repeats):
    rng = random.Random(seed)
    tree = SessionTree()
    tree.add_parsed(parse_file(_file(rng, rng.choice((5, 40, 400)), repeats)).items)
    leaves = [tree.leaf_id, None, "missing"] + [e.id for e in rng.sample(tree.entries, min(10, len(tree.entries)))]
    for leaf in leaves:
        assert [e.id for e in tree.path(leaf)] == _plain_path(tree, leaf)
    by_id = tree.by_id
    assert tree.dangling() == [
        e.id for e in tree.entries if e.parent_id is not None and e.parent_id not in by_id and by_id.get(e.id) is e
    ]


def test_a_chain_of_400_entries_walks_back_through_its_branches():
    """A long path with branches: steps to the entry before and jumps back over the other branches."""
    rows = [line(header()).encode(), line(message("r", None, user("root"))).encode()]
    parent = "r"
    for n in range(400):
        rows.append(line(message(f"a{n}", parent, user("kept"))).encode())
        if n % 50 == 0:  # a branch off the path, two entries long, that the path jumps over
            rows.append(line(message(f"b{n}", f"a{n}", user("left"))).encode())
            rows.append(line(message(f"c{n}", f"b{n}", user("left"))).encode())
        parent = f"a{n}"
    rows.append(line(message("leaf", parent, user("last"))).encode())
    tree = SessionTree()
    tree.add_parsed(parse_file(b"\n".join(rows) + b"\n").items)
    assert [e.id for e in tree.path("leaf")] == ["r"] + [f"a{n}" for n in range(400)] + ["leaf"]
    assert [e.id for e in tree.path("c50")] == ["r"] + [f"a{n}" for n in range(51)] + ["b50", "c50"]


def test_a_parent_id_is_the_parents_own_string():
    """The tree keeps one string per id: a child's parent_id is its parent's id object (memory at 400,000 entries)."""
    rows = [line(header()).encode()] + [
        line(obj).encode()
        for obj in (
            message("r", None, user("root")),
            message("a", "r", user("a")),
            message("b", "r", user("b")),
            message("c", "a", user("c")),
        )
    ]
    tree = SessionTree()
    tree.add_parsed(parse_file(b"\n".join(rows) + b"\n").items)
    for entry in tree.entries[1:]:
        assert entry.parent_id is tree.by_id[entry.parent_id].id
