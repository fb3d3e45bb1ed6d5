"""What every importer shares: the tally of record kinds, the entry builder, message shapes, time.

An importer turns another tool's session into a list of pi entries (dicts with
their own ``id``/``parentId``/``timestamp``, or, for an entry never changed once
made, its ``Entry`` with the line already written: ``Builder.made``) plus a header
note of where it came from; ``run.py`` writes them as one pi session through the store. Ids are derived
from the source's own ids, so importing the same source twice gives the same
entries, and the session id from the tool and the source's id, so a second import
finds the first.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict

import msgspec

from ..format.codec import encode as json_bytes
from ..format.codec import may_hold_lone_surrogate, stand_in_lone_surrogates
from ..format.entry import Entry
from .made import TOOL_RESULT_HEAD, USER_HEAD, Assistant, SharedHead, json_text, line_entry, tool_result_fields

# The namespace of imported session ids: uuid5(IMPORT_NAMESPACE, "<tool>:<original id>").
IMPORT_NAMESPACE = uuid.UUID("6f1d7c52-2b0e-4a8e-9a53-5d3c0f1e2a70")

MAPPED, KEPT, SKIPPED = "mapped", "kept", "skipped"
UNKNOWN_KIND = "a record kind this importer does not know: kept as a custom entry"


def imported_session_id(tool: str, original_id: str) -> str:
    return str(uuid.uuid5(IMPORT_NAMESPACE, f"{tool}:{original_id}"))


class Damage(TypedDict):
    """A source line that could not be read: its 1-based number and why."""

    line: int
    error: str


@dataclass
class Tally:
    """How many records of each kind were mapped, kept as custom entries or skipped, and why."""

    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)  # "<kind>/<outcome>" -> why
    damaged: list[Damage] = field(default_factory=list)
    unrecognised: set[str] = field(default_factory=set)
    _explained: set[tuple[str, str]] = field(default_factory=set)  # (kind, outcome) with its reason noted

    def count(self, kind: str, outcome: str, reason: str | None = None, times: int = 1) -> None:
        # Called once per source line: the reason's key is built only the first time it is given.
        per = self.counts.get(kind)
        if per is None:
            per = self.counts[kind] = {}
        per[outcome] = per.get(outcome, 0) + times
        if reason is not None and (kind, outcome) not in self._explained:
            self._explained.add((kind, outcome))
            self.reasons.setdefault(f"{kind}/{outcome}", reason)

    def unknown(self, kind: str) -> None:
        self.unrecognised.add(kind)
        self.count(kind, KEPT, UNKNOWN_KIND)

    def counted(self, counts: list[tuple[str, str, int, str | None]], unrecognised: list[str]) -> None:
        """The counts of a compiled mapping ((kind, outcome, times, reason), in the order the Python one counts)."""
        for kind, outcome, times, reason in counts:
            self.count(kind, outcome, reason, times)
        self.unrecognised.update(unrecognised)

    def damage(self, line: int, error: str) -> None:
        self.damaged.append({"line": line, "error": error})


def short_id(key: str, taken: set[str]) -> str:
    """An 8-hex entry id (pi's shape) derived from ``key``; longer only on a clash."""
    digest = hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()
    candidate = digest[:8]
    if candidate not in taken:  # (nearly always: one entry per source record)
        taken.add(candidate)
        return candidate
    for width in (12, 16, 40):
        candidate = digest[:width]
        if candidate not in taken:
            taken.add(candidate)
            return candidate
    n = 0
    while f"{digest}-{n}" in taken:
        n += 1
    taken.add(f"{digest}-{n}")
    return f"{digest}-{n}"


class Builder:
    """The entries of one imported session, in file order, each parent written before its child."""

    def __init__(self) -> None:
        # (an Assistant only until ``finish`` writes it as its line)
        self.entries: list[dict[str, object] | Entry | Assistant] = []
        self.ids: set[str] = set()
        self.by_id: dict[str, dict[str, object] | Entry | Assistant] = {}
        self.model: tuple[str, str] | None = None  # (provider, modelId) of the last model_change written

    def add(self, key: str, parent: str | None, timestamp: str, kind: str, **fields: object) -> str:
        entry_id = short_id(key, self.ids)
        entry = {"type": kind, "id": entry_id, "parentId": parent, "timestamp": timestamp, **fields}
        self.entries.append(entry)
        self.by_id[entry_id] = entry
        return entry_id

    def made(
        self,
        key: str,
        parent: str | None,
        timestamp: str,
        kind: str,
        fields: tuple[bytes, ...],
        head: SharedHead | None = None,
    ) -> str:
        """An entry no one changes once made, written as its line at once: ``fields`` the pieces of the JSON
        text of its fields after the envelope (``"name":value,...``), ``head`` its message's head. The line is
        the one ``add`` and the store's encoding would give (the same keys in the same order), without the
        dict being built and walked again (most of an imported session's entries); its pieces are joined
        once, so a large output is copied once."""
        entry_id = short_id(key, self.ids)
        entry = line_entry(entry_id, parent, timestamp, kind, fields, head)
        self.entries.append(entry)
        self.by_id[entry_id] = entry
        return entry_id

    def assistant(
        self,
        key: str,
        parent: str | None,
        timestamp: str,
        ms: int,
        api: str,
        provider: str,
        model: str,
        usage_text: msgspec.Raw,
        stop: str,
    ) -> Assistant:
        """An assistant message filled part by part (``Assistant``), in its place among the entries; ``finish``
        writes its line."""
        entry_id = short_id(key, self.ids)
        message = Assistant(entry_id, parent, timestamp, ms, api, provider, model, usage_text, stop)
        self.entries.append(message)
        self.by_id[entry_id] = message
        return message

    def adopt(self, entries: list[dict[str, object] | Entry]) -> None:
        """The entries a compiled mapping made (the builder was empty): every id they hold taken."""
        self.entries[:] = entries
        for entry in entries:
            entry_id = id_of(entry)
            self.ids.add(entry_id)
            self.by_id[entry_id] = entry

    def finish(self) -> None:
        """Each assistant message written as its line (once every part is in: the import read its sources)."""
        entries, by_id = self.entries, self.by_id
        for index, entry in enumerate(entries):
            if type(entry) is Assistant:
                entries[index] = by_id[entry.id] = entry.made()

    def dict_entry(self, entry_id: str) -> dict[str, object]:
        """The entry ``add`` made as a dict (a compaction whose kept id is filled in later), to change in place."""
        entry = self.by_id[entry_id]
        assert type(entry) is dict, entry_id
        return entry

    def being_filled(self, entry_id: str) -> Assistant:
        """The assistant message ``assistant`` opened, to add the blocks of a later line of the same response."""
        entry = self.by_id[entry_id]
        assert type(entry) is Assistant, entry_id
        return entry

    def insert_after(self, anchor: str | None, entries: list[dict[str, object] | Entry | Assistant]) -> None:
        """Put a branch right after its anchor: the file's last line stays on the main path (pi's leaf)."""
        at = len(self.entries)
        if anchor is not None:
            at = next(i for i, e in enumerate(self.entries) if id_of(e) == anchor) + 1
        self.entries[at:at] = entries
        for entry in entries:
            self.by_id[id_of(entry)] = entry

    def custom(self, key: str, parent: str | None, timestamp: str, custom_type: str, data: object) -> str:
        """A record kept as it is, out of the model's context (pi's ``custom`` entry)."""
        return self.add(key, parent, timestamp, "custom", customType=custom_type, data=data)

    def custom_message(
        self, key: str, parent: str | None, timestamp: str, custom_type: str, content: object, details: object = None
    ) -> str:
        """Context the tool injected as a user turn (pi's ``custom_message``: sent to the model, not displayed)."""
        fields: dict[str, object] = {"customType": custom_type, "content": content, "display": False}
        if details is not None:
            fields["details"] = details
        return self.add(key, parent, timestamp, "custom_message", **fields)

    def message(self, key: str, parent: str | None, timestamp: str, message: dict[str, object]) -> str:
        # (add's dict, written out: no keyword dict to build and merge for each message)
        entry_id = short_id(key, self.ids)
        entry: dict[str, object] = {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": timestamp,
            "message": message,
        }
        self.entries.append(entry)
        self.by_id[entry_id] = entry
        return entry_id

    def tool_result(
        self,
        key: str,
        parent: str | None,
        timestamp: str,
        call_id: str,
        name: str,
        text: object,
        ms: int,
        is_error: bool = False,
        details: object = None,
    ) -> str:
        """``message(..., tool_result(...))`` made as its line (``made``)."""
        return self.made(
            key,
            parent,
            timestamp,
            "message",
            tool_result_fields(call_id, name, text, ms, is_error, details),
            TOOL_RESULT_HEAD,
        )

    def user(self, key: str, parent: str | None, timestamp: str, content: object, ms: int) -> str:
        """``message(..., user_message(content, ms))`` made as its line (``made``)."""
        return self.made(
            key,
            parent,
            timestamp,
            "message",
            (b'"message":{"role":"user","content":', json_bytes(content), b',"timestamp":', json_bytes(ms), b"}"),
            USER_HEAD,
        )

    def kept(self, key: str, parent: str | None, timestamp: str, custom_type: str, data: object) -> str:
        """``custom(...)`` made as its line (``made``); ``data`` may be JSON text (``msgspec.Raw``)."""
        return self.made(
            key, parent, timestamp, "custom", (b'"customType":', json_bytes(custom_type), b',"data":', json_text(data))
        )

    def model_change(self, key: str, parent: str | None, timestamp: str, provider: str, model: str) -> str | None:
        """A model_change entry when the model differs from the last one written, else ``parent``."""
        if self.model == (provider, model):
            return parent
        self.model = (provider, model)
        return self.add(key, parent, timestamp, "model_change", provider=provider, modelId=model)


# ---- message shapes (pi's AgentMessages) ----------------------------------------------------------


def usage(
    input_tokens: int = 0, output_tokens: int = 0, cache_read: int = 0, cache_write: int = 0
) -> dict[str, object]:
    total = input_tokens + output_tokens + cache_read + cache_write
    return {
        "input": input_tokens,
        "output": output_tokens,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "totalTokens": total,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


# usage() as JSON text: what an importer that knows no usage (Codex) writes, never built or walked again.
NO_USAGE = msgspec.Raw(msgspec.json.encode(usage()))


def user_message(content: object, ms: int) -> dict[str, object]:
    return {"role": "user", "content": content, "timestamp": ms}


def assistant_message(
    content: list[dict[str, object]],
    ms: int,
    api: str,
    provider: str,
    model: str,
    use: dict[str, object] | None = None,
    stop: str | None = None,
) -> dict[str, object]:
    if stop is None:
        stop = "toolUse" if any(block.get("type") == "toolCall" for block in content) else "stop"
    return {
        "role": "assistant",
        "content": content,
        "api": api,
        "provider": provider,
        "model": model,
        "usage": use or NO_USAGE,
        "stopReason": stop,
        "timestamp": ms,
    }


def tool_result(
    call_id: str, name: str, text: object, ms: int, is_error: bool = False, details: object = None
) -> dict[str, object]:
    """``text``: the blocks, a string, or a JSON string literal as the source wrote it (``msgspec.Raw``,
    written out as it is: a large output is never decoded and encoded again); anything else as JSON text."""
    content: list[object]
    if isinstance(text, list):
        content = text
    elif isinstance(text, (str, msgspec.Raw)):
        content = [{"type": "text", "text": text}]
    else:
        content = [{"type": "text", "text": msgspec.json.encode(text).decode()}]
    message: dict[str, object] = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": content,
        "isError": bool(is_error),
        "timestamp": ms,
    }
    if details is not None:
        message["details"] = details
    return message


def id_of(entry: dict[str, object] | Entry | Assistant) -> str:
    """An entry's id, whether a dict, made as its line or an assistant message being filled."""
    if isinstance(entry, dict):
        return entry["id"]  # type: ignore[return-value]  # the str Builder.add wrote
    return entry.id  # type: ignore[return-value]  # Entry.id is Optional for a header line; an entry has one


def timestamp_of(entry: dict[str, object] | Entry | Assistant) -> str:
    if isinstance(entry, dict):
        return entry["timestamp"]  # type: ignore[return-value]  # the str Builder.add wrote
    return entry.timestamp  # type: ignore[return-value]  # Entry.timestamp is Optional for a header line; an entry has one


def image_block(data: str, mime: str) -> dict[str, object]:
    """pi's image block; the store moves its bytes to the blob folder where the root's compatibility says so."""
    return {"type": "image", "data": data, "mimeType": mime}


# ---- time -------------------------------------------------------------------------------------


def iso_of_ms(ms: int | float) -> str:
    # time.gmtime and a format string: a third of the cost of datetime + strftime, once per imported message.
    seconds, milli = divmod(int(ms), 1000)
    t = time.gmtime(seconds)
    return f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}.{milli:03d}Z"


