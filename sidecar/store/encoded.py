"""Entries as append stores them, made from whole objects (an import's): images to the blob store
(oh-my-pi's compatibility), over-long strings cut. The file and PostgreSQL stores share it."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from ..format.codec import decode_object, restore_lone_surrogates
from ..format.jsonl import Entry
from .payload import MAX_CHARS, Blobs, bound

_encode = msgspec.json.Encoder().encode  # as format/codec.encode, which takes over for a lone surrogate


def stored_entry(obj: dict[str, object], blobs: Blobs | None) -> Entry:
    entry = Entry.from_obj(obj)
    line = entry.raw  # (made from the dict just now: held, never read back from a file)
    if len(line) > MAX_CHARS or (blobs is not None and b'"image"' in line):
        entry = Entry.from_obj(bound(obj, blobs))
    return entry


def stored_entries(objs: Sequence[dict[str, object] | Entry], blobs: Blobs | None) -> list[Entry]:
    """``stored_entry`` of each. The envelope an importer's Builder writes (a string type, id and
    timestamp, the parent's id or null) is taken as it is; anything else goes through ``stored_entry``.
    One encoding each: msgspec's encode_lines is faster, but cutting its output into lines costs more.
    An ``Entry`` (an importer made its line already) is kept as it is unless it must change: then its
    object is read back from the line and stored as any other."""
    out: list[Entry] = []
    append = out.append
    for obj in objs:
        if isinstance(obj, Entry):
            raw = obj.raw
            if len(raw) > MAX_CHARS or (blobs is not None and b'"image"' in raw):
                append(Entry.from_obj(bound(decode_object(raw), blobs)))
            else:
                append(obj)
            continue
        kind, entry_id, parent, stamp = obj.get("type"), obj.get("id"), obj.get("parentId"), obj.get("timestamp")
        if not (
            type(kind) is str
            and type(entry_id) is str
            and type(stamp) is str
            and (parent is None or type(parent) is str)
        ):
            append(stored_entry(obj, blobs))
            continue
        try:
            line = _encode(obj)
        except UnicodeEncodeError:
            append(stored_entry(obj, blobs))
            continue
        if len(line) > MAX_CHARS or (blobs is not None and b'"image"' in line):
            append(Entry.from_obj(bound(obj, blobs)))
            continue
        append(Entry.from_envelope(obj, line))
    return [_restored(entry) for entry in out]


_STAND_IN = b"\xf4\x8f\xbf\xbf"  # (see format/codec.stand_in_lone_surrogates)


def _restored(entry: Entry) -> Entry:
    """``entry``, or where an import stood lone surrogates in (format/codec.py), its line with their escapes."""
    line = entry.line
    # Its first byte looked for first: a search for one byte is a memchr, one for four walks the line (a
    # tenth of an import's time, for the stand-in hardly any line holds).
    if line is None or _STAND_IN[:1] not in line or _STAND_IN not in line:
        return entry
    restored = Entry.from_obj(decode_object(restore_lone_surrogates(bytes(line))))
    return restored
