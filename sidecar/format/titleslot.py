"""oh-my-pi's title slot: a fixed-width first line that holds a session's current title.

oh-my-pi (18.x) starts every session file with one line before the header,
``{"type":"title","v":1,"title":...,"source":...,"updatedAt":...,"pad":"   "}``,
exactly ``SLOT_BYTES`` bytes with its newline, the padding absorbing the
title's length so the line can be overwritten in place when the title
changes. Its reader takes the line's title as the session's name (an empty
title meaning none) and ignores the header's own ``title`` then; a file
without the line (older releases) is named by the header's ``title``.

We keep the line's bytes as they are through every append, rewrite and fork;
this module only reads it, checks it, and builds a new one for a rename.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

SLOT_BYTES = 256
SLOT_TYPE = "title"
TITLE_CHANGE_TYPE = "title_change"
SOURCES = ("auto", "user")


@dataclass(frozen=True, slots=True)
class TitleSlot:
    """A title slot line as oh-my-pi would read it."""

    title: str
    updated_at: str
    source: str | None
    raw: bytes  # the line's exact bytes, without its newline

    @property
    def name(self) -> str | None:
        """The session's name by oh-my-pi's rules (an empty title is no name)."""
        return self.title or None


def looks_like_slot(raw: bytes) -> bool:
    """A first line that claims to be a title slot (read before the header, not an entry)."""
    if not raw.startswith(b"{"):
        return False
    # Its type's value spells "title", literally or through \u escapes: a header without either
    # (nearly every one) is not decoded twice (the listing index reads 100,000 first lines).
    if b"title" not in raw and b"\\u" not in raw:
        return False
    try:
        obj = json.loads(raw)
    except ValueError:
        return False
    return isinstance(obj, dict) and obj.get("type") == SLOT_TYPE


def read_slot(raw: bytes) -> tuple[TitleSlot | None, str | None]:
    """The slot in ``raw`` (a first line, no newline) and what is wrong with it, if anything.

    oh-my-pi accepts a line of the right shape whatever its width; a line of
    another width is still read (as oh-my-pi does) but reported, since an
    in-place rewrite of it would overwrite the header.
    """
    try:
        obj: object = json.loads(raw)
    except ValueError:
        return None, "the first line is not JSON (a damaged title line)"
    if not isinstance(obj, dict) or obj.get("type") != SLOT_TYPE:
        return None, "the first line is not a title line"
    source = obj.get("source")
    if (
        obj.get("v") != 1
        or not isinstance(obj.get("title"), str)
        or not isinstance(obj.get("updatedAt"), str)
        or not isinstance(obj.get("pad"), str)
        or (source is not None and source not in SOURCES)
    ):
        return None, 'the title line lacks "v": 1 or a string "title", "updatedAt" or "pad"; its title is ignored'
    slot = TitleSlot(obj["title"], obj["updatedAt"], source, bytes(raw))
    if len(raw) + 1 != SLOT_BYTES:
        return slot, f"the title line is {len(raw) + 1} bytes, not {SLOT_BYTES}; it cannot be rewritten in place"
    return slot, None


def slot_line(title: str, updated_at: str, source: str | None) -> bytes:
    """A title slot line of exactly ``SLOT_BYTES`` bytes with its newline (returned without it).

    A title too long for the slot is cut at a code point, as oh-my-pi cuts it,
    so that the line still fits.
    """

    def line(text: str, pad: str) -> bytes:
        obj: dict[str, object] = {"type": SLOT_TYPE, "v": 1, "title": text}
        if source is not None:
            obj["source"] = source
        obj["updatedAt"] = updated_at
        obj["pad"] = pad
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    # The longest prefix (in code points) whose line fits, found by bisection.
    low, high, best = 0, len(title), ""
    while low <= high:
        mid = (low + high) // 2
        if len(line(title[:mid], "")) + 1 <= SLOT_BYTES:
            best, low = title[:mid], mid + 1
        else:
            high = mid - 1
    bare = line(best, "")
    padding = SLOT_BYTES - 1 - len(bare)
    if padding < 0:
        raise ValueError("the title slot's fields do not fit in its fixed width")
    full = line(best, " " * padding)
    assert len(full) + 1 == SLOT_BYTES
    return full


def clean_title(raw: str) -> str:
    """A name as oh-my-pi stores it: control characters as spaces, runs of spaces as one, trimmed."""
    out = "".join(" " if (ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F) else c for c in raw)
    while "  " in out:
        out = out.replace("  ", " ")
    return out.strip()
