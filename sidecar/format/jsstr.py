"""String rules pi applies with JavaScript's built-ins, written for Python.

pi reads and writes session files from JavaScript, so where it trims or
sanitizes a string, the character sets are JavaScript's, not Python's:
``str.strip()`` also strips U+001C..U+001F and U+0085, which JavaScript keeps,
and keeps U+FEFF, which JavaScript strips. Using Python's rule where pi uses
JavaScript's makes the two read different names from the same file.
"""

from __future__ import annotations

import re

# ECMAScript WhiteSpace and LineTerminator, the set String.prototype.trim removes:
# TAB, VT, FF, SP, NBSP, ZWNBSP (BOM), the Zs category, LF, CR, LS, PS.
JS_WHITESPACE = (
    "\t\v\f \u00a0\ufeff"
    "\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
    "\n\r\u2028\u2029"
)

_LINE_BREAKS = re.compile(r"[\r\n]+")


def js_trim(text: str) -> str:
    """``text.trim()`` as JavaScript does it."""
    return text.strip(JS_WHITESPACE)


def session_name(text: str) -> str:
    """A name as pi's ``appendSessionInfo`` stores it: runs of CR/LF become one space, then trimmed."""
    return js_trim(_LINE_BREAKS.sub(" ", text))


# A lone surrogate (a JavaScript string cut inside an emoji keeps one) is no character UTF-8 can
# hold, so neither SQLite's nor PostgreSQL's text columns take a str holding one. Stored, each is
# this escape (a noncharacter no one types) and a character of plane 16's private use area standing
# for it, and the escape itself is doubled: ``from_stored_text`` gives back the very str, and a
# query stored the same way finds it as a substring. Two halves next to each other are the one
# character they make, as JavaScript reads them.
_STORE_ESCAPE = "\U0010ffff"
_SURROGATE_BASE = 0x100000
_TO_STORE = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff\U0010ffff]")
_FROM_STORE = re.compile("\U0010ffff(.)", re.DOTALL)


def _to_store(found: re.Match[str]) -> str:
    text = found.group(0)
    if len(text) == 2:
        return chr(0x10000 + ((ord(text[0]) - 0xD800) << 10) + (ord(text[1]) - 0xDC00))
    if text == _STORE_ESCAPE:
        return _STORE_ESCAPE * 2
    return _STORE_ESCAPE + chr(_SURROGATE_BASE + ord(text) - 0xD800)


def _from_store(found: re.Match[str]) -> str:
    code = ord(found.group(1))
    return _STORE_ESCAPE if code == 0x10FFFF else chr(0xD800 + code - _SURROGATE_BASE)


def stored_text(text: str) -> str:
    """``text`` as a database text column can hold it (itself, unless it holds a lone surrogate)."""
    if text.isascii() or _TO_STORE.search(text) is None:
        return text
    return _TO_STORE.sub(_to_store, text)


def from_stored_text(text: str) -> str:
    """The str ``stored_text`` was given."""
    if text.isascii() or _STORE_ESCAPE not in text:
        return text
    return _FROM_STORE.sub(_from_store, text)


_LONE_OR_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")


def node_utf8(text: str) -> bytes:
    """``text`` as UTF-8 the way Node writes a string to a file: a lone surrogate as U+FFFD, two halves next
    to each other as the character they make (only text that holds a surrogate takes the slow path)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_OR_PAIR.sub(_node_character, text).encode("utf-8")


def _node_character(found: re.Match[str]) -> str:
    text = found.group(0)
    if len(text) == 2:
        return chr(0x10000 + ((ord(text[0]) - 0xD800) << 10) + (ord(text[1]) - 0xDC00))
    return "\ufffd"
