"""An appended entry built from its prepared envelope is the entry ``Entry.from_obj`` makes of the same dict."""

from __future__ import annotations

import msgspec
import pytest

from sidecar.format.jsonl import Entry
from sidecar.store.batch import EntryBatch, entry_of

OBJS = [
    {"type": "message", "message": {"role": "user", "content": "hi"}},
    {
        "type": "message",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "ok"}],
            "provider": "anthropic",
            "model": "claude",
            "stopReason": "stop",
        },
    },
    {
        "type": "message",
        "id": "own1",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "toolResult", "content": [{"type": "text", "text": "blob:sha256:" + "0" * 64}]},
    },
    {"type": "custom", "customType": "x", "data": {"nested": [1, 2, {"a": None}]}},
    {"type": "message", "message": "not an object"},
    {"type": "model_change", "provider": "p", "modelId": "m"},
]


def _fields(entry: Entry) -> tuple:
    return tuple(getattr(entry, name) for name in entry.__struct_fields__)


@pytest.mark.parametrize("index", range(len(OBJS)))
def test_entry_of_a_prepared_envelope_is_from_obj(index):
    by_id: dict[str, Entry] = {"root": Entry.from_obj({"type": "message", "id": "root", "parentId": None})}
    batch = EntryBatch("s1", by_id, set(), OBJS, None, None)
    prepared = batch.prepare(OBJS[index], index, "root" if index != 2 else None)
    made, expected = entry_of(prepared), Entry.from_obj(prepared)
    assert _fields(made) == _fields(expected)
    assert made.raw == msgspec.json.encode(prepared)
    assert list(prepared)[:4] == ["type", "id", "parentId", "timestamp"]
