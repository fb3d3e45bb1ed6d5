"""Reading and writing session JSONL, line by line, without losing a byte.

Every line read from disk stays as its exact bytes. Only the four fields the
tree needs (type, id, parentId, timestamp) are decoded eagerly; the body is
decoded on demand. Writing a line we did not change writes those bytes again,
so fields and entry types we do not know survive every rewrite and fork.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import msgspec


class MessageHead(msgspec.Struct, gc=False):
    """What the tree and buildContext need of a message, read without building it.

    ``provider`` and ``model`` are UNSET when the message lacks them (pi's
    undefined), which is not the same as a null.
    """

    role: Any = None
    provider: Any = msgspec.UNSET
    model: Any = msgspec.UNSET


class _Envelope(msgspec.Struct, gc=False):
    """The fields every entry shares, and a message's head, in one pass over the line.

    msgspec skips the other fields without building them, so this costs one
    scan of the line and almost no allocation.
    """

    type: str | None = None
    id: str | None = None
    parentId: str | None = None
    timestamp: str | None = None
    message: MessageHead | None = None


class _LooseEnvelope(msgspec.Struct):
    """The envelope of a line whose fields hold unexpected types.

    A numeric timestamp from a newer agent, say: JSON.parse keeps such a line,
    so it stays an entry; values that are not strings are read as absent.
    """

    type: Any = None
    id: Any = None
    parentId: Any = None
    timestamp: Any = None


class _RoleOnly(msgspec.Struct):
    role: Any = None


class _MessageRoleOnly(msgspec.Struct):
    message: _RoleOnly | None = None


class _MessageHeadOnly(msgspec.Struct):
    message: MessageHead | None = None


_envelope_decoder = msgspec.json.Decoder(_Envelope)
_loose_envelope_decoder = msgspec.json.Decoder(_LooseEnvelope)
_head_decoder = msgspec.json.Decoder(_MessageHeadOnly)
_role_decoder = msgspec.json.Decoder(_MessageRoleOnly)
_object_decoder = msgspec.json.Decoder(dict[str, Any])
_encoder = msgspec.json.Encoder()


# JSON.stringify writes a lone UTF-16 surrogate (a string cut inside an emoji)
# as an escape such as "\ud83d", and JSON.parse reads it back. msgspec refuses
# such escapes, so lines holding one take a slower path that keeps them.
# Scanning left to right, an escaped backslash is consumed first, so "\\ud83d"
# (a literal backslash, then text) is never mistaken for an escape.
_ESCAPES = re.compile(
    rb"(\\\\)"
    rb"|(\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    rb"|\\u[dD][89a-fA-F][0-9a-fA-F]{2}"
)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _replace_lone_surrogates(raw: bytes) -> bytes:
    """``raw`` with every lone surrogate escape turned into U+FFFD (for reading metadata only)."""
    return _ESCAPES.sub(lambda m: m.group(0) if m.lastindex else rb"\ufffd", raw)


def _may_hold_lone_surrogate(raw: bytes) -> bool:
    return b"\\u" in raw and _replace_lone_surrogates(raw) != raw


def decode_lenient(decoder: msgspec.json.Decoder, raw: bytes) -> Any:
    """``decoder.decode(raw)``, also for a line holding lone surrogate escapes (read as U+FFFD)."""
    try:
        return decoder.decode(raw)
    except msgspec.DecodeError:
        if not _may_hold_lone_surrogate(raw):
            raise
    return decoder.decode(_replace_lone_surrogates(raw))


def encode(obj: Any) -> bytes:
    """Compact JSON, as ``JSON.stringify`` writes it (no spaces, UTF-8, same escapes)."""
    try:
        return _encoder.encode(obj)
    except UnicodeEncodeError:
        # A lone surrogate: escape it as JSON.stringify does ("\ud83d").
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        text = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
        return text.encode("utf-8")


def decode_object(raw: bytes) -> dict[str, Any]:
    """The whole line as a dict, exactly as JSON.parse reads it (lone surrogates kept)."""
    try:
        return _object_decoder.decode(raw)
    except msgspec.DecodeError:
        if not _may_hold_lone_surrogate(raw):
            raise
    obj = json.loads(raw)
    if not isinstance(obj, dict):
        raise msgspec.DecodeError("expected an object")
    return obj


@dataclass(slots=True, eq=False)
class Entry:
    """One parsed line: the envelope eagerly, the body on demand."""

    type: str
    id: str | None
    parent_id: str | None
    timestamp: str | None
    raw: bytes
    # Read with the envelope when the line holds a message object.
    head: MessageHead | None = None

    def obj(self) -> dict[str, Any]:
        """The whole line as a fresh dict (callers may keep or change it)."""
        return decode_object(self.raw)

    def message_head(self) -> MessageHead:
        """The message's role, provider and model (all absent when there is no message)."""
        if self.head is None:
            try:
                self.head = decode_lenient(_head_decoder, self.raw).message or MessageHead()
            except (msgspec.DecodeError, msgspec.ValidationError):
                self.head = MessageHead()
        return self.head

    def role(self) -> str | None:
        """A message entry's role, read without building the message."""
        if self.head is not None:
            return self.head.role if isinstance(self.head.role, str) else None
        try:
            message = decode_lenient(_role_decoder, self.raw).message
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None
        return message.role if message is not None and isinstance(message.role, str) else None

    @classmethod
    def from_obj(cls, obj: dict[str, Any]) -> "Entry":
        message = obj.get("message")
        head = None
        if isinstance(message, dict):
            head = MessageHead(
                message.get("role"), message.get("provider", msgspec.UNSET), message.get("model", msgspec.UNSET)
            )
        return cls(
            type=obj.get("type") if isinstance(obj.get("type"), str) else "",
            id=obj.get("id") if isinstance(obj.get("id"), str) else None,
            parent_id=obj.get("parentId") if isinstance(obj.get("parentId"), str) else None,
            timestamp=obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None,
            raw=encode(obj),
            head=head,
        )


