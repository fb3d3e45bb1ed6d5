"""The importers' timestamp reading: the minute kept from the line before never leaks into the next one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sidecar.importers.common import iso_of_ms, ms_of_iso


def _reference(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def test_consecutive_stamps_across_seconds_minutes_hours_days_and_years():
    start = datetime(2025, 12, 31, 23, 58, 57, 250000, tzinfo=UTC)
    # steps that stay in a minute, cross one, cross an hour, a day and a year, and come back to an earlier minute
    stamps = [start + timedelta(seconds=s) for s in (0, 1, 2, 3, 62, 63, 123, 3600, 86400, 86401, 0.5, 61)]
    texts = [f"{s:%Y-%m-%dT%H:%M:%S}.{s.microsecond // 1000:03d}Z" for s in stamps]
    assert [ms_of_iso(t) for t in texts] == [_reference(t) for t in texts]
    assert [iso_of_ms(ms_of_iso(t)) for t in texts] == texts


def test_a_bad_stamp_falls_back_and_leaves_the_next_one_right():
    good = "2026-01-02T03:04:05.123Z"
    assert ms_of_iso(good) == _reference(good)
    assert ms_of_iso("2026-01-02T03:0x:05.123Z", -1) == -1  # same shape, a minute that is no number
    assert ms_of_iso("2026-01-02T03:04:05.1x3Z", -2) == -2  # the kept minute, milliseconds that are no number
    assert ms_of_iso("2026-13-02T03:04:05.123Z", -3) == -3  # no such month
    assert ms_of_iso("2026-01-02T03:04:59.999Z") == _reference("2026-01-02T03:04:59.999Z")
    assert ms_of_iso("2026-01-02T03:05:00.000Z") == _reference("2026-01-02T03:05:00.000Z")
    assert ms_of_iso(None, 7) == 7 and ms_of_iso("", 8) == 8
    assert ms_of_iso("2026-01-02T03:04:05Z") == _reference("2026-01-02T03:04:05Z")  # not pi's shape: parsed
