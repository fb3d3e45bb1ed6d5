"""Session ids as pi's files carry them: the id's syntax and the file name that holds it."""

from __future__ import annotations

import re
from pathlib import Path

# Letters and digits at both ends, . _ - inside, 64 at most.
_SESSION_ID = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9])?$")


def valid_session_id(session_id: str) -> bool:
    return _SESSION_ID.match(session_id) is not None and ".." not in session_id


def session_id_of(path: Path) -> str | None:
    """The id in a ``<timestamp>_<id>.jsonl`` file name, or None."""
    name = path.name
    if not name.endswith(".jsonl") or "_" not in name:
        return None
    return name[: -len(".jsonl")].split("_", 1)[1]
