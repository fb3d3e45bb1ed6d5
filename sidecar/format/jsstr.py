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
