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


def _batches() -> dict[str, list[dict]]:
    # (The objects of OBJS pi's shapes take: the batch is checked whole.)
    small = [OBJS[0], OBJS[1], OBJS[3], OBJS[5]] * 40
    marked = {
        "role": "toolResult",
        "toolCallId": "c",
        "toolName": "t",
        "content": [{"type": "text", "text": "blob:sha256:" + "0" * 64}],
    }
    return {
        "plain": small,
        "a blob mark": small + [{"type": "message", "message": marked}],
        "a lone surrogate": small + [{"type": "custom", "customType": "x", "data": {"cut": "\ud83d"}}],
        "past MAX_CHARS in all, no line past it": [
            {"type": "custom", "customType": "x", "data": {"text": "y" * 200_000}} for _ in range(4)
        ],
        "a line past MAX_CHARS": small + [{"type": "custom", "customType": "x", "data": {"text": "y" * 600_000}}],
        "an image": small
        + [
            {
                "type": "message",
                "message": {
                    "role": "user",
                    "content": [{"type": "image", "data": "A" * 4096, "mimeType": "image/png"}],
                },
            }
        ],
    }


@pytest.mark.parametrize("name", list(_batches()))
def test_a_batchs_entries_are_what_from_obj_makes_of_each_object_as_stored(tmp_path, name):
    """add_batch encodes a batch's lines at once and looks for the marks in them all together; each entry
    must still be the one ``Entry.from_obj`` makes of its object as stored (after ``bound``: a line past
    MAX_CHARS cut, an image moved to the blob store), whichever way the batch went."""
    from sidecar import wire
    from sidecar.service import SessionService

    service = SessionService(tmp_path)
    service.create(wire.CreateParams(cwd="/work", sessionId="batch"))
    session = service.store.live("batch")[0]
    session.blobs = service.store.blobs  # (as an oh-my-pi session's: its images go to the blob store)
    assert session.blobs is not None
    root = session.add_batch([{"type": "message", "id": "root", "message": {"role": "user", "content": "r"}}])
    assert root[0][0].id == "root"
    objs = _batches()[name]
    entries, stored = session.add_batch(objs)
    assert len(entries) == len(stored) == len(objs)
    for entry, obj in zip(entries, stored):
        assert _fields(entry) == _fields(Entry.from_obj(obj))
    if name == "a line past MAX_CHARS":
        assert len(entries[-1].raw) < 600_000  # (cut: bound ran)
    if name == "an image":
        assert b"blob:sha256:" in entries[-1].raw and entries[-1].has_blobs
    if name == "a blob mark":
        assert entries[-1].has_blobs and not entries[0].has_blobs