_EPOCH_DAYS: dict[str, int] = {}
_MS_IN_MINUTE: dict[str, int] = {}
_last_minute: list[tuple[str, int]] = [("", 0)]  # (YYYY-MM-DDTHH:MM, its epoch ms) of the last timestamp read


def ms_of_iso(text: object, fallback: int = 0) -> int:
    if not isinstance(text, str) or not text:
        return fallback
    if len(text) == 24 and text[-1] == "Z" and text[19] == "." and text[10] == "T":
        # YYYY-MM-DDTHH:MM:SS.mmmZ: the day's epoch looked up once, the minute's start kept from the line
        # before (consecutive lines mostly share their minute), the rest is arithmetic
        try:
            minute, last = text[:16], _last_minute[0]
            if minute == last[0]:
                start = last[1]
            else:
                day = _EPOCH_DAYS.get(text[:10])
                if day is None:
                    day = _EPOCH_DAYS[text[:10]] = int(
                        datetime.fromisoformat(text[:10] + "T00:00:00+00:00").timestamp()
                    )
                start = (day + int(text[11:13]) * 3600 + int(text[14:16]) * 60) * 1000
                _last_minute[0] = (minute, start)  # one reference swapped: safe across threads
            within = _MS_IN_MINUTE.get(text[17:23])  # "SS.mmm": read once each
            if within is None:
                within = int(text[17:19]) * 1000 + int(text[20:23])
                if len(_MS_IN_MINUTE) < 60_000:
                    _MS_IN_MINUTE[text[17:23]] = within
            return start + within
        except ValueError:
            return fallback
    try:
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return fallback
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return int(stamp.timestamp() * 1000)


