"""The JSONL codec: lenient parsing, damaged lines, torn tails, bytes kept as they were."""

from __future__ import annotations

import json

import pytest
from session_builders import header, line, message, user

from sidecar.format.jsonl import Entry, NotASession, encode, parse_file, serialize

HEAD = line(header()).encode()
FIRST = line(message("a", None, user("one"))).encode()
SECOND = line(message("b", "a", user("two"))).encode()


def lines(*parts: bytes) -> bytes:
    return b"\n".join(parts) + b"\n"


def test_clean_file_has_no_parse_errors_and_keeps_every_byte():
    data = lines(HEAD, FIRST, SECOND)
    parsed = parse_file(data)
    assert parsed.parse_errors == 0
    assert parsed.header.id == "sess-1"
    assert [e.id for e in parsed.items] == ["a", "b"]
    assert parsed.torn_tail_at is None and not parsed.needs_newline
    assert serialize(parsed.header, parsed.items) == data


def test_blank_and_unparseable_lines_are_skipped_and_counted_but_kept_in_place():
    data = lines(HEAD, b"", FIRST, b"   ", b"{not json", b"[1, 2", SECOND)
    parsed = parse_file(data)
    assert parsed.parse_errors == 4
    entries = [item for item in parsed.items if isinstance(item, Entry)]
    assert [e.id for e in entries] == ["a", "b"]
    # Damaged (non-blank) lines stay where they were, so a rewrite loses nothing.
    assert b"{not json" in serialize(parsed.header, parsed.items)
    assert b"[1, 2" in serialize(parsed.header, parsed.items)


def test_a_json_line_that_is_not_an_object_counts_as_damaged():
    parsed = parse_file(lines(HEAD, b"123", b'"text"', b"null", FIRST))
    assert parsed.parse_errors == 3
    assert [e.id for e in parsed.items if isinstance(e, Entry)] == ["a"]


def test_torn_last_line_is_reported_by_offset_and_not_parsed():
    torn = b'{"type":"message","id":"c","par'
    data = lines(HEAD, FIRST) + torn
    parsed = parse_file(data)
    assert parsed.parse_errors == 1
    assert parsed.torn_tail_at == len(data) - len(torn)
    assert all(item != torn for item in parsed.items)


def test_complete_last_line_without_newline_asks_for_a_newline_before_the_next_append():
    parsed = parse_file(lines(HEAD) + FIRST)
    assert parsed.parse_errors == 0
    assert parsed.torn_tail_at is None
    assert parsed.needs_newline
    assert [e.id for e in parsed.items] == ["a"]


def test_crlf_line_endings_parse():
    data = HEAD + b"\r\n" + FIRST + b"\r\n"
    parsed = parse_file(data)
    assert parsed.parse_errors == 0
    assert [e.id for e in parsed.items] == ["a"]


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\n\n",
        b"{broken\n",
        lines(FIRST, HEAD),  # the first parsed line is an entry
        lines(b'{"type":"session","timestamp":"x"}', FIRST),  # header without an id
        lines(b'{"type":"session","id":7,"timestamp":"x"}', FIRST),  # id not a string
    ],
    ids=["empty", "blank", "all-damaged", "entry-first", "no-id", "numeric-id"],
)
def test_a_file_without_a_valid_header_is_not_a_session(data):
    with pytest.raises(NotASession):
        parse_file(data)


def test_damaged_lines_before_the_header_do_not_hide_it():
    parsed = parse_file(lines(b"{oops", HEAD, FIRST))
    assert parsed.header.id == "sess-1"
    assert parsed.parse_errors == 1


def test_unknown_entry_types_and_unknown_fields_survive_byte_for_byte():
    odd = b'{"type":"future_thing","id":"z","parentId":"a","timestamp":"t","payload":{"k":[1,2.50,"\\u00e9"]}}'
    extra = b'{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"user","content":"x"},"newField":1.0}'
    data = lines(HEAD, FIRST, odd, extra)
    parsed = parse_file(data)
    assert [e.type for e in parsed.items] == ["message", "future_thing", "message"]
    assert serialize(parsed.header, parsed.items) == data


def test_lone_surrogate_escapes_written_by_json_stringify_parse_and_round_trip():
    # JSON.stringify("\ud83d") writes the escape; JSON.parse reads it. So must we.
    raw = (
        b'{"type":"message","id":"s","parentId":"a","timestamp":"t",'
        b'"message":{"role":"user","content":"cut \\ud83d | pair \\ud83d\\ude00 | literal \\\\ud83d"}}'
    )
    parsed = parse_file(lines(HEAD, FIRST, raw))
    assert parsed.parse_errors == 0
    surrogate_entry = parsed.items[1]
    assert surrogate_entry.id == "s" and surrogate_entry.parent_id == "a"
    assert surrogate_entry.role() == "user"
    content = surrogate_entry.obj()["message"]["content"]
    assert content == json.loads(raw)["message"]["content"]
    assert content.startswith("cut \ud83d | pair \U0001f600")
    # Re-encoding (as a migration does) writes the escape again, like JSON.stringify.
    assert json.loads(encode(surrogate_entry.obj())) == json.loads(raw)
    assert b"\\ud83d |" in encode(surrogate_entry.obj())


