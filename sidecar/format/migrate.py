"""Forward migration of session files: v1 -> v2 -> v3, with pi's semantics.

v1 -> v2: every entry gets an ``id`` and a ``parentId`` chaining it to the
previous entry in file order; a compaction's ``firstKeptEntryIndex`` (an index
into the parsed lines, the header being 0) becomes ``firstKeptEntryId``.
v2 -> v3: the legacy ``hookMessage`` role becomes ``custom``.

Lines we do not touch keep their bytes: an entry of a type we do not know, and
a line we could not parse, are carried into the rewritten file unchanged.
"""

from __future__ import annotations

from .jsonl import Entry, ParsedFile, Unparsed
from .version import CURRENT_VERSION, KNOWN_ENTRY_TYPES


def new_entry_id(taken: set[str] | dict) -> str:
    """An 8-hex-digit id, as pi makes them, unique within the session."""
    import secrets  # (here: hashlib and hmac come with it, ~2 ms, and an open makes no id)

    for _ in range(100):
        candidate = secrets.token_hex(4)
        if candidate not in taken:
            return candidate
    return secrets.token_hex(16)


def file_version(header: Entry) -> int:
    version = header.obj().get("version")
    return version if isinstance(version, int) and not isinstance(version, bool) else 1


def migrate(parsed: ParsedFile) -> int | None:
    """Bring ``parsed`` to the current version in place.

    Returns the version it was migrated from, or None when it was current.
    """
    version = file_version(parsed.header)
    if version >= CURRENT_VERSION:
        return None
    if version < 2:
        _v1_to_v2(parsed)
    _v2_to_v3(parsed)
    header = parsed.header.obj()
    header["version"] = CURRENT_VERSION
    parsed.header = Entry.from_obj(header)
    return version


def _v1_to_v2(parsed: ParsedFile) -> None:
    taken: set[str] = set()
    previous_id: str | None = None
    # firstKeptEntryIndex counts parsed lines with the header at 0, exactly
    # as pi indexes its array of parsed file entries.
    parsed_lines: list[Entry | None] = [None]
    objs: list[dict[str, object] | None] = []
    for item in parsed.items:
        if isinstance(item, Entry):
            parsed_lines.append(item)
    new_items: list[Entry | Unparsed] = []
    assigned: dict[int, str] = {}  # id(Entry) -> new id, to resolve indexes
    for item in parsed.items:
        if not isinstance(item, Entry) or item.type not in KNOWN_ENTRY_TYPES:
            new_items.append(item)
            objs.append(None)
            continue
        obj = item.obj()
        entry_id = new_entry_id(taken)
        taken.add(entry_id)
        obj["id"] = entry_id
        obj["parentId"] = previous_id
        previous_id = entry_id
        assigned[id(item)] = entry_id
        objs.append(obj)
        new_items.append(item)
    for index in range(len(new_items)):
        made = objs[index]
        if made is None:
            continue
        kept_index = made.get("firstKeptEntryIndex")
        if made.get("type") == "compaction" and _is_js_number(kept_index):
            # Only a numeric index is converted and removed, as in pi; any
            # other value is data we do not understand and keep.
            del made["firstKeptEntryIndex"]
            if isinstance(kept_index, float) and kept_index.is_integer():
                kept_index = int(kept_index)
            if isinstance(kept_index, int) and 0 < kept_index < len(parsed_lines):
                target = parsed_lines[kept_index]
                if target is not None and id(target) in assigned:
                    made["firstKeptEntryId"] = assigned[id(target)]
        new_items[index] = Entry.from_obj(made)
    parsed.items = new_items


def _is_js_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _v2_to_v3(parsed: ParsedFile) -> None:
    for index, item in enumerate(parsed.items):
        if not isinstance(item, Entry) or item.type != "message":
            continue
        if b"hookMessage" not in item.raw:
            continue  # cheap filter: most lines cannot need this
        obj = item.obj()
        message = obj.get("message")
        if isinstance(message, dict) and message.get("role") == "hookMessage":
            message["role"] = "custom"
            parsed.items[index] = Entry.from_obj(obj)