def iso_z(text: object, fallback_ms: int = 0) -> str:
    """An ISO 8601 UTC timestamp with milliseconds, as pi writes them."""
    if isinstance(text, str) and len(text) == 24 and text[-1] == "Z" and text[19] == "." and text[10] == "T":
        return text  # already pi's shape (what Codex and Claude Code write): no parsing
    if text is None and fallback_ms == 0:
        return EPOCH  # (a record without a time: Claude Code's cost-state lines)
    return iso_of_ms(ms_of_iso(text, fallback_ms))


EPOCH = iso_of_ms(0)


# ---- reading ----------------------------------------------------------------------------------

_BLANKS = frozenset(b" \t\r\n\x0b\x0c")


def read_source(path: Path, whole: bool = True) -> bytes | mmap.mmap:
    """The whole source file, mapped rather than read: a read copies 50 MB into fresh memory, one page
    fault per page, which cost as much as decoding it; a mapping faults in the page cache's own pages
    (all at once when ``whole``; else a page when it is first read, for a caller reading a few).

    The agents only append to their files, so the mapping stays sound while the import reads it (as
    for our own open, format/jsonl.py). An empty file has nothing to map.
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        if os.fstat(fd).st_size == 0:
            return b""
        populate = getattr(mmap, "MAP_POPULATE", 0) if whole else 0
        return mmap.mmap(fd, 0, flags=mmap.MAP_SHARED | populate, prot=mmap.PROT_READ)
    finally:
        os.close(fd)


def source_lines(path: Path) -> Iterator[tuple[int, memoryview]]:
    """(1-based line number, the line without surrounding blanks) of each line that is not blank.

    The file is mapped in one go and each line is a view into it, never a copy:
    a source is mostly a few very large lines, and copying them cost more than decoding them.
    A line holding a lone surrogate escape (a Node tool's string cut inside an emoji) comes as it is:
    msgspec refuses it wherever the escape is, and the reader then reads ``stood_in(line)`` instead.
    Looking for the escapes in every line beforehand cost a quarter of an import (two searches of the
    whole file: a search for a few bytes is no memchr).
    """
    data = read_source(path)
    view, find, size = memoryview(data), data.find, len(data)
    start, number = 0, 0
    while start < size:
        end = find(b"\n", start)
        if end < 0:
            end = size
        number += 1
        if end > start and data[start] == 123 and data[end - 1] == 125:  # "{...}": nearly every line, no blanks
            yield number, view[start:end]
            start = end + 1
            continue
        first, last = start, end
        while first < last and data[first] in _BLANKS:
            first += 1
        while last > first and data[last - 1] in _BLANKS:
            last -= 1
        if last > first:
            yield number, view[first:last]
        start = end + 1


def stood_in(line: memoryview) -> memoryview | None:
    """A line msgspec refused, with each lone surrogate escape stood in for by text msgspec reads
    (format/codec.py; store/encoded.py restores them), or None when it holds none (it was refused
    for another reason). Asked only of a refused line: msgspec refuses a lone surrogate escape
    anywhere in a line, a field it skips or keeps as JSON text included, so a line it read holds none."""
    raw = bytes(line)
    if may_hold_lone_surrogate(raw):
        return memoryview(stand_in_lone_surrogates(raw))
    return None


@dataclass
class Imported:
    """One source session turned into pi entries."""

    tool: str
    original_id: str
    source: str  # the path it was read from
    cwd: str
    timestamp: str
    entries: list[dict[str, object] | Entry | Assistant]  # (no Assistant left once the builder finished)
    tally: Tally
    name: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # more of where it came from (subagent files, ...)

    @property
    def session_id(self) -> str:
        return imported_session_id(self.tool, self.original_id)

    def origin(self) -> dict[str, object]:
        return {"tool": self.tool, "id": self.original_id, "path": self.source, **self.extra}
