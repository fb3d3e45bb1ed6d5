"""Entries an export found nothing to redact in, remembered while their session is open.

A session is append-only and an entry's line never changes once written, so an entry with nothing
to redact in it stays so for as long as the rules stay the same: a second export of the same open
session (a page looked at again, an export after a few more turns) looks only at what is new. Kept
in memory, beside the session handle (a weak reference: closing the session drops it), and only
for the default rules. An entry is known by its parsed object, not its id alone: a session read
again from its file parses new objects, and their lines are looked at again.
"""

from __future__ import annotations

import weakref

from ...format.entry import Entry
from ...store import Session


class CleanEntries:
    """The entries of one open session found to hold nothing to redact."""

    __slots__ = ("_by_id",)

    def __init__(self) -> None:
        self._by_id: dict[str, Entry] = {}

    def known(self, entry: Entry) -> bool:
        return entry.id is not None and self._by_id.get(entry.id) is entry

    def add(self, entry: Entry) -> None:
        if entry.id is not None:
            self._by_id[entry.id] = entry

    def __len__(self) -> int:
        return len(self._by_id)


_BY_SESSION: weakref.WeakKeyDictionary[Session, CleanEntries] = weakref.WeakKeyDictionary()


def clean_entries(session: Session) -> CleanEntries:
    """The clean entries remembered for ``session`` (an empty record the first time)."""
    known = _BY_SESSION.get(session)
    if known is None:
        known = _BY_SESSION[session] = CleanEntries()
    return known


def forget(session: Session) -> None:
    """Drop what is remembered for ``session`` (a cold export, as a benchmark measures one)."""
    _BY_SESSION.pop(session, None)
