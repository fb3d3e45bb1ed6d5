"""The parse's fast path (one strict envelope decode per line) reads every file as the general path does.

The general path is the per-line reading every line took before (``parse_line``
and the checks around it); the tests turn the fast path off to get it, and
compare both on files with branches, labels, names, custom entries,
compactions, odd heads and timestamps, damaged, blank and torn lines, held in
memory and mapped: the same items, the same tree, the same context.
"""

from __future__ import annotations

import random

import msgspec
import pytest
from session_builders import assistant, entry, header, line, message, tool_call_assistant, tool_result, user

from sidecar.context.build import build_context
from sidecar.format import jsonl
from sidecar.format.jsonl import Entry, parse_file, parse_path, serialize
from sidecar.store.tree import SessionTree


class _Refuses:
    """A decoder that takes nothing: every line goes the general way."""

    def decode(self, raw: object) -> object:
        raise msgspec.DecodeError("fast path off")


def _lines(rng: random.Random) -> list[bytes]:
    rows = [line(header()).encode()]
    ids: list[str] = []

    def add(obj: dict) -> None:
        rows.append(line(obj).encode())
        ids.append(obj["id"])

    parent = None
    for n in range(300):
        entry_id = f"e{n}"
        if ids and rng.random() < 0.1:
            parent = rng.choice(ids)  # a branch
        pick = rng.randrange(16)
        if pick == 0:
            add(entry("label", entry_id, parent, n, targetId=rng.choice(ids) if ids else entry_id, label=f"l{n}"))
        elif pick == 1:
            add(entry("session_info", entry_id, parent, n, name=f"  name {n} "))
        elif pick == 2:
            add(entry("custom", entry_id, parent, n, customType="ext", data={"n": n}))
        elif pick == 3 and ids:
            add(
                entry(
                    "compaction",
                    entry_id,
                    parent,
                    n,
                    summary=f"sum {n}",
                    firstKeptEntryId=rng.choice(ids),
                    tokensBefore=1000,
                )
            )
        elif pick == 4:
            add(entry("model_change", entry_id, parent, n, provider="openai", modelId=f"m{n}"))
        elif pick == 5:
            add(entry("thinking_level_change", entry_id, parent, n, thinkingLevel="high"))
        elif pick == 6:  # heads the fast path refuses: a number, true, a list, a null provider
            role = rng.choice(["1", "true", '["user"]', '"assistant"'])
            rows.append(
                (
                    '{"type":"message","id":"%s","parentId":%s,"timestamp":"t","message":{"role":%s,'
                    '"provider":null,"model":"x"}}' % (entry_id, "null" if parent is None else f'"{parent}"', role)
                ).encode()
            )
            ids.append(entry_id)
        elif pick == 7:  # a numeric timestamp (a newer agent's): kept as an entry without one
            rows.append(
                (
                    '{"type":"future","id":"%s","parentId":%s,"timestamp":17356896}'
                    % (entry_id, "null" if parent is None else f'"{parent}"')
                ).encode()
            )
            ids.append(entry_id)
        elif pick == 8:
            rows.append(
                rng.choice(
                    [
                        b"",
                        b"   ",
                        b"{not json",
                        b"[1, 2]",
                        b'"text"',
                        b'{"type":"message","id":',
                        # two objects on a line, which JSON.parse refuses (a whole stretch decodes them)
                        b'{"type":"custom","id":"two"}{"type":"custom","id":"objects"}',
                        b'{"type":"custom","id":"spaced"} {}',
                        b'{"type":"custom","id":"open",',
                        b'"x":{}}',
                        b'{"type":"custom","id":"trailing"} ',
                        b"{}",
                    ]
                )
            )
            continue
        elif pick == 9:  # a lone surrogate escape, which msgspec refuses and JSON.parse keeps
            add(message(entry_id, parent, user("cut \ud83d here"), n))
        elif pick == 10:
            add(message(entry_id, parent, tool_call_assistant(f"c{n}"), n))
        elif pick == 11:
            add(message(entry_id, parent, tool_result(f"c{n}", "out " * rng.randrange(50)), n))
        elif pick == 12:  # an id used twice: the later line wins
            if ids:
                add(message(rng.choice(ids), parent, user(f"again {n}"), n))
                continue
            add(message(entry_id, parent, user(f"u{n}"), n))
        elif pick == 13:
            rows.append(b"  " + line(message(entry_id, parent, user(f"indented {n}"), n)).encode())
            ids.append(entry_id)
        elif pick == 14:  # its parent is not in the file (a fork that dropped it): dangling
            add(message(entry_id, f"gone{n}", user(f"orphan {n}"), n))
        elif pick == 15 and rng.random() < 0.3:  # a blob reference
            add(message(entry_id, parent, user(jsonl.BLOB_PREFIX + "ab" * 32), n))
        else:
            add(message(entry_id, parent, rng.choice([user(f"u{n}"), assistant(f"a{n}", model=f"m{n % 3}")]), n))
        parent = ids[-1] if ids else None
    return rows


