"""Where a compaction's kept entries start: looked for from the compaction back when no id repeats on
the path, from the root otherwise; both give the first entry before the compaction with that id."""

from __future__ import annotations

import random

import pytest
from session_builders import assistant, entry, header, line, message, user

from sidecar.context import omp
from sidecar.context.build import build_context, kept_from
from sidecar.format.jsonl import parse_file
from sidecar.store.tree import SessionTree


def _tree(rng: random.Random, repeat_ids: bool) -> SessionTree:
    rows = [line(header()).encode()]
    ids: list[str] = []
    for n in range(200):
        own = rng.choice(ids) if repeat_ids and ids and rng.random() < 0.1 else f"e{n}"
        parent = ids[-1] if ids else None
        if ids and rng.random() < 0.05:
            kept = rng.choice(ids + ["not-there", own])
            rows.append(
                line(
                    entry("compaction", own, parent, n, summary=f"s{n}", firstKeptEntryId=kept, tokensBefore=n)
                ).encode()
            )
        else:
            body = user(f"u{n}") if n % 2 else assistant(f"a{n}")
            rows.append(line(message(own, parent, body, n)).encode())
        ids.append(own)
    tree = SessionTree()
    tree.add_parsed(parse_file(b"\n".join(rows) + b"\n").items)
    return tree


@pytest.mark.parametrize("seed", range(20))
def test_from_the_compaction_back_when_ids_do_not_repeat(seed):
    rng = random.Random(seed)
    tree = _tree(rng, repeat_ids=False)
    assert tree.ids_unique
    path = tree.path(tree.leaf_id)
    for index in [i for i, e in enumerate(path) if e.type == "compaction"]:
        for wanted in [path[index].obj()["firstKeptEntryId"], path[0].id, "nowhere", 7, None]:
            assert kept_from(path, wanted, index, True) == kept_from(path, wanted, index, False)
    assert build_context(path, True) == build_context(path, False)
    assert omp.build_context(path, True) == omp.build_context(path, False)


def test_a_repeated_id_takes_its_first_place_from_the_root():
    tree = _tree(random.Random(3), repeat_ids=True)
    assert not tree.ids_unique
    rows = [line(header()).encode()] + [
        line(obj).encode()
        for obj in (
            message("a", None, user("first a")),
            message("b", "a", assistant("b")),
            message("a", "b", user("second a")),
            entry("compaction", "c", "a", 4, summary="s", firstKeptEntryId="a", tokensBefore=1),
        )
    ]
    path = [e for e in parse_file(b"\n".join(rows) + b"\n").items]
    assert kept_from(path, "a", 3, False) == 0
    assert kept_from(path, "a", 3, True) == 2  # what the shortcut would find: why it is only taken on unique ids
