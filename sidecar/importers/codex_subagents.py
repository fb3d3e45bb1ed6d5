"""Where a Codex rollout's subagents are: rollouts of the same sessions tree whose first line names it as
their parent thread, looked for in the day folders the parent ran on."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec

from .common import ms_of_iso, read_source


def children(path: Path, thread: str) -> list[tuple[Path, str, dict[str, object]]]:
    """Rollouts of subagents this thread spawned: same sessions tree, parent_thread_id == thread."""
    found = []
    for candidate in _rollouts_near(path):
        if candidate == path:
            continue
        try:
            with open(candidate, "rb") as handle:
                first = json.loads(handle.readline() or b"{}")
        except (OSError, ValueError):
            continue
        payload = first.get("payload") if isinstance(first, dict) else None
        if isinstance(payload, dict) and payload.get("parent_thread_id") == thread:
            found.append((candidate, str(payload.get("id")), payload))
    return found


def _rollouts_near(path: Path) -> list[Path]:
    """The rollouts a subagent of ``path`` can be among, sorted: Codex files each rollout under the day it
    began (``sessions/YYYY/MM/DD``, local time), and a subagent begins while its parent runs, so only the
    day folders from the parent's own to the day of its last line are read (a day more on either side
    for the time zone), not the years of rollouts a sessions folder gathers. A rollout outside that
    layout, or whose last line has no time, has the whole tree below its ``sessions`` folder searched."""
    root = next((p for p in path.parents if p.name == "sessions"), None)
    first_day = _day_of_folder(path.parent) if root is not None and path.parent.parent.parent.parent == root else None
    last_ms = _last_line_ms(path) if first_day is not None else None
    if first_day is None or last_ms is None:
        return sorted((root or path.parent).rglob("rollout-*.jsonl"))
    day = first_day - timedelta(days=1)
    last_day = max(datetime.fromtimestamp(last_ms / 1000, UTC).date(), first_day) + timedelta(days=1)
    found: list[Path] = []
    while day <= last_day:
        folder = root / f"{day.year:04d}" / f"{day.month:02d}" / f"{day.day:02d}"  # type: ignore[operator]  # first_day is read only when root is not None
        if folder.is_dir():
            found += folder.glob("rollout-*.jsonl")
        day += timedelta(days=1)
    return sorted(found)


def _day_of_folder(folder: Path) -> date | None:
    try:
        return date(int(folder.parent.parent.name), int(folder.parent.name), int(folder.name))
    except ValueError:
        return None


class _Stamp(msgspec.Struct):
    timestamp: Any = None


_stamp_decoder = msgspec.json.Decoder(_Stamp)
_BLANK_BYTES = b" \t\r\n"


def _last_line_ms(path: Path) -> int | None:
    """The time of the rollout's last line that has one (its last lines read, from the end)."""
    try:
        data = read_source(path, whole=False)  # its last lines only
    except OSError:
        return None
    end = len(data)
    for _ in range(8):  # a torn last line, a line without a time: a few lines back at most
        while end > 0 and data[end - 1] in _BLANK_BYTES:
            end -= 1
        if end == 0:
            return None
        start = data.rfind(b"\n", 0, end) + 1
        try:
            ms = ms_of_iso(_stamp_decoder.decode(data[start:end]).timestamp, -1)
        except msgspec.DecodeError:
            ms = -1
        if ms >= 0:
            return ms
        end = start
    return None