# A line we could not parse stays in the file as these bytes.
Unparsed = bytes


@dataclass(slots=True)
class ParsedFile:
    """A session file split into lines, in file order."""

    header: Entry
    # Entries and unparseable lines after the header, in file order.
    items: list[Entry | Unparsed] = field(default_factory=list)
    parse_errors: int = 0
    # Byte offset where an unterminated, unparseable last line starts (a write
    # torn by a crash), or None. It must go before the next append.
    torn_tail_at: int | None = None
    # The last line parsed but has no newline; the next write must add one first.
    needs_newline: bool = False
    size: int = 0


class NotASession(ValueError):
    """The file's first parsed line is not a session header."""


def parse_line(raw: bytes) -> Entry | None:
    try:
        env = decode_lenient(_envelope_decoder, raw)
    except msgspec.ValidationError:
        return _parse_loose_line(raw)
    except msgspec.DecodeError:
        return None
    return Entry(env.type or "", env.id, env.parentId, env.timestamp, raw, env.message)


def _parse_loose_line(raw: bytes) -> Entry | None:
    try:
        env = decode_lenient(_loose_envelope_decoder, raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return Entry(
        type=env.type if isinstance(env.type, str) else "",
        id=env.id if isinstance(env.id, str) else None,
        parent_id=env.parentId if isinstance(env.parentId, str) else None,
        timestamp=env.timestamp if isinstance(env.timestamp, str) else None,
        raw=raw,
    )


def parse_file(data: bytes) -> ParsedFile:
    """Split file bytes into a header and items; never raises for damaged lines.

    Raises ``NotASession`` when no line parses or the first parsed line is not
    a header with a string id (pi would silently replace such a file; we leave
    it alone and say why).
    """
    lines = data.split(b"\n")
    ends_with_newline = data.endswith(b"\n")
    last_index = len(lines) - 1
    header: Entry | None = None
    items: list[Entry | Unparsed] = []
    parse_errors = 0
    torn_tail_at: int | None = None
    needs_newline = False
    offset = 0
    for index, raw in enumerate(lines):
        start = offset
        offset += len(raw) + 1
        is_unterminated = index == last_index and not ends_with_newline
        if index == last_index and ends_with_newline:
            break  # the empty string after the final newline
        if not raw.strip():
            parse_errors += 1
            if is_unterminated:
                torn_tail_at = start
            continue
        entry = parse_line(raw)
        if entry is None:
            parse_errors += 1
            if is_unterminated:
                torn_tail_at = start
            elif header is not None:
                items.append(raw)
            continue
        if is_unterminated:
            needs_newline = True
        if header is None:
            if entry.type != "session" or entry.id is None:
                raise NotASession(
                    "the first line is not a session header "
                    '(expected an object with "type": "session" and a string "id")'
                )
            header = entry
            continue
        items.append(entry)
    if header is None:
        raise NotASession("the file holds no session header (it is empty or every line is damaged)")
    return ParsedFile(
        header=header,
        items=items,
        parse_errors=parse_errors,
        torn_tail_at=torn_tail_at,
        needs_newline=needs_newline,
        size=len(data),
    )


def serialize(header: Entry, items: list[Entry | Unparsed]) -> bytes:
    """The whole file, one line per item, each line as its kept bytes."""
    parts = [header.raw]
    for item in items:
        parts.append(item.raw if isinstance(item, Entry) else item)
    return b"\n".join(parts) + b"\n"
