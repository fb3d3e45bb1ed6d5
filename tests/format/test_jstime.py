"""js_time's shortcut for toISOString's own shape reads what the full parse reads, every time."""

from datetime import UTC, datetime

import pytest

from sidecar.format import jstime
from sidecar.format.jstime import js_time


@pytest.mark.parametrize(
    "stamp",
    [
        "2026-01-02T03:04:05.678Z",
        "2026-01-02T03:04:05.000Z",
        "1969-12-31T23:59:59.999Z",  # before the epoch
        "2024-02-29T23:59:59.001Z",  # a leap day
        "2026-02-30T00:00:00.000Z",  # no such day: NaN in JS, None here
        "2026-01-02T03:04:60.123Z",  # no such second
        "2026-01-02T03:04:05.6a8Z",  # not digits
        "2026-01-02T03:04:05.+12Z",
        "2026-01-02T03:04:05.١٢٣Z",  # digits, but not ASCII ones
        "2026-01-02 03:04:05.678Z",
        "2026-01-02T03:04:05.678+",
        "2026-01-02T03:04:05.67Z",  # other shapes take the full parse
        "2026-01-02T03:04:05.678+02:00",
        "x" * 24,
    ],
)
def test_the_shortcut_agrees_with_the_full_parse(stamp: str) -> None:
    # Twice: once filling the cached second (or not), once reading from it.
    assert js_time(stamp) == jstime._parsed(stamp)
    assert js_time(stamp) == jstime._parsed(stamp)


def test_stamps_of_one_second_and_the_next():
    base = datetime(2026, 11, 25, 16, 50, 7, tzinfo=UTC)
    base_ms = int(base.timestamp()) * 1000
    assert js_time("2026-11-25T16:50:07.001Z") == base_ms + 1
    assert js_time("2026-11-25T16:50:07.999Z") == base_ms + 999
    assert js_time("2026-11-25T16:50:08.000Z") == base_ms + 1000  # a new second is parsed, not reused
    assert js_time("2026-11-25T16:50:07.500Z") == base_ms + 500
