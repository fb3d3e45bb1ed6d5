"""Time as pi's JavaScript reads it from an entry's ISO 8601 timestamp."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def js_time(timestamp: Any) -> int | None:
    """``new Date(iso).getTime()``: epoch milliseconds, None where JS would give NaN."""
    if not isinstance(timestamp, str):
        return None
    try:
        moment = datetime.fromisoformat(timestamp)
    except ValueError:
        return None
    if moment.tzinfo is None:
        # pi always writes toISOString() (UTC, "Z"); read a stamp without offset as UTC.
        moment = moment.replace(tzinfo=timezone.utc)
    return (moment - _EPOCH) // timedelta(milliseconds=1)
