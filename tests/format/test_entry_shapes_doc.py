"""PROTOCOL.md's "Entry shapes" tables and protocol/schema.json's entry types say the same: every
shape the section shows is a type of the schema, and every type the schema's entry shapes reach
is in the section, as ``python -m sidecar.schema`` writes it from sidecar/wire/entries.py."""

from __future__ import annotations

import json
import re

from sidecar import schema


def _section() -> str:
    text = schema.PROTOCOL_PATH.read_text(encoding="utf-8")
    return text[text.index(schema.SHAPES_START) : text.index(schema.SHAPES_END)]


def _reachable_types(document: dict) -> set[str]:
    """The object types (not the unions) the schema's entryShapes lead to."""
    defs, seen, todo = document["$defs"], set(), [ref["$ref"] for ref in document["entryShapes"].values()]
    while todo:
        name = todo.pop().rsplit("/", 1)[1]
        if name in seen:
            continue
        seen.add(name)
        todo += re.findall(r'"\$ref": "(#/\$defs/[^"]+)"', json.dumps(defs[name]))
    return {name for name in seen if "anyOf" not in defs[name]}


def test_the_section_shows_exactly_the_schemas_entry_types():
    document = json.loads(schema.SCHEMA_PATH.read_text(encoding="utf-8"))
    shown = set(re.findall(r"^\| [^|]* \| `(\w+)` \|", _section(), re.M))
    assert shown, "no shape rows in PROTOCOL.md's Entry shapes section"
    assert shown - set(document["$defs"]) == set(), "shown in PROTOCOL.md, not in schema.json"
    assert _reachable_types(document) - shown == set(), "in schema.json's entry shapes, not in PROTOCOL.md"
    for name in ("MessageEntry", "AssistantMessage", "ToolResultMessage", "ToolCall", "Usage", "CustomEntry"):
        assert name in shown


def test_each_row_names_the_required_fields_of_its_type():
    document = json.loads(schema.SCHEMA_PATH.read_text(encoding="utf-8"))
    for row in re.findall(r"^\| [^|]* \| `(\w+)` \| (.*)$", _section(), re.M):
        name, rest = row
        required = set(document["$defs"][name].get("required", [])) - {"type", "role"}
        listed = set(re.findall(r"`(\w+)`: ", rest))
        assert required <= listed, (name, required - listed)


def test_the_section_is_what_the_types_give():
    assert _section() + schema.SHAPES_END == schema.shapes_markdown(), "run: python -m sidecar.schema"
