"""Session ids, the clock entries are stamped with, and the path rule every backend keeps.

Backend-neutral: a new session's id (a UUIDv7), the check of an id a client
sends, JavaScript's ``toISOString`` of now, and whether a path lies below a root.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..errors import InvalidSessionId
from ..format.ids import valid_session_id

__all__ = ["check_session_id", "inside", "iso_now", "new_session_id", "valid_session_id"]

# The formatted second of the last ``iso_now``: formatting a date costs more
# than the rest of preparing a small entry, and a batch shares its second.
_second: tuple[int, str] = (-1, "")
_MILLIS = [f"{milli:03d}Z" for milli in range(1000)]  # (an index costs less than formatting the number)


# The millisecond of the last ``iso_now`` and its text: the entries of a large batch are stamped a few
# hundred to a millisecond, and giving the same string back costs a third of writing it again.
_stamp: tuple[int, str] = (-1, "")


def iso_now() -> str:
    """UTC time as JavaScript's ``toISOString`` writes it (milliseconds, Z)."""
    global _second, _stamp
    millis = time.time_ns() // 1_000_000
    stamp = _stamp
    if stamp[0] == millis:
        return stamp[1]
    second, milli = divmod(millis, 1000)
    cached = _second
    if cached[0] != second:
        cached = _second = (second, time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(second)))
    text = cached[1] + _MILLIS[milli]
    _stamp = (millis, text)
    return text


def new_session_id() -> str:
    """A UUIDv7: time-ordered, so ids sort by creation."""
    millis = time.time_ns() // 1_000_000
    # os.urandom is what secrets.token_bytes returns; importing secrets (hmac, hashlib and OpenSSL's
    # libcrypto) cost every start ~1.5 ms for it.
    rand = int.from_bytes(os.urandom(10), "big")
    value = (millis & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76  # version
    value |= (rand >> 68) << 64 & (0xFFF << 64)  # rand_a, 12 bits
    value |= 0b10 << 62  # variant
    value |= rand & ((1 << 62) - 1)  # rand_b
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def check_session_id(session_id: object) -> str:
    if not isinstance(session_id, str) or not valid_session_id(session_id):
        raise InvalidSessionId(
            "session ids are 1-64 characters: letters and digits at both ends, '.', '_' or '-' inside",
            sessionId=session_id if isinstance(session_id, str) else None,
        )
    return session_id


def inside(root: Path, path: Path) -> bool:
    """True when ``path``, symlinks resolved, is ``root`` or below it."""
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True
