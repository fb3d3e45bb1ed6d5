"""Retention policies: which sessions go to the trash to keep the store in bounds.

A policy only selects; the service moves what it selects to the trash
(restorable with ``session/restore``). Nothing here erases anything. Sessions
with a name or a label are pinned out of every policy unless asked
otherwise: a user who named or labelled a session meant to keep it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidParams
from ..store import SessionFile
from ..store.files import is_pinned

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]i?b?|b)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "m": 1000**2,
    "mb": 1000**2,
    "g": 1000**3,
    "gb": 1000**3,
    "t": 1000**4,
    "tb": 1000**4,
    "ki": 1024,
    "kib": 1024,
    "mi": 1024**2,
    "mib": 1024**2,
    "gi": 1024**3,
    "gib": 1024**3,
    "ti": 1024**4,
    "tib": 1024**4,
}
_DURATION = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$", re.IGNORECASE)
_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_size(text: str, field: str) -> int:
    """``5GB``, ``500MiB``, ``1.5g``, ``1024`` -> bytes."""
    match = _SIZE.match(text)
    if match is None:
        raise InvalidParams(
            f"{field} {text!r} is not a size; write a number with an optional unit: "
            "B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024), e.g. 5GB",
            field=field,
        )
    number, unit = float(match.group(1)), (match.group(2) or "").lower()
    return int(number * _SIZE_UNITS[unit])


def parse_duration(text: str, field: str) -> int:
    """``90d``, ``12h``, ``2w`` -> seconds."""
    match = _DURATION.match(text)
    if match is None:
        raise InvalidParams(
            f"{field} {text!r} is not a duration; write a whole number and a unit: "
            "s (seconds), m (minutes), h (hours), d (days) or w (weeks), e.g. 90d",
            field=field,
        )
    return int(match.group(1)) * _DURATION_UNITS[match.group(2).lower()]


@dataclass(slots=True, frozen=True)
class RetentionPolicy:
    older_than_s: int | None = None  # untouched for longer than this
    keep_per_cwd: int | None = None  # the newest N of each project folder are kept
    max_total_bytes: int | None = None  # the oldest go until the rest fits
    include_pinned: bool = False  # named or labelled sessions too

    @property
    def empty(self) -> bool:
        return self.older_than_s is None and self.keep_per_cwd is None and self.max_total_bytes is None


@dataclass(slots=True, frozen=True)
class Selected:
    session: SessionFile
    reason: str


def select(
    candidates: list[SessionFile],
    policy: RetentionPolicy,
    now_ns: int,
    pinned_now: Callable[[SessionFile], bool] = lambda found: is_pinned(found.path),
) -> tuple[list[Selected], list[SessionFile]]:
    """(what the policy sends to the trash with why, the pinned sessions it left alone). Newest first is kept.
    ``pinned_now`` tells a named or labelled session (the store's own way: a file's bytes, or its rows)."""
    pinned = [] if policy.include_pinned else [c for c in candidates if pinned_now(c)]
    pinned_paths = {p.path for p in pinned}
    eligible = sorted((c for c in candidates if c.path not in pinned_paths), key=lambda c: -c.mtime_ns)
    chosen: dict[Path, str] = {}
    if policy.older_than_s is not None:
        cutoff = now_ns - policy.older_than_s * 1_000_000_000
        for c in eligible:
            if c.mtime_ns < cutoff:
                chosen.setdefault(
                    c.path,
                    f"untouched for more than {policy.older_than_s // 86400} days"
                    if policy.older_than_s >= 86400
                    else f"untouched for more than {policy.older_than_s} s",
                )
    if policy.keep_per_cwd is not None:
        seen: dict[str, int] = {}
        for c in eligible:
            seen[c.cwd_folder] = seen.get(c.cwd_folder, 0) + 1
            if seen[c.cwd_folder] > policy.keep_per_cwd:
                chosen.setdefault(c.path, f"beyond the newest {policy.keep_per_cwd} of its folder")
    if policy.max_total_bytes is not None:
        total = sum(c.size for c in candidates if c.path not in chosen)
        for c in reversed(eligible):  # oldest first
            if total <= policy.max_total_bytes:
                break
            if c.path not in chosen:
                chosen[c.path] = f"the store is over {policy.max_total_bytes} bytes"
                total -= c.size
    selected = [Selected(c, chosen[c.path]) for c in eligible if c.path in chosen]
    return selected, pinned
