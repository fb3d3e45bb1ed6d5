"""The compiled tree index (core/src/tree.rs) builds and walks every tree exactly as the Python one does (issue 42).

Each file is parsed twice and handed to a tree on each core (``corepath.choose``
before the tree is made: a tree keeps the index it was made with); the trees
must hold the same entries in the same order, the same dict, parent strings
shared the same way, the same orphans, notes, children and effective parents,
and walk the same path to every leaf: on the pi fixtures, on damaged files
(orphans, parents later in the file, own parents, empty parents, repeated ids),
on trees hypothesis makes, and while entries are added one by one and taken
off again after a failed write. On a sound file the compiled index must walk
the path itself (else the compiled walk would be compiled in name only).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from both_cores import needs_compiled_core
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from session_builders import assistant, entry, header, line, message, user
from test_tree_walks import _file, _plain_path

from sidecar import corepath
from sidecar.format.jsonl import Entry, parse_file, parse_path
from sidecar.store.tree import SessionTree

pytestmark = [needs_compiled_core, pytest.mark.usefixtures("core_restored")]

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "pi"


def _tree(core: str, items: list[Any]) -> SessionTree:
    corepath.choose(core)
    tree = SessionTree()
    tree.add_parsed(items)
    return tree


def _shape(tree: SessionTree, leaves: list[str | None]) -> dict[str, Any]:
    """Everything a caller can read of a tree, by ids and positions (the two trees hold different Entry objects)."""
    position = {id(e): n for n, e in enumerate(tree.entries)}
    return {
        "entries": [(e.type, e.id, e.parent_id) for e in tree.entries],
        "by_id": {key: position[id(e)] for key, e in tree.by_id.items()},
        # Whether each parent id is the very string of the entry the dict holds under it (see add); an orphan's
        # is left as parsed (its parent, if it comes, comes later), and the cores' scans make strings differently.
        "shared": [
            e.parent_id is tree.by_id[e.parent_id].id
            for e in tree.entries
            if e.parent_id in tree.by_id and not any(e is orphan for orphan in tree._orphans)
        ],
        "orphans": [position[id(e)] for e in tree._orphans],
        "dangling": tree.dangling(),
        "leaf": tree.leaf_id,
        "labels": tree.labels,
        "name": tree.name,
        "conversation": tree.has_conversation,
        "unique": tree.ids_unique,
        "children": {key: [position[id(e)] for e in kids] for key, kids in tree.children.items()},
        "effective": [(position[id(e)], parent) for e, parent in tree.effective_parents()],
        "paths": {leaf: [position[id(e)] for e in tree.path(leaf)] for leaf in leaves},
    }


def _leaves(tree: SessionTree) -> list[str | None]:
    return [tree.leaf_id, None, "missing", "", *tree.by_id]


def _same_on_both(data: bytes) -> tuple[SessionTree, SessionTree]:
    python, compiled = _tree("python", parse_file(data).items), _tree("compiled", parse_file(data).items)
    leaves = _leaves(python)
    assert _shape(compiled, leaves) == _shape(python, leaves)
    for leaf in leaves:
        assert [e.id for e in compiled.path(leaf)] == _plain_path(python, leaf)
    return python, compiled


def _walked_by_the_index(tree: SessionTree, leaf: str) -> bool:
    return tree._index.path(leaf, tree.entries, tree.by_id) is not None


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.jsonl")))
def test_pi_fixtures_make_the_same_tree(name):
    python = _tree("python", parse_path(FIXTURES / name).items)
    compiled = _tree("compiled", parse_path(FIXTURES / name).items)
    leaves = _leaves(python)
    assert _shape(compiled, leaves) == _shape(python, leaves)
    if compiled.ids_unique:
        # A sound file: every path is walked down the index's column, none handed back to Python.
        assert all(_walked_by_the_index(compiled, leaf) for leaf in compiled.by_id)


@pytest.mark.parametrize("repeats", [False, True])
@pytest.mark.parametrize("seed", range(16))
def test_damaged_files_make_the_same_tree(seed, repeats):
    rng = random.Random(seed)
    _same_on_both(_file(rng, rng.choice((5, 40, 400)), repeats))


def test_cycles_own_parents_and_late_parents_walk_as_python_does():
    rows = [
        message("a", "c", user("a")),  # its parent comes later: a cycle a -> c -> b -> a
        message("b", "a", user("b")),
        message("c", "b", user("c")),
        message("self", "self", user("own parent")),
        message("late", "later", user("parent after")),
        message("later", None, user("root")),
        message("empty", "", user("empty parent")),
        message("tip", "late", assistant("tip")),
    ]
    python, compiled = _same_on_both(_bytes(rows))
    assert [e.id for e in compiled.path("tip")] == ["later", "late", "tip"]
    assert [e.id for e in compiled.path("a")] == ["b", "c", "a"]
    assert [e.id for e in compiled.path("self")] == ["self"]


def _bytes(rows: list[dict[str, Any]]) -> bytes:
    return b"\n".join([line(header()).encode(), *(line(row).encode() for row in rows)]) + b"\n"


def test_labels_names_and_the_first_conversation_are_noted_alike():
    rows = [
        entry("session_info", "i1", None, name="  first  "),
        message("r", "i1", {"role": "custom", "content": "not a conversation"}),
        entry("label", "l1", "r", targetId="r", label="start"),
        message("u", "l1", user("hello")),
        entry("label", "l2", "u", targetId="r", label=""),
        entry("label", "l3", "l2", targetId="u", label="kept"),
        entry("session_info", "i2", "l3", name="second"),
    ]
    python, compiled = _same_on_both(_bytes(rows))
    assert compiled.labels == {"u": "kept"} and compiled.name == "second" and compiled.has_conversation


def test_entries_added_one_by_one_and_taken_off_walk_alike():
    """``add`` between parses (appends), ``remove_last`` after a failed write: the index follows the lists."""
    base = _bytes([message(f"e{n}", f"e{n - 1}" if n else None, user(f"m{n}")) for n in range(50)])
    trees = {core: _tree(core, parse_file(base).items) for core in ("python", "compiled")}
    for tree in trees.values():
        extra = parse_file(_bytes([message("x1", "e49", user("x")), message("x2", "e10", user("y"))])).items
        for item in extra:
            assert isinstance(item, Entry)
            tree.add(item)
        assert [e.id for e in tree.path("x2")] == [f"e{n}" for n in range(11)] + ["x2"]
        previous, state = tree.leaf_id, tree.snapshot()
        tree.add_parsed(parse_file(_bytes([message("y1", "x2", user("z")), message("e5", "y1", user("again"))])).items)
        assert not tree.ids_unique  # e5 repeats: the walks are Python's, by the latest e5
        tree.remove_last(2, previous, state)
    leaves = _leaves(trees["python"])
    assert _shape(trees["compiled"], leaves) == _shape(trees["python"], leaves)


def test_a_repeat_taken_off_leaves_the_index_to_python():
    """A repeated id added and taken off by ``remove_last``: the index stops vouching for good, and the tree
    walks as the Python one does (which lost the first entry of that id from ``by_id`` with the second)."""
    trees = {}
    for core in ("python", "compiled"):
        tree = trees[core] = _tree(
            core, parse_file(_bytes([message("a", None, user("a")), message("b", "a", user("b"))])).items
        )
        previous, state = tree.leaf_id, tree.snapshot()
        tree.add_parsed(parse_file(_bytes([message("a", "b", user("again"))])).items)
        tree.remove_last(1, previous, state)
    compiled = trees["compiled"]
    assert not _walked_by_the_index(compiled, "b")
    leaves = _leaves(trees["python"])
    assert _shape(compiled, leaves) == _shape(trees["python"], leaves)
    assert [e.id for e in compiled.path("b")] == _plain_path(trees["python"], "b")


@st.composite
def _trees(draw: st.DrawFn) -> bytes:
    """Entries whose parent is the one before, one further back, a later one, a missing one, itself, or none;
    some ids repeated; labels and names between them."""
    count = draw(st.integers(1, 60))
    ids: list[str] = []
    rows: list[dict[str, Any]] = []
    for n in range(count):
        own = draw(st.sampled_from(ids)) if ids and draw(st.integers(0, 19)) == 0 else f"e{n}"
        pick = draw(st.integers(0, 9))
        if pick < 5 and ids:
            parent: str | None = ids[-1]
        elif pick < 7 and ids:
            parent = draw(st.sampled_from(ids))
        elif pick == 7:
            parent = f"e{n + draw(st.integers(0, 5))}"
        elif pick == 8:
            parent = draw(st.sampled_from(["", "nowhere"]))
        else:
            parent = None
        kind = draw(st.sampled_from(["message", "message", "message", "label", "session_info"]))
        if kind == "message":
            rows.append(message(own, parent, user(f"m{n}") if n % 2 else assistant(f"a{n}")))
        elif kind == "label":
            rows.append(entry("label", own, parent, targetId=draw(st.sampled_from([*ids, "x"])), label=f"l{n}"))
        else:
            rows.append(entry("session_info", own, parent, name=f" n{n} "))
        ids.append(own)
    return _bytes(rows)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_trees())
def test_hypothesis_trees_are_the_same_on_both_cores(data):
    _same_on_both(data)


def test_a_sound_branched_tree_is_walked_down_the_column():
    """Branches whose parents lie far back (resolved when a walk first needs them): every leaf's path is the
    index's own, and the plain walk's."""
    rows = [message("r", None, user("root"))]
    parent = "r"
    for n in range(300):
        rows.append(message(f"a{n}", parent, user("kept")))
        if n % 30 == 0:
            rows.append(message(f"b{n}", "r" if n % 60 else f"a{n}", user("branch")))
            rows.append(message(f"c{n}", f"b{n}", user("branch")))
        parent = f"a{n}"
    python, compiled = _same_on_both(_bytes(rows))
    assert compiled._index.state()[1] == 0  # the walks above resolved every parent further back
    for leaf in ("a299", "c0", "c30", "b270", "r"):
        walked = compiled._index.path(leaf, compiled.entries, compiled.by_id)
        assert walked is not None and [e.id for e in walked] == _plain_path(python, leaf)
