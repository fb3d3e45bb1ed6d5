"""The JSON codec of session lines and of the wire: compact output as JSON.stringify writes it, and
input as JSON.parse reads it.

msgspec does the work. What it refuses is a lone UTF-16 surrogate: JSON.stringify
writes a string cut inside an emoji ("😀".slice(0, 1)) as the escape "\\ud83d",
JSON.parse reads it back, and pi writes such strings into its session files.
msgspec's decoder refuses the escape and its encoder refuses a str holding the
code point, so both directions take a slower path only when msgspec has
refused: the common path costs nothing more.

Read, a lone surrogate escape becomes that code point in the Python str (as
JSON.parse keeps it in the JavaScript string). Written, a lone surrogate is the
lowercase escape JSON.stringify writes, and a high surrogate followed by a low
one (two halves joined again) is the character they make, written as UTF-8 as
JSON.stringify writes any character: a line keeps the bytes pi writes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import msgspec

_any_decoder = msgspec.json.Decoder()
_object_decoder = msgspec.json.Decoder(dict[str, Any])
_encoder = msgspec.json.Encoder()


# Scanning left to right, an escaped backslash is consumed first, so "\\ud83d"
# (a literal backslash, then text) is never mistaken for an escape; a pair of
# escapes (high then low) is one character, which msgspec reads.
_ESCAPES = re.compile(
    rb"(\\\\)"
    rb"|(\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    rb"|\\u[dD][89a-fA-F][0-9a-fA-F]{2}"
)
# A surrogate pair (two halves next to each other, as JavaScript joins them) or a lone half.
_SURROGATES = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")


def _replace_lone_surrogates(raw: bytes) -> bytes:
    """``raw`` with every lone surrogate escape turned into U+FFFD (for reading metadata only)."""
    return _ESCAPES.sub(lambda m: m.group(0) if m.lastindex else rb"\ufffd", raw)


def may_hold_lone_surrogate(raw: bytes) -> bool:
    """Whether JSON text ``raw`` holds a lone surrogate escape (cheap when it holds no ``\\u`` at all)."""
    return b"\\u" in raw and _replace_lone_surrogates(raw) != raw


def decode_lenient(decoder: msgspec.json.Decoder, raw: bytes | memoryview) -> Any:
    """``decoder.decode(raw)``, also for a line holding lone surrogate escapes (read as U+FFFD)."""
    try:
        return decoder.decode(raw)
    except msgspec.DecodeError:
        raw = bytes(raw)
        if not may_hold_lone_surrogate(raw):
            raise
    return decoder.decode(_replace_lone_surrogates(raw))


def parse(raw: bytes | memoryview, decode: Callable[[bytes | memoryview], Any] = _any_decoder.decode) -> Any:
    """JSON text as JSON.parse reads it: ``decode(raw)``, and where msgspec refuses a lone surrogate
    escape, the value with the surrogate kept in its str.

    The fallback is Python's json, told to refuse what JSON.parse refuses (NaN, Infinity); its values
    are plain (dicts, lists, str, numbers), whatever ``decode`` would have made. When the text is
    wrong for another reason too, msgspec's error is raised, as it would have been.
    """
    try:
        return decode(raw)
    except msgspec.DecodeError as error:
        raw = bytes(raw)
        if not may_hold_lone_surrogate(raw):
            raise
        try:
            return json.loads(raw.decode("utf-8"), parse_constant=_refused_constant)
        except ValueError:  # (UnicodeDecodeError and json's JSONDecodeError are ValueErrors)
            raise error from None


def parse_as(raw: bytes | memoryview, decoder: msgspec.json.Decoder, kind: object) -> Any:
    """``decoder.decode(raw)`` (a decoder of ``kind``, whose fields hold no ``msgspec.Raw``), and where msgspec
    refuses a lone surrogate escape, the value read as JSON.parse reads it converted to ``kind``."""
    try:
        return decoder.decode(raw)
    except msgspec.DecodeError:
        if not may_hold_lone_surrogate(bytes(raw)):
            raise
    return msgspec.convert(parse(raw), kind)


def _refused_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def encode(obj: object) -> bytes:
    """Compact JSON, as ``JSON.stringify`` writes it (no spaces, UTF-8, same escapes)."""
    try:
        return _encoder.encode(obj)
    except UnicodeEncodeError:
        return encode_escaping(_encoder.encode, obj)


def encode_joined(objs: list[Any]) -> bytes | None:
    """``encode`` of each of ``objs``, each followed by a newline, in one call (a line holds no newline: JSON
    escapes it in a string); None when one holds a lone surrogate (then ``encode`` each, which writes it)."""
    try:
        return _encoder.encode_lines(objs)
    except UnicodeEncodeError:
        return None


def encode_js(encode: Callable[[object], bytes], obj: object) -> bytes:
    """``encode(obj)`` (a msgspec encoder's), with any lone surrogate written as JSON.stringify writes it."""
    try:
        return encode(obj)
    except UnicodeEncodeError:
        return encode_escaping(encode, obj)


class _MarkerTaken(Exception):
    """The marker occurs in the value itself: another one is needed."""


def encode_escaping(encode: Callable[[object], bytes], obj: object) -> bytes:
    """What ``encode`` writes of ``obj``, its str holding surrogates (which msgspec refuses) written
    as JSON.stringify writes them: a lone one as its lowercase escape, a pair as its character.

    Each lone surrogate is replaced by a marker and its four hex digits, the value encoded by the
    same encoder (so every other byte is what the fast path writes), and each marker in the output
    turned into ``\\u``. The marker is made of Unicode noncharacters and never occurs in the value
    (a value holding it gets a longer one), so what is replaced is only what was put there.
    """
    plain = msgspec.to_builtins(obj, builtin_types=(msgspec.Raw,))  # (Structs as the encoder writes them)
    marker = "\ufdd0"
    while True:
        try:
            marked = _marked(plain, marker, marker.encode("utf-8"))
        except _MarkerTaken:
            marker += "\ufdd1"
            continue
        break
    out = encode(marked)
    return re.sub(re.escape(marker.encode("utf-8")) + rb"([0-9a-f]{4})", rb"\\u\1", out)


def _marked(value: Any, marker: str, marker_bytes: bytes) -> Any:
    """``value`` with each lone surrogate of its str (keys too) as ``marker`` and its hex, each pair joined."""
    kind = type(value)
    if kind is str:
        if marker in value:
            raise _MarkerTaken
        if _SURROGATES.search(value) is None:
            return value
        return _SURROGATES.sub(lambda m: _joined(m.group(0), marker), value)
    if kind is dict:
        return {_marked(k, marker, marker_bytes): _marked(v, marker, marker_bytes) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [_marked(item, marker, marker_bytes) for item in value]
    if kind is msgspec.Raw:
        if marker_bytes in bytes(value):
            raise _MarkerTaken
    return value


def _joined(found: str, marker: str) -> str:
    if len(found) == 2:  # a high then a low surrogate: one character, as JavaScript reads the two halves
        return chr(0x10000 + ((ord(found[0]) - 0xD800) << 10) + (ord(found[1]) - 0xDC00))
    return f"{marker}{ord(found):04x}"


def decode_object(raw: bytes) -> dict[str, Any]:
    """The whole line as a dict, exactly as JSON.parse reads it (lone surrogates kept)."""
    obj = parse(raw, _object_decoder.decode)
    if not isinstance(obj, dict):
        raise msgspec.DecodeError("expected an object")
    return obj


# Readers made of many typed decoders (the Codex and Claude Code imports) read a source line holding a
# lone surrogate escape by standing each in for two characters msgspec reads, and the lines they make
# are restored at the end (store/encoded.py): each lone ``\udXXX`` becomes U+10FFFF (a noncharacter)
# then the private-use character U+100000 + (XXX - 0xD800), both written as escapes, so the line
# decodes; written out by msgspec, the two are raw UTF-8 that ``restore_lone_surrogates`` turns back
# into the escape. (A text holding U+10FFFF followed by one of those 2,048 private-use characters
# would be read as a lone surrogate: neither is text anyone writes.)
_STAND_IN = b"\xf4\x8f\xbf\xbf"  # U+10FFFF as UTF-8
_STOOD_IN = re.compile(rb"\xf4\x8f\xbf\xbf\xf4\x80([\x80-\x9f])([\x80-\xbf])")


def _stand_in(found: re.Match[bytes]) -> bytes:
    if found.lastindex:  # an escaped backslash, or a pair: kept
        return found.group(0)
    offset = int(found.group(0)[2:], 16) - 0xD800
    return b"\\udbff\\udfff\\u%04x\\u%04x" % (0xDBC0 + (offset >> 10), 0xDC00 + (offset & 0x3FF))


def stand_in_lone_surrogates(raw: bytes) -> bytes:
    """``raw`` with each lone surrogate escape stood in for (see above): JSON text msgspec reads."""
    return _ESCAPES.sub(_stand_in, raw)


def restore_lone_surrogates(line: bytes) -> bytes:
    """A line made from stood-in text, each stand-in written back as JSON.stringify's lowercase escape."""
    if _STAND_IN not in line:
        return line
    return _STOOD_IN.sub(lambda m: b"\\u%04x" % (0xD800 + ((m.group(1)[0] & 0x3F) << 6) + (m.group(2)[0] & 0x3F)), line)
