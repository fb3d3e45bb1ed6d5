"""Array parameters packed by us in PostgreSQL's binary array format, for a batch append.

psycopg dumps a list element by element in Python (about 1 ms of CPU for a
batch of 100 lines, measured); a batch's arrays are built here with one join
each, and a dumper hands the bytes over as they are. One statement then
carries a whole batch (one round trip), where COPY needs seven (BEGIN, the
fenced UPDATE, two COPYs of two exchanges each, COMMIT).

The format (PostgreSQL's array_send): dimensions (1), a has-nulls flag, the
element type's oid, then the length and lower bound of the one dimension, then
each element as its byte length (-1 for NULL) and its bytes; an empty array
has no dimension.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence

from psycopg import adapters
from psycopg.adapt import Dumper
from psycopg.pq import Format

_BYTEA, _TEXT, _INT8 = 17, 25, 20
_LENGTH = struct.Struct("!i")
_NULL = _LENGTH.pack(-1)
_INT8_ELEMENT = struct.Struct("!iq")


class PackedArray:
    """One array, its binary form ready (``data``); made by the functions below."""

    __slots__ = ("data",)
    oid = 0

    def __init__(self, data: bytes) -> None:
        self.data = data


class BytesArray(PackedArray):
    __slots__ = ()
    oid = 1001  # bytea[]


class TextArray(PackedArray):
    __slots__ = ()
    oid = 1009  # text[]


class Int8Array(PackedArray):
    __slots__ = ()
    oid = 1016  # bigint[]


def _header(element_oid: int, count: int, has_null: bool) -> bytes:
    if count == 0:
        return struct.pack("!iiI", 0, 0, element_oid)
    return struct.pack("!iiIii", 1, int(has_null), element_oid, count, 1)


def _elements(values: Iterable[bytes | None]) -> tuple[list[bytes], int, bool]:
    parts: list[bytes] = []
    count, has_null = 0, False
    pack = _LENGTH.pack
    for value in values:
        count += 1
        if value is None:
            parts.append(_NULL)
            has_null = True
        else:
            parts.append(pack(len(value)))
            parts.append(value)
    return parts, count, has_null


def bytea_array(values: Sequence[bytes]) -> BytesArray:
    parts, count, has_null = _elements(values)
    return BytesArray(_header(_BYTEA, count, has_null) + b"".join(parts))


def text_array(values: Iterable[str | None]) -> TextArray:
    parts, count, has_null = _elements(None if value is None else value.encode() for value in values)
    return TextArray(_header(_TEXT, count, has_null) + b"".join(parts))


def int8_range(start: int, stop: int) -> Int8Array:
    """The bigints start, start + 1, ..., stop - 1 (a batch's sequence numbers)."""
    return int8_array(range(start, stop))


def int8_array(values: Sequence[int]) -> Int8Array:
    pack = _INT8_ELEMENT.pack
    parts = b"".join([pack(8, value) for value in values])
    return Int8Array(_header(_INT8, len(values), False) + parts)


def _dumper(cls: type[PackedArray]) -> type[Dumper]:
    class PackedDumper(Dumper):
        format = Format.BINARY
        oid = cls.oid

        def dump(self, obj: PackedArray) -> bytes:
            return obj.data

    PackedDumper.__name__ = f"{cls.__name__}Dumper"
    return PackedDumper


for _cls in (BytesArray, TextArray, Int8Array):
    adapters.register_dumper(_cls, _dumper(_cls))
