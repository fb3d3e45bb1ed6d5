"""An import's entries made in one pass (store/encoded.stored_entries) are the entries append would store.

stored_entries takes the envelope an importer writes as it is and builds each Entry itself;
every other shape goes the way of stored_entry (Entry.from_obj): both must give the same
line, envelope, message head and blob mark, for every shape an entry can have.
"""

from __future__ import annotations

import base64

import msgspec

from sidecar.store.encoded import stored_entries, stored_entry
from sidecar.store.payload import MAX_CHARS, BlobStore

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40).decode()


def described(entry) -> tuple:
    return (
        entry.raw,
        entry.type,
        entry.id,
        entry.parent_id,
        entry.timestamp,
        entry.has_blobs,
        None if entry.head is None else msgspec.structs.astuple(entry.head),
    )


def objs() -> list[dict]:
    stamp = "2026-01-02T03:04:05.000Z"
    return [
        {
            "type": "message",
            "id": "a1",
            "parentId": None,
            "timestamp": stamp,
            "message": {"role": "user", "content": "hi", "timestamp": 1},
        },
        {
            "type": "message",
            "id": "a2",
            "parentId": "a1",
            "timestamp": stamp,
            "message": {"role": "assistant", "content": [], "provider": "openai", "model": "gpt", "api": "x"},
        },
        {
            "type": "message",
            "id": "a3",
            "parentId": "a2",
            "timestamp": stamp,
            "message": {"role": "toolResult", "content": [{"type": "text", "text": msgspec.Raw(b'"as it came"')}]},
        },
        {
            "type": "custom",
            "id": "a4",
            "parentId": "a3",
            "timestamp": stamp,
            "customType": "x",
            "data": msgspec.Raw(b'{"kept":"blob:sha256:' + b"0" * 64 + b'"}'),
        },  # text that reads as a blob reference
        {
            "type": "message",
            "id": "a5",
            "parentId": "a4",
            "timestamp": stamp,
            "message": {"role": "user", "content": "cut \ud83d here"},
        },  # a lone surrogate: JSON.stringify's escape
        {
            "type": "message",
            "id": "a6",
            "parentId": "a5",
            "timestamp": stamp,
            "message": {"role": "toolResult", "content": [{"type": "text", "text": "x" * (MAX_CHARS + 10)}]},
        },
        {
            "type": "message",
            "id": "a7",
            "parentId": "a6",
            "timestamp": stamp,
            "message": {"role": "user", "content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]},
        },
        {"type": "message", "id": 7, "parentId": ["odd"], "timestamp": None, "message": "not an object"},
        {"type": "model_change", "id": "a8", "parentId": "a7", "timestamp": stamp, "provider": "p", "modelId": "m"},
    ]


def test_one_pass_gives_what_append_stores_without_blobs():
    assert [described(e) for e in stored_entries(objs(), None)] == [described(stored_entry(o, None)) for o in objs()]


def test_one_pass_gives_what_append_stores_with_images_moved_to_blobs(tmp_path):
    one, each = BlobStore(tmp_path / "one"), BlobStore(tmp_path / "each")
    got = [described(e) for e in stored_entries(objs(), one)]
    assert got == [described(stored_entry(o, each)) for o in objs()]
    assert got[6][5] is True and b"blob:sha256:" in got[6][0]  # the image went to the blob store
    assert b"too long to store" in got[5][0] and got[4][0].count(b"\\ud83d") == 1  # cut; the escape kept
