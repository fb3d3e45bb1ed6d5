"""iso_now writes what JavaScript's toISOString writes, for every millisecond and across seconds."""

from __future__ import annotations

from datetime import UTC, datetime

from sidecar.store import ids as layout


def reference(ms: int) -> str:
    moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def test_every_millisecond_of_a_few_seconds_is_written_as_toisostring_writes_it(monkeypatch):
    starts = [0, 1_700_000_000_000, 1_764_100_799_000, 4_102_444_799_000]  # the epoch, a day's last second, 2099
    for start in starts:
        for ms in list(range(start, start + 1000)) + [start + 1000, start + 1001, start - 1 if start else 1]:
            monkeypatch.setattr(layout.time, "time_ns", lambda ms=ms: ms * 1_000_000 + 999_999)
            assert layout.iso_now() == reference(ms)
