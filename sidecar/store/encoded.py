"""Entries as append stores them, made from whole objects (an import's): images to the blob store
(oh-my-pi's compatibility), over-long strings cut. The file and PostgreSQL stores share it."""

from __future__ import annotations

from typing import Any

from ..format.jsonl import Entry
from .payload import MAX_CHARS, BlobStore, bound


def stored_entry(obj: dict[str, Any], blobs: BlobStore | None) -> Entry:
    entry = Entry.from_obj(obj)
    line = entry.line  # (made from the dict just now: held, never read back from a file)
    if len(line) > MAX_CHARS or (blobs is not None and b'"image"' in line):  # type: ignore[arg-type]
        entry = Entry.from_obj(bound(obj, blobs))
    return entry


def stored_entries(objs: list[dict[str, Any]], blobs: BlobStore | None) -> list[Entry]:
    # One encoding each: msgspec's encode_lines is faster, but cutting its output into lines costs more.
    return [stored_entry(obj, blobs) for obj in objs]
