"""The id of a message that cannot be decoded, so that its error still answers the request that sent it.

A body with invalid UTF-8 in a string, broken JSON, or too large to read is
still, most often, a JSON object whose ``"id"`` member is plain ASCII near its
start. ``recover_id`` walks the object's top-level members from the start of
the bytes without decoding them: each key is read, each value skipped
(strings with their escapes, nested arrays and objects counted through), until
the key ``"id"``. An ``"id"`` inside a string or a nested object (an entry's
id, a tool's output) is therefore never taken for the request's. The walk
stops at the first byte that is not where JSON would have it, or at the end of
what it was given: then there is no id. Only a string or an integer id is
recovered, whole (a number cut by the end of the bytes is not), since those are
the ids JSON-RPC allows and this server answers.

The walk costs a regex step per member or nested token, so callers give it a
bounded head (``SCAN_BYTES``). An oversized body's id may come last, after
its params: ``recover_id`` then also looks at the body's very end for a final
``,"id": ...}``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import msgspec

# How much of a body the walk reads: a request's id comes before or after its params,
# and a head this size holds every envelope member placed before large params.
SCAN_BYTES = 64 * 1024
# How much of an oversized body's end is kept for a trailing id.
TAIL_BYTES = 256

_WHITESPACE = re.compile(rb"[ \t\r\n]*")
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_SCALAR = re.compile(rb"[-+.0-9A-Za-z]+")  # numbers, true, false, null
_INTEGER = re.compile(rb"-?(?:0|[1-9][0-9]{0,99})")  # (an id of more digits is no id a client counts)
_NESTED_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)
# An object's last member, where nothing nested closes after it: `..., "id": 7 }` at the very end.
_TRAILING_ID = re.compile(
    rb',[ \t\r\n]*"id"[ \t\r\n]*:[ \t\r\n]*(-?(?:0|[1-9][0-9]{0,99})|"[^"\\]*(?:\\.[^"\\]*)*")[ \t\r\n]*\}[ \t\r\n]*\Z'
)
_decode_string = msgspec.json.Decoder(str).decode


def recover_id(head: bytes, tail: bytes = b"") -> int | str | None:
    """The string or integer id of the JSON object ``head`` begins (its top level only); else the
    final ``"id"`` member of ``tail`` (the end of an oversized body); else None."""
    for key, at in _members(head[:SCAN_BYTES]):
        if key == b'"id"':
            return _id_at(head[:SCAN_BYTES], at)
    match = _TRAILING_ID.search(tail[-TAIL_BYTES:]) if tail else None
    return _id_at(match.group(1) + b"}", 0) if match else None


def names_jsonrpc(data: bytes) -> bool:
    """``data`` starts as a JSON-RPC message does: an object with a top-level ``"jsonrpc"`` member."""
    return any(key == b'"jsonrpc"' for key, _ in _members(data[:SCAN_BYTES]))


def _members(body: bytes) -> Iterator[tuple[bytes, int]]:
    """(the raw key, where its value starts) of each top-level member of the object ``body`` starts with,
    in order, as far as the bytes are JSON."""
    at = _skip_space(body, 0)
    if body[at : at + 1] != b"{":
        return
    at += 1
    while True:
        key = _STRING.match(body, _skip_space(body, at))
        if key is None:
            return
        at = _skip_space(body, key.end())
        if body[at : at + 1] != b":":
            return
        at = _skip_space(body, at + 1)
        yield key.group(), at
        end = _skip_value(body, at)
        if end is None:
            return
        at = _skip_space(body, end)
        if body[at : at + 1] != b",":
            return
        at += 1


def _id_at(body: bytes, at: int) -> int | str | None:
    """The id whose value starts at ``at``, if it is a whole string or integer followed by ``,`` or ``}``."""
    value = _STRING.match(body, at) or _INTEGER.match(body, at)
    if value is None or body[_skip_space(body, value.end()) :][:1] not in (b",", b"}"):
        return None
    raw = value.group()
    if raw.startswith(b'"'):
        try:
            return _decode_string(raw)  # (escapes undone; invalid UTF-8 or a lone surrogate: no id)
        except (msgspec.DecodeError, UnicodeDecodeError):
            return None
    return int(raw)


def _skip_value(body: bytes, at: int) -> int | None:
    """Where the JSON value starting at ``at`` ends; None if it does not end within ``body``."""
    first = body[at : at + 1]
    if first == b'"':
        match = _STRING.match(body, at)
        return match.end() if match else None
    if first in (b"{", b"["):
        depth = 0
        for token in _NESTED_TOKEN.finditer(body, at):
            bracket = token.group()
            if bracket in (b"{", b"["):
                depth += 1
            elif bracket in (b"}", b"]"):
                depth -= 1
                if depth == 0:
                    return token.end()
        return None
    match = _SCALAR.match(body, at)
    return match.end() if match else None


def _skip_space(body: bytes, at: int) -> int:
    return _WHITESPACE.match(body, at).end()  # type: ignore[union-attr]  # it matches the empty string: never None
