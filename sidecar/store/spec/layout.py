"""Where a spec session lives, and the one check every session id passes before it names a path.

Spec section 7.1: ``<root>/<ULID>/session.jsonl`` and ``metadata.json``. Ids
are ULIDs we generate; an id from a request is matched against the ULID
pattern and only then joined below the root, so nothing a client sends can
name another folder. Archived sessions move to ``<root>/.archive/<ULID>``,
deleted ones to ``<root>/.trash/<ULID>`` (restorable; nothing is erased).
"""

from __future__ import annotations

import os
import re
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

from ...errors import InvalidSessionId

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ULID_PATTERN = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")
SESSION_FILE = "session.jsonl"
METADATA_FILE = "metadata.json"
ARCHIVE_DIR = ".archive"
TRASH_DIR = ".trash"
AREAS: tuple[str | None, ...] = (None, ARCHIVE_DIR, TRASH_DIR)


def new_ulid(now_ms: int | None = None) -> str:
    """48 bits of milliseconds then 80 random bits, in Crockford base32: ids sort by creation."""
    millis = time.time_ns() // 1_000_000 if now_ms is None else now_ms
    value = (millis & ((1 << 48) - 1)) << 80 | int.from_bytes(secrets.token_bytes(10), "big")
    chars = []
    for _ in range(26):
        chars.append(CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def check_ulid(session_id: object) -> str:
    """``session_id`` when it is a ULID (upper-case Crockford base32, 26 characters); else InvalidSessionId."""
    if not isinstance(session_id, str) or not ULID_PATTERN.match(session_id):
        raise InvalidSessionId(
            "a session id of a spec-format root is a ULID: 26 characters of 0-9 and A-Z without I, L, O and U "
            "(the sidecar makes them: create without sessionId)",
            sessionId=session_id if isinstance(session_id, str) else None,
            format="spec",
        )
    return session_id


class SpecLayout:
    def __init__(self, root: Path) -> None:
        self.root = root

    def area_dir(self, area: str | None) -> Path:
        return self.root if area is None else self.root / area

    def folder(self, session_id: str, area: str | None = None) -> Path:
        return self.area_dir(area) / check_ulid(session_id)

    def find(
        self, session_id: str, areas: tuple[str | None, ...] = (None, ARCHIVE_DIR)
    ) -> tuple[Path, str | None] | None:
        """The folder of ``session_id`` and its area (None: active), looked for in ``areas`` in order."""
        check_ulid(session_id)
        for area in areas:
            folder = self.folder(session_id, area)
            if (folder / SESSION_FILE).is_file():
                return folder, area
        return None

    def folders(self, area: str | None = None) -> Iterator[Path]:
        """Every session folder of an area (names that are not ULIDs are not ours and are passed over)."""
        try:
            names = os.listdir(self.area_dir(area))
        except OSError:
            return
        for name in names:
            if ULID_PATTERN.match(name) and os.path.isfile(self.area_dir(area) / name / SESSION_FILE):
                yield self.area_dir(area) / name
