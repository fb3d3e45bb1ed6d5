"""One line read on its own: the envelope structs, their decoders and ``parse_line``.

The parse (jsonl.py) reads most lines a stretch at a time (chunked.py) or with
the strict envelope; a line neither takes is read here, exactly as JSON.parse
would keep it. Shared values (entry types, message heads) live here too.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .codec import decode_lenient
from .entry import Entry, MessageHead
from .version import KNOWN_ENTRY_TYPES


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


class SharedHead(MessageHead, frozen=True, gc=False):  # type: ignore[misc]  # msgspec lets a frozen Struct extend an unfrozen one; mypy applies dataclass rules
    """A message head of strings or absent values only: hashable, so equal heads are one object.

    Heads repeat (a few roles, providers and models); one object each keeps a
    large session's memory down (``share_head``). A head holding anything else
    (a number, a list: 1 and true hash alike, a list cannot be a key) is not
    this type and is never shared.
    """

    role: str | None = None
    provider: str | None | msgspec.UnsetType = msgspec.UNSET
    model: str | None | msgspec.UnsetType = msgspec.UNSET


class _StrictEnvelope(msgspec.Struct, gc=False):
    """The fast paths' envelope: what ``_Envelope`` reads, refusing a head that holds anything but strings.

    A line it refuses takes ``parse_line``, which reads it as before; so a line
    it accepts gives the entry ``parse_line`` would, with fewer steps in Python.
    Both the per-line fast path and the stretches of chunked.py decode it.
    """

    type: str | None = None
    id: str | None = None
    parentId: str | None = None
    timestamp: str | None = None
    message: SharedHead | None = None


_envelope_decoder = msgspec.json.Decoder(_Envelope)
_loose_envelope_decoder = msgspec.json.Decoder(_LooseEnvelope)
_strict_envelope_decoder = msgspec.json.Decoder(_StrictEnvelope)


def parse_line(raw: bytes | memoryview) -> Entry | None:
    """The entry of one line, holding ``raw`` as its bytes; None when the line is not a JSON object."""
    try:
        env = decode_lenient(_envelope_decoder, raw)
    except msgspec.ValidationError:
        return _parse_loose_line(raw)
    except msgspec.DecodeError:
        return None
    line = raw if isinstance(raw, bytes) else None
    head = env.message
    if head is not None:
        key = (head.role, head.provider, head.model)
        if all(value is None or value is msgspec.UNSET or type(value) is str for value in key):
            head = share_head(SharedHead(*key))
    kind = env.type
    return Entry(_types.get(kind, kind) if kind else "", env.id, env.parentId, env.timestamp, line, head)


# Shared values of the envelopes (never changed once read: MessageHead is not written to). Each head is
# kept once (None for a line without one); past this many, new ones are no longer kept (chunked.py checks
# a stretch at a time, so it may go past by one stretch's new heads).
shared_heads: dict[SharedHead | None, SharedHead | None] = {None: None}
MAX_SHARED_HEADS = 4096


def share_head(head: SharedHead) -> SharedHead:
    """The one object of the heads equal to ``head``."""
    shared = shared_heads.get(head)
    if shared is None:
        if len(shared_heads) < MAX_SHARED_HEADS:
            shared_heads[head] = head
        return head
    return shared


# One string object per known type (and the header's), shared by every entry of that type: a large file holds
# hundreds of thousands of them.
_types: dict[str | None, str] = {name: name for name in (*sorted(KNOWN_ENTRY_TYPES), "session")}
_kinds: dict[str | None, str] = {**_types, None: "", "": ""}  # chunked.py's: an absent or empty type is ""


def _parse_loose_line(raw: bytes | memoryview) -> Entry | None:
    try:
        env = decode_lenient(_loose_envelope_decoder, raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return Entry(
        type=env.type if isinstance(env.type, str) else "",
        id=env.id if isinstance(env.id, str) else None,
        parent_id=env.parentId if isinstance(env.parentId, str) else None,
        timestamp=env.timestamp if isinstance(env.timestamp, str) else None,
        line=raw if isinstance(raw, bytes) else None,
    )
