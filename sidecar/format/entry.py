"""One line of a session file as the tree holds it: its envelope read, its body decoded on demand.

The line's bytes are kept in memory or read back from the file by offset
(``LineSource``), so a large session holds its envelopes, not its transcript.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec

from .codec import decode_lenient, decode_object, encode


class MessageHead(msgspec.Struct, gc=False):
    """What the tree and buildContext need of a message, read without building it.

    ``provider`` and ``model`` are UNSET when the message lacks them (pi's
    undefined), which is not the same as a null.
    """

    role: Any = None
    provider: Any = msgspec.UNSET
    model: Any = msgspec.UNSET


class _RoleOnly(msgspec.Struct):
    role: Any = None


class _MessageRoleOnly(msgspec.Struct):
    message: _RoleOnly | None = None


class _MessageHeadOnly(msgspec.Struct):
    message: MessageHead | None = None


_head_decoder = msgspec.json.Decoder(_MessageHeadOnly)
_role_decoder = msgspec.json.Decoder(_MessageRoleOnly)


class LineSource:
    """Reads lines of one session file back by offset, for entries whose bytes are not kept in memory.

    It holds its own read descriptor on the file as it was parsed: a later
    rename over the path (a migration by another process) leaves that inode
    readable, and appends only add bytes after every offset we know. The
    descriptor closes when the last entry reading from it is gone.
    """

    __slots__ = ("fd", "path", "__weakref__")

    def __init__(self, fd: int, path: str) -> None:
        self.fd = fd
        self.path = path

    def read(self, offset: int, length: int) -> bytes:
        data = os.pread(self.fd, length, offset)
        if len(data) != length or (data[:1] != b"{" and data.lstrip()[:1] != b"{"):
            raise LineMoved(
                f"{self.path} changed behind this session's back (a line is no longer where it was read); "
                "close the session and open it again"
            )
        return data

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __del__(self) -> None:
        self.close()


class LineMoved(OSError):
    """A line could not be read back from where the file held it when it was parsed."""


class Entry(msgspec.Struct, eq=False, gc=False):
    """One parsed line: the envelope eagerly, the body on demand.

    The line's bytes are either held (``line``) or read back from the file
    (``source``, ``offset``, ``length``) each time they are needed: a large
    session keeps only its envelopes in memory, not its transcript.

    A msgspec Struct rather than a dataclass: made in C, it costs a quarter of
    the time to build (a 400,000-entry file builds one per line) and no cycle
    collector header. Equality is identity, as for the dataclass it was; it
    refers to nothing that refers back to it, as ``gc=False`` asks.
    """

    type: str
    id: str | None
    parent_id: str | None
    timestamp: str | None
    line: bytes | None
    # Read with the envelope when the line holds a message object.
    head: MessageHead | None = None
    # Where the line starts in its file and how long it is (-1: not known,
    # e.g. an entry made in memory and not written yet).
    offset: int = -1
    length: int = 0
    source: LineSource | None = None
    # The line holds a blob reference (payload.py) to resolve before it is shown; None: not looked for
    # yet (a large file's line: its parse does not search a gigabyte for the rare mark). Reading the
    # line's object (``obj``) settles it, so every entry whose content was read knows; ``holds_blobs``
    # settles it without decoding.
    has_blobs: bool | None = False

    @property
    def raw(self) -> bytes:
        """The line's exact bytes (without its newline)."""
        line = self.line
        if line is None:
            line = self.source.read(self.offset, self.length)  # type: ignore[union-attr]  # an entry without its line has a source to read it from
        return line

    def held(self) -> Entry:
        """This entry with its bytes in memory (for one that must outlive its file's descriptor)."""
        if self.line is None:
            self.line = self.raw
        return self

    def detached(self) -> Entry:
        """A copy holding its bytes and belonging to no file yet (for another session's file)."""
        return Entry(self.type, self.id, self.parent_id, self.timestamp, self.raw, self.head, has_blobs=self.has_blobs)

    def obj(self) -> dict[str, Any]:
        """The whole line as a fresh dict (callers may keep or change it); settles ``has_blobs``."""
        raw = self.raw
        if self.has_blobs is None:
            self.has_blobs = BLOB_MARK in raw
        return decode_object(raw)

    def holds_blobs(self) -> bool:
        """Whether the line holds a blob reference, looked for now when the parse left it open."""
        if self.has_blobs is None:
            self.has_blobs = BLOB_MARK in self.raw
        return self.has_blobs

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
    def from_obj(cls, obj: dict[str, Any]) -> Entry:
        line = encode(obj)
        return cls(
            type=kind if isinstance(kind := obj.get("type"), str) else "",
            id=obj.get("id") if isinstance(obj.get("id"), str) else None,
            parent_id=obj.get("parentId") if isinstance(obj.get("parentId"), str) else None,
            timestamp=obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None,
            line=line,
            head=_head_of(obj),
            has_blobs=BLOB_MARK in line,
        )

    @classmethod
    def from_envelope(cls, obj: dict[str, Any], line: bytes) -> Entry:
        """``from_obj`` of an object whose maker already knows its envelope is well formed (type, id and
        timestamp strings, parentId a string or null or absent: an append's prepared entry, an importer's),
        already encoded as ``line``: the envelope is taken as it is, with no check and no second encoding."""
        return cls(
            obj["type"],
            obj["id"],
            obj.get("parentId"),
            obj["timestamp"],
            line,
            _head_of(obj),
            has_blobs=BLOB_MARK in line,
        )


def _head_of(obj: dict[str, object]) -> MessageHead | None:
    message = obj.get("message")
    if not isinstance(message, dict):
        return None
    return MessageHead(message.get("role"), message.get("provider", msgspec.UNSET), message.get("model", msgspec.UNSET))


# (For a maker of entries that builds them itself, as ``from_envelope`` does: an append's batch.)
message_head_of = _head_of


# A string starting with this refers to a blob (sidecar.store.payload writes them);
# a line holding it quoted holds a blob reference.
BLOB_PREFIX = "blob:sha256:"
BLOB_MARK = b'"' + BLOB_PREFIX.encode()
