"""Reading a Claude Code transcript's lines: each decoded once into a Struct of the fields the mapping
(claude_code.py) reads, the message content and tool output kept as the JSON text they came as; the
copies of what was sent to the API counted as skipped without going further; a damaged line reported
with its number and skipped."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from ..store import MAX_CHARS
from .common import SKIPPED, Tally, source_lines, stood_in

# Record kinds that copy what another line holds, with why they are skipped.
COPIES = {
    "api-request-blob": "a copy of a message sent to the API; the message itself is imported once",
    "api-request": "the request's parameters (bookkeeping)",
    "api-request-shape": "the request's system prompt and tool shapes (bookkeeping)",
    "queue-operation": "the prompt queue; the prompt itself is its user line",
    "last-prompt": "the last prompt again, and a leaf pointer",
}


NULL = msgspec.Raw(b"null")

# The Structs a line is read into hold nothing that refers back to them (decoded JSON is a tree): no cycle
# collector header, fewer steps to make each (gc=False).


class Message(msgspec.Struct, gc=False):
    """A user or assistant line's API message; its content is read for what the line is."""

    id: Any = None
    model: Any = None
    content: msgspec.Raw = NULL
    usage: msgspec.Raw = NULL  # (read only for the line that opens a message: most of one's lines add to it)
    stop_reason: Any = None


class Record(msgspec.Struct, gc=False):
    """One transcript line: the fields the mapping reads; the message and tool output kept as JSON text."""

    type: Any = None
    uuid: Any = None
    parentUuid: Any = None
    logicalParentUuid: Any = None
    isSidechain: Any = None
    timestamp: Any = None
    sessionId: Any = None
    cwd: Any = None
    isMeta: Any = None
    isCompactSummary: Any = None
    subtype: Any = None
    message: Message | None = None
    toolUseResult: msgspec.Raw = NULL
    # Set after decoding (under names no transcript uses): the line itself, and whether the record was
    # moved under a subagent branch's head (its parentUuid then reads "\0head").
    line: Any = msgspec.field(default=b"", name="__sidecar.line")
    rehomed: Any = msgspec.field(default=False, name="__sidecar.rehomed")

    def whole(self) -> object:
        """The record as a custom entry keeps it: its JSON text as it came, unless it must be changed or cut."""
        if self.rehomed:
            record = decoder.decode(self.line)
            record["parentUuid"] = self.parentUuid
            return record
        if len(self.line) > MAX_CHARS:
            return decoder.decode(self.line)  # the store cuts over-long strings: it needs them decoded
        return msgspec.Raw(self.line)

    def tool_use_result(self) -> Any:
        raw = self.toolUseResult
        if len(raw) == 4 and bytes(raw) == b"null":
            return None
        return raw if len(raw) <= MAX_CHARS else decoder.decode(raw)


class LooseRecord(Record, gc=False):
    """A record whose ``message`` is no object (kept as a custom entry, as any record that is no message)."""

    message: Any = None


class BlockHead(msgspec.Struct, gc=False):
    type: Any = None
    tool_use_id: Any = None
    is_error: Any = None
    content: msgspec.Raw = NULL


decoder = msgspec.json.Decoder()
record_decoder = msgspec.json.Decoder(Record)
loose_record_decoder = msgspec.json.Decoder(LooseRecord)
block_list_decoder = msgspec.json.Decoder(list[msgspec.Raw])
block_decoder = msgspec.json.Decoder(BlockHead)
block_heads_decoder = msgspec.json.Decoder(list[BlockHead])


def first_byte(raw: msgspec.Raw) -> int:
    """The first byte of a JSON value as its code (-1: none): ``[``, ``{`` or ``"`` says what it is."""
    return memoryview(raw)[0] if len(raw) else -1


LIST, OBJECT, STRING = ord("["), ord("{"), ord('"')


def _record(line: memoryview) -> Record:
    try:
        return record_decoder.decode(line)
    except msgspec.ValidationError:  # a "message" that is no object: the record is kept as it is
        return loose_record_decoder.decode(line)


def read_records(path: Path, tally: Tally) -> Iterator[tuple[int, Record]]:
    """(1-based line number, record) of each line; a damaged line is counted with its number and skipped,
    and the copies of what was sent (most of a transcript's bytes) are counted as skipped."""
    copies: dict[str, int] = {}  # counted into the tally at the end, once per kind
    for number, line in source_lines(path):
        try:
            try:
                record = record_decoder.decode(line)
            except msgspec.ValidationError:  # (as _record: written out, for the cost of a call a line)
                record = loose_record_decoder.decode(line)
        except msgspec.DecodeError as refused:
            # A line msgspec refused, read again with its lone surrogates stood in (when it holds any).
            again = stood_in(line)
            error: msgspec.DecodeError | None = refused
            if again is not None:
                try:
                    line, record = again, _record(again)
                    error = None
                except msgspec.DecodeError as still:
                    error = still
            if error is not None:
                tally.damage(
                    number, "not a JSON object" if isinstance(error, msgspec.ValidationError) else f"not JSON: {error}"
                )
                continue
        kind = record.type
        if type(kind) is str and kind in COPIES:
            copies[kind] = copies.get(kind, 0) + 1
            continue
        record.line = line
        yield number, record
    for kind, times in copies.items():
        tally.count(kind, SKIPPED, COPIES[kind], times)