def test_encode_writes_compact_json_stringify_style():
    obj = {"type": "label", "id": "x", "text": 'é中😀 \u2028 \x01 "q" /', "n": [1, None, True]}
    assert encode(obj).decode("utf-8") == line(obj).replace("\\u2028", "\u2028")
    assert b" " not in encode({"a": [1, 2], "b": {"c": 3}})


def test_an_entry_with_an_unexpected_envelope_value_is_still_an_entry_of_the_tree():
    # JSON.parse keeps such a line; dropping it would orphan every entry below it.
    odd = b'{"type":"future_thing","id":"z","parentId":"a","timestamp":1735689600000}'
    child = b'{"type":"message","id":"c","parentId":"z","timestamp":"t","message":{"role":"user","content":"x"}}'
    parsed = parse_file(lines(HEAD, FIRST, odd, child))
    assert parsed.parse_errors == 0
    assert [(e.id, e.parent_id, e.timestamp) for e in parsed.items] == [
        ("a", None, "2025-01-01T00:00:00.000Z"),
        ("z", "a", None),
        ("c", "z", "t"),
    ]
    assert parsed.items[1].raw == odd


@pytest.mark.parametrize("chunk", [1 << 20, 3000])
def test_blob_references_are_found_across_the_stretches_a_file_is_scanned_in(tmp_path, monkeypatch, chunk):
    """Blob marks are looked for a stretch at a time (a page here): a line holding one is marked whether
    the mark lies across a stretch's end, in the middle, at the start or the end of a line's text, or twice
    in a row, and lines without one are not; mapped and held files agree, damaged lines among them."""
    import mmap as mmap_module
    import random

    from sidecar.format import jsonl

    monkeypatch.setattr(jsonl, "_RELEASE_EVERY", mmap_module.PAGESIZE)
    monkeypatch.setattr(jsonl, "_CHUNK", chunk)  # small: many stretches read in one decode, marks among them
    mark = jsonl.BLOB_MARK.decode()[1:]  # the text of a reference; the line's own quote opens it
    rng = random.Random(3)
    rows = [HEAD]
    for n in range(600):
        text = "x" * rng.randrange(0, 900)
        kind = rng.randrange(5)
        if kind == 0:
            rows.append(
                line(message(f"e{n}", None, user(text + "a" * 64))).encode().replace(b'"xx', b'"' + mark.encode(), 1)
            )
            continue
        if kind == 1:  # two in a row, as two content parts
            parts = [{"type": "text", "text": mark + "b" * 64}, {"type": "text", "text": mark + "c" * 64 + text}]
            rows.append(line(message(f"e{n}", None, user(parts))).encode())
            continue
        if kind == 2:
            rows.append(b'{"damaged": "' + mark.encode() + b"d" * rng.randrange(900))
        rows.append(line(message(f"e{n}", None, user(text))).encode())
    data = lines(*rows)
    path = tmp_path / "marks.jsonl"
    path.write_bytes(data)
    held = parse_file(data)
    monkeypatch.setattr(jsonl, "MAP_THRESHOLD", 0)
    mapped = jsonl.parse_path(path)
    found = []
    for parsed in (held, mapped):
        entries = [item for item in parsed.items if isinstance(item, Entry)]
        assert len(entries) == 600 and parsed.parse_errors == sum(1 for row in rows if row.startswith(b'{"damaged'))
        if parsed is mapped:  # a mapped file's lines are not searched: each is looked at when it is read
            assert {e.has_blobs for e in entries} == {None}
            half = len(entries) // 2
            [e.obj() for e in entries[:half]]  # reading the content settles it, as holds_blobs does
            assert [e.holds_blobs() for e in entries[half:]] and None not in [e.has_blobs for e in entries]
        assert [e.has_blobs for e in entries] == [jsonl.BLOB_MARK in e.raw for e in entries]
        found.append([e.has_blobs for e in entries])
    assert found[0] == found[1] and 150 < sum(found[0]) < 450


def test_message_heads_are_shared_only_where_sharing_cannot_change_them():
    """Repeated string heads are one object (memory of a 400,000-entry session); a role of 1 and one of
    true (equal as keys) and a list role stay as each line wrote them."""
    from sidecar.format.jsonl import parse_line

    def head(role_json: str, entry_id: str):
        return parse_line(
            (
                '{"type":"message","id":"%s","parentId":null,"timestamp":"t",'
                '"message":{"role":%s,"provider":"p"}}' % (entry_id, role_json)
            ).encode()
        ).head

    assert head('"user"', "a") is head('"user"', "b")
    assert head('"user"', "c") is not head('"assistant"', "d")
    one, true = head("1", "e"), head("true", "f")
    assert one.role == 1 and type(one.role) is int and true.role is True
    assert head("[1]", "g").role == [1]
