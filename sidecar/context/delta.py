"""Context deltas: ``session/buildContext {since}`` sends only what was appended since an earlier result.

Every result carries a ``cursor``: the session, the leaf it was built at, how
many messages it held, a digest of the entries they came from, and the format.
Given back as ``since``, the next build sends only the messages after those,
when the path only grew: the old leaf is on the new path and nothing after it
rewrites earlier messages (a compaction replaces them with its summary, a
prune mark shortens tool results, a context edit replaces one's content). Otherwise the whole context comes back with
the reason (``rebuildReason``), and the client replaces what it holds.
"""

from __future__ import annotations

import base64
import hashlib

import msgspec

from ..format.jsonl import Entry
from .pruned import PRUNE_CUSTOM_TYPE

_PRUNE_MARK = PRUNE_CUSTOM_TYPE.encode()

# rebuildReason values
UNKNOWN_CURSOR = "unknownCursor"  # not a cursor of this session and format
BRANCHED = "branched"  # the leaf moved off the path the cursor was built on
COMPACTED = "compacted"  # a compaction after the cursor replaced earlier messages
PRUNED = "pruned"  # a prune mark after the cursor shortened earlier tool results
CHANGED = "changed"  # the earlier messages are no longer the same entries
EDITED = "edited"  # a context edit after the cursor replaced or dropped an earlier message


def _digest(entry_ids: list[str]) -> str:
    return hashlib.blake2b("\n".join(entry_ids).encode(), digest_size=12).hexdigest()


def make_cursor(session_id: str, leaf_id: str | None, entry_ids: list[str], fmt: str) -> str:
    raw = msgspec.json.encode([session_id, leaf_id, len(entry_ids), _digest(entry_ids), fmt])
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def since_base(
    since: str, session_id: str, path: list[Entry], entry_ids: list[str], fmt: str
) -> tuple[int, str | None]:
    """(messages the client already holds, None) or (0, why the whole context must be sent)."""
    try:
        raw = base64.urlsafe_b64decode(since + "=" * (-len(since) % 4))
        sid, old_leaf, count, digest, old_fmt = msgspec.json.decode(raw, type=tuple[str, str | None, int, str, str])
    except (ValueError, msgspec.DecodeError, msgspec.ValidationError):
        return 0, UNKNOWN_CURSOR
    if sid != session_id or old_fmt != fmt or count < 0:
        return 0, UNKNOWN_CURSOR
    if old_leaf is None:
        start = 0
    else:
        at = next((i for i in range(len(path) - 1, -1, -1) if path[i].id == old_leaf), None)
        if at is None:
            return 0, BRANCHED
        start = at + 1
    for entry in path[start:]:
        if entry.type == "compaction":
            return 0, COMPACTED
        if entry.type == "custom" and _PRUNE_MARK in entry.raw:
            return 0, PRUNED
        if entry.type == "context_edit":
            return 0, EDITED
    if count > len(entry_ids) or _digest(entry_ids[:count]) != digest:
        return 0, CHANGED
    return count, None
