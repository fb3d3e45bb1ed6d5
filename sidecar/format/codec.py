"""The JSON codec of session lines: compact output as JSON.stringify writes it, and input as JSON.parse reads it.

msgspec does the work; the few lines it refuses (a lone UTF-16 surrogate
escape, which JSON.parse accepts) take a slower path that keeps them.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

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


def decode_lenient(decoder: msgspec.json.Decoder, raw: bytes | memoryview) -> Any:
    """``decoder.decode(raw)``, also for a line holding lone surrogate escapes (read as U+FFFD)."""
    try:
        return decoder.decode(raw)
    except msgspec.DecodeError:
        raw = bytes(raw)
        if not _may_hold_lone_surrogate(raw):
            raise
    return decoder.decode(_replace_lone_surrogates(raw))


def encode(obj: Any) -> bytes:
    """Compact JSON, as ``JSON.stringify`` writes it (no spaces, UTF-8, same escapes)."""
    try:
        return _encoder.encode(obj)
    except UnicodeEncodeError:
        # A lone surrogate: escape it as JSON.stringify does ("\ud83d").
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_raw_value)
        text = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
        return text.encode("utf-8")


def _raw_value(value: Any) -> Any:
    """What json.dumps writes for a ``msgspec.Raw`` (JSON text kept as it came): its value, as JSON.parse
    reads it (lone surrogate escapes kept)."""
    if isinstance(value, msgspec.Raw):
        return json.loads(bytes(value))
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


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
