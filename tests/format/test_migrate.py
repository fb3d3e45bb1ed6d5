"""Migrations v1 -> v2 -> v3 with pi's semantics, on parsed files."""

from __future__ import annotations

import json
import re

from session_builders import assistant, header, line, user

from sidecar.format.jsonl import Entry, parse_file, serialize
from sidecar.format.migrate import migrate


def parse(*objs: dict | str) -> bytes:
    return ("\n".join(o if isinstance(o, str) else line(o) for o in objs) + "\n").encode()


def v1_message(body: dict, second: int) -> dict:
    return {"type": "message", "timestamp": f"2025-01-01T00:00:{second:02d}.000Z", "message": body}


def entries_of(parsed) -> list[dict]:
    return [item.obj() for item in parsed.items if isinstance(item, Entry)]


def test_v1_entries_get_short_ids_chained_in_file_order():
    data = parse(
        header(version=None),
        v1_message(user("one"), 1),
        v1_message(assistant("two"), 2),
        {"type": "thinking_level_change", "timestamp": "2025-01-01T00:00:03.000Z", "thinkingLevel": "high"},
        v1_message(user("three"), 4),
    )
    parsed = parse_file(data)
    assert migrate(parsed) == 1
    objs = entries_of(parsed)
    ids = [o["id"] for o in objs]
    assert all(re.fullmatch(r"[0-9a-f]{8}", i) for i in ids)
    assert len(set(ids)) == len(ids)
    assert [o["parentId"] for o in objs] == [None] + ids[:-1]
    assert parsed.header.obj()["version"] == 3
    # Like pi: the new fields go after the existing ones; nothing else changes.
    first = objs[0]
    assert list(first) == ["type", "timestamp", "message", "id", "parentId"]
    assert first["message"] == user("one")


def test_v1_header_keeps_its_fields_and_gains_the_version_last():
    parsed = parse_file(parse(header(version=None, provider="anthropic", modelId="m"), v1_message(user(), 1)))
    migrate(parsed)
    assert list(parsed.header.obj()) == ["type", "id", "timestamp", "cwd", "provider", "modelId", "version"]


def test_first_kept_entry_index_counts_the_header_line_and_skips_damaged_lines():
    data = parse(
        header(version=None),
        v1_message(user("dropped"), 1),  # index 1
        "{damaged line, not counted",
        v1_message(assistant("kept"), 2),  # index 2
        v1_message(user("also kept"), 3),  # index 3
        {
            "type": "compaction",
            "timestamp": "2025-01-01T00:00:04.000Z",
            "summary": "S",
            "firstKeptEntryIndex": 2,
            "tokensBefore": 100,
        },
    )
    parsed = parse_file(data)
    migrate(parsed)
    objs = entries_of(parsed)
    kept = next(
        o for o in objs if o["type"] == "message" and o["message"].get("content") == [{"type": "text", "text": "kept"}]
    )
    compaction = objs[-1]
    assert compaction["firstKeptEntryId"] == kept["id"]
    assert "firstKeptEntryIndex" not in compaction
    # The damaged line stays where it was.
    assert b"{damaged line, not counted" in serialize(parsed.header, parsed.items)


def test_first_kept_entry_index_pointing_at_the_header_sets_no_id():
    parsed = parse_file(
        parse(
            header(version=None),
            v1_message(user(), 1),
            {"type": "compaction", "timestamp": "t", "summary": "S", "firstKeptEntryIndex": 0, "tokensBefore": 1},
        )
    )
    migrate(parsed)
    compaction = entries_of(parsed)[-1]
    assert "firstKeptEntryId" not in compaction and "firstKeptEntryIndex" not in compaction


def test_a_first_kept_entry_index_that_is_not_a_number_is_left_alone():
    # pi converts (and removes) only a numeric index; anything else stays as data.
    parsed = parse_file(
        parse(
            header(version=None),
            v1_message(user(), 1),
            {"type": "compaction", "timestamp": "t", "summary": "S", "firstKeptEntryIndex": "1", "tokensBefore": 1},
        )
    )
    migrate(parsed)
    compaction = entries_of(parsed)[-1]
    assert compaction["firstKeptEntryIndex"] == "1"
    assert "firstKeptEntryId" not in compaction


def test_v1_migration_carries_unknown_types_and_damaged_lines_byte_for_byte():
    unknown = '{"type":"from_the_future","timestamp":"t","x":[1.50,{"y":null}]}'
    data = parse(header(version=None), v1_message(user(), 1), unknown, "{torn", v1_message(assistant(), 2))
    parsed = parse_file(data)
    migrate(parsed)
    out = serialize(parsed.header, parsed.items).decode().splitlines()
    assert out[2] == unknown and out[3] == "{torn"
    objs = entries_of(parsed)
    known = [o for o in objs if o["type"] == "message"]
    assert known[1]["parentId"] == known[0]["id"]


def test_v2_to_v3_renames_hook_message_and_leaves_other_lines_untouched():
    other = line({"type": "message", "id": "a", "parentId": None, "timestamp": "t", "message": user("hookMessage?")})
    hook = line(
        {
            "type": "message",
            "id": "b",
            "parentId": "a",
            "timestamp": "t",
            "message": {"role": "hookMessage", "customType": "x", "content": "c", "display": True, "timestamp": 5},
        }
    )
    parsed = parse_file(parse(header(version=2), other, hook))
    assert migrate(parsed) == 2
    out = serialize(parsed.header, parsed.items).decode().splitlines()
    assert out[1] == other
    assert json.loads(out[2])["message"] == {
        "role": "custom",
        "customType": "x",
        "content": "c",
        "display": True,
        "timestamp": 5,
    }
    assert json.loads(out[2])["id"] == "b"
    assert json.loads(out[0])["version"] == 3


def test_current_files_are_not_migrated_and_migration_is_idempotent():
    data = parse(header(version=None), v1_message(user(), 1), v1_message(assistant(), 2))
    parsed = parse_file(data)
    migrate(parsed)
    once = serialize(parsed.header, parsed.items)
    again = parse_file(once)
    assert migrate(again) is None
    assert serialize(again.header, again.items) == once
