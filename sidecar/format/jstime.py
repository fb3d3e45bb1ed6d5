"""Time as pi's JavaScript reads it from an entry's ISO 8601 timestamp."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


# The second of the last stamp read in toISOString's own shape ("2026-01-02T03:04:05.678Z") and its
# epoch milliseconds: the stamps of a run of appends share it, and parsing a date costs more than
# the rest of folding a line into the listing.
_last_second: tuple[str, int] = ("", 0)


def js_time(timestamp: object) -> int | None:
    """``new Date(iso).getTime()``: epoch milliseconds, None where JS would give NaN."""
    if not isinstance(timestamp, str):
        return None
    if len(timestamp) == 24 and timestamp[19] == "." and timestamp[23] == "Z":
        millis = timestamp[20:23]
        if millis.isdigit() and millis.isascii():
            second = timestamp[:19]
            global _last_second
            cached = _last_second
            if cached[0] != second:
                whole = _parsed(second + ".000Z")
                if whole is None:
                    return None
                cached = _last_second = (second, whole)
            return cached[1] + int(millis)
    return _parsed(timestamp)


def _parsed(timestamp: str) -> int | None:
    try:
        moment = datetime.fromisoformat(timestamp)
    except ValueError:
        return None
    if moment.tzinfo is None:
        # pi always writes toISOString() (UTC, "Z"); read a stamp without offset as UTC.
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // timedelta(milliseconds=1)
