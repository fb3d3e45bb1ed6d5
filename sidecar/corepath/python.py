"""The line scanner's interface and its pure-Python implementation, the reference the compiled one answers to.

A scan reads a stretch of whole lines for the fields every entry's place in
the tree needs, in one msgspec decode of the stretch; it gives them as
columns, or None when a line there must be read on its own (a damaged, blank
or indented line, a field of an odd type: the caller reads those line by
line). Why one decode of many lines gives exactly what each line alone would
is told in sidecar/format/chunked.py.
"""

from __future__ import annotations

import mmap
from operator import attrgetter
from typing import Any, NamedTuple, Protocol

import msgspec


class Columns(NamedTuple):
    """The lines of a stretch, one item per line in each column."""

    types: list[str | None]
    ids: list[str | None]
    parent_ids: list[str | None]
    timestamps: list[str | None]
    # Each a ``head_type`` (or None for a line without a message): equal heads may be one object.
    heads: list[Any]
    # Where each line starts in the buffer, and its length without the newline.
    starts: list[int]
    lengths: list[int]


class LineScanner(Protocol):
    def scan(self, buffer: bytes | mmap.mmap, start: int, stop: int) -> Columns | None:
        """The lines of ``buffer[start:stop]`` (``stop`` is where a newline is), or None."""
        ...


_OPEN, _CLOSE = ord("{"), ord("}")
_type_of, _id_of, _parent_of, _timestamp_of, _head_of = (
    attrgetter(name) for name in ("type", "id", "parentId", "timestamp", "message")
)


class PythonLineScanner:
    """msgspec's ``decode_lines`` of the strict envelope, heads as ``head_type``.

    ``head_type`` is a msgspec Struct of ``role``, ``provider`` and ``model``
    whose fields say what a head may hold (the compiled scanner holds them to
    strings or null, absent provider and model UNSET).
    """

    def __init__(self, head_type: type[msgspec.Struct]) -> None:
        fields = [(name, str | None, None) for name in ("type", "id", "parentId", "timestamp")]
        envelope = msgspec.defstruct("StrictEnvelope", [*fields, ("message", head_type | None, None)], gc=False)
        self._decode_lines = msgspec.json.Decoder(envelope).decode_lines

    def scan(self, buffer: bytes | mmap.mmap, start: int, stop: int) -> Columns | None:
        with memoryview(buffer) as whole, whole[start:stop] as segment:
            try:
                envelopes = self._decode_lines(segment)
            except msgspec.MsgspecError:
                return None
        starts: list[int] = []
        lengths: list[int] = []
        add_start, add_length = starts.append, lengths.append
        find = buffer.find
        at = start
        while True:
            end = find(b"\n", at, stop)
            if end == -1:
                end = stop
            if buffer[at] != _OPEN or buffer[end - 1] != _CLOSE:  # a blank line fails too: its first byte is "\n"
                return None
            add_start(at)
            add_length(end - at)
            if end == stop:
                break
            at = end + 1
        if len(envelopes) != len(starts):
            return None
        return Columns(
            list(map(_type_of, envelopes)),
            list(map(_id_of, envelopes)),
            list(map(_parent_of, envelopes)),
            list(map(_timestamp_of, envelopes)),
            list(map(_head_of, envelopes)),
            starts,
            lengths,
        )
