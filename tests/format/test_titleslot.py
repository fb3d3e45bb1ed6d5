"""oh-my-pi's title slot line: read before the header, kept byte for byte, faults reported."""

from __future__ import annotations

import json

from sidecar.format.jsonl import parse_file, serialize
from sidecar.format.titleslot import SLOT_BYTES, clean_title, read_slot, slot_line

HEADER = b'{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}'
ENTRY = b'{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}'


def test_slot_line_is_fixed_width_and_reads_back():
    for title in ["", "Fix the parser", "é" * 300, "日本語のタイトル" * 20]:
        line = slot_line(title, "2026-01-01T00:00:00.000Z", "user")
        assert len(line) + 1 == SLOT_BYTES
        slot, fault = read_slot(line)
        assert fault is None and slot is not None
        assert title.startswith(slot.title) and slot.source == "user"
    assert json.loads(slot_line("x", "t", None)).get("source") is None


def test_a_file_with_a_title_slot_opens_and_serializes_unchanged():
    slot = slot_line("My title", "2026-01-01T00:00:05.000Z", "auto")
    data = slot + b"\n" + HEADER + b"\n" + ENTRY + b"\n"
    parsed = parse_file(data)
    assert parsed.header.id == "s1"
    assert parsed.title_slot is not None and parsed.title_slot.name == "My title"
    assert parsed.title_fault is None and parsed.parse_errors == 0
    assert parsed.header.offset == SLOT_BYTES
    assert [e.id for e in parsed.items] == ["a1"]
    assert serialize(parsed.header, parsed.items, parsed.prefix) == data


def test_a_damaged_title_line_is_a_fault_not_a_refusal():
    torn = slot_line("My title", "t", "user")[:100]
    data = torn + b"\n" + HEADER + b"\n" + ENTRY + b"\n"
    parsed = parse_file(data)
    assert parsed.header.id == "s1" and [e.id for e in parsed.items] == ["a1"]
    assert parsed.title_slot is None and parsed.title_fault
    assert serialize(parsed.header, parsed.items, parsed.prefix) == data  # the damaged bytes are kept


def test_a_title_line_of_the_wrong_width_or_shape_is_reported():
    short = b'{"type":"title","v":1,"title":"T","updatedAt":"t","pad":""}'
    parsed = parse_file(short + b"\n" + HEADER + b"\n")
    assert parsed.title_slot is not None and parsed.title_slot.name == "T" and "bytes" in parsed.title_fault
    wrong = b'{"type":"title","v":2,"title":"T","updatedAt":"t","pad":""}'
    parsed = parse_file(wrong + b"\n" + HEADER + b"\n")
    assert parsed.title_slot is None and parsed.title_fault


def test_clean_title_follows_oh_my_pi():
    assert clean_title("  a\tb\n\nc   d  ") == "a b c d"


def test_a_title_line_is_known_whether_its_type_is_spelled_out_or_escaped():
    from sidecar.format.titleslot import looks_like_slot

    assert looks_like_slot(slot_line("T", "t", "user"))
    assert looks_like_slot(b'{"type":"\\u0074itle","v":1,"title":"T","updatedAt":"t","pad":""}')  # (no "title" spelled)
    assert looks_like_slot(b'{"v":1,"type" : "\\u0074\\u0069tle"}')
    assert not looks_like_slot(HEADER)  # no "title" and no escape: not decoded at all
    assert not looks_like_slot(b'{"type":"session","title":"a header with a title"}')
    assert not looks_like_slot(b'{"type":"\\u0073ession"}')