def _described(parsed: jsonl.ParsedFile) -> list:
    """A parsed file as plain values, field by field (held, mapped, tail and both cores are compared by it)."""
    items: list = []
    for item in parsed.items:
        if isinstance(item, Entry):
            head = item.head
            items.append(
                (
                    item.type,
                    item.id,
                    item.parent_id,
                    item.timestamp,
                    item.raw,
                    item.offset,
                    item.length,
                    item.has_blobs,
                    None if head is None else (type(head).__name__, head.role, head.provider, head.model),
                )
            )
        else:
            items.append(item)
    header = parsed.header
    return [
        None if header is None else header.raw,
        parsed.prefix,
        parsed.parse_errors,
        parsed.torn_tail_at,
        parsed.needs_newline,
        parsed.size,
        items,
        None if header is None else (header.type, header.id, header.offset, header.length),
        parsed.title_slot,  # a frozen dataclass: compared field by field
        parsed.title_fault,
        None if header is None else serialize(header, parsed.items, parsed.prefix),
    ]


def _answers(parsed: jsonl.ParsedFile) -> list:
    tree = SessionTree()
    tree.add_parsed(parsed.items)
    by_id = tree.by_id  # dangling entries, by their definition (the tree keeps only the candidates)
    assert tree.dangling() == [
        e.id for e in tree.entries if e.parent_id is not None and e.parent_id not in by_id and by_id.get(e.id) is e
    ]
    answers = [
        tree.leaf_id,
        tree.labels,
        tree.name,
        tree.has_conversation,
        tree.dangling(),
        [(e.id, p) for e, p in tree.effective_parents()],
        {key: [e.id for e in kids] for key, kids in tree.children.items()},
    ]
    for leaf in [tree.leaf_id, *list(tree.by_id)[::17]]:
        path = tree.path(leaf)
        ctx = build_context(path)
        answers.append(([e.id for e in path], ctx.messages, ctx.entry_ids, ctx.model, ctx.models, ctx.thinking_level))
    return answers


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("ending", ["whole", "torn", "no newline"])
@pytest.mark.parametrize("chunk", [1 << 20, 900])
def test_the_fast_path_reads_every_file_as_the_general_path_does(tmp_path, monkeypatch, seed, ending, chunk):
    """Three ways agree: stretches of lines in one decode (as many stretches as fit ``chunk`` bytes, those with
    a damaged line going line by line), every line on its own with the strict envelope, and the general path."""
    rows = _lines(random.Random(seed))
    rows.append(line(message("last", None, user("the end"))).encode())
    data = b"\n".join(rows) + b"\n"
    if ending == "torn":
        data += b'{"type":"message","id":"torn","parentId":null,"message":{"role":"us'
    elif ending == "no newline":
        data = data[:-1]
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)

    def both_ways() -> list:
        held = parse_file(data)
        with monkeypatch.context() as patched:
            patched.setattr(jsonl, "MAP_THRESHOLD", 0)
            mapped = parse_path(path)
        return [_described(held), _described(mapped), _answers(held), _answers(mapped)]

    stretches: list[bool] = []  # whether each stretch tried was read in one decode

    def counted(*args: object) -> object:
        entries = read_lines(*args)
        stretches.append(entries is not None)
        return entries

    read_lines = jsonl.read_lines
    monkeypatch.setattr(jsonl, "read_lines", counted)
    monkeypatch.setattr(jsonl, "_CHUNK", chunk)
    fast = both_ways()
    assert fast[0][2] > 0 and fast[2][4]  # damaged lines and dangling entries are among them
    assert any(e[7] for e in fast[0][6] if isinstance(e, tuple))  # and blob references
    assert False in stretches  # a stretch with damage went line by line
    if chunk < 1000:
        assert stretches.count(True) > 5  # and many undamaged ones were read in one decode
    monkeypatch.setattr(jsonl, "_CHUNK", 0)
    line_by_line = both_ways()
    assert fast == line_by_line
    monkeypatch.setattr(jsonl, "_strict_envelope_decoder", _Refuses())
    general = both_ways()
    assert fast == general
    if ending == "torn":
        assert fast[0][3] is not None
    if ending == "no newline":
        assert fast[0][4] is True


def test_a_tail_parsed_on_its_own_takes_the_fast_path_and_agrees(monkeypatch):
    rows = _lines(random.Random(9))[1:]
    data = b"\n".join(rows) + b"\n"
    fast = _described(jsonl.parse_tail(data, 1000))
    monkeypatch.setattr(jsonl, "_strict_envelope_decoder", _Refuses())
    assert fast == _described(jsonl.parse_tail(data, 1000))
    assert fast[2] > 0 and all(item[5] >= 1000 for item in fast[6] if isinstance(item, tuple))


def test_a_path_through_a_parent_cycle_stops_where_it_meets_itself():
    """The path walk counts its steps instead of remembering each entry; a cycle (a damaged file) is walked
    again the careful way and cut where it comes round, as before."""
    rows = [line(header()).encode()] + [
        line(obj).encode()
        for obj in (
            message("r", None, user("root")),
            message("x", "y", user("x")),
            message("y", "x", user("y")),
            message("z", "x", user("z")),
            message("w", "r", user("w")),
        )
    ]
    tree = SessionTree()
    tree.add_parsed(parse_file(b"\n".join(rows) + b"\n").items)
    assert [e.id for e in tree.path("z")] == ["y", "x", "z"]
    assert [e.id for e in tree.path("y")] == ["x", "y"]
    assert [e.id for e in tree.path("w")] == ["r", "w"]
    assert tree.path(None) == [] and tree.path("missing") == []
