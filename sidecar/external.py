"""Another program writing an open session's file: what the service tells clients about it.

The store finds and folds the change (store/files/follow.py); this module turns it
into protocol values: the ``external`` field of a result, the
``session/didAppend`` and ``session/didReload`` notifications of watching
clients, and the ``sessionChanged`` error of an append whose
``expectedLeafId`` is no longer the leaf. ``Watches`` keeps which sessions
clients watch and the inotify watch on their files.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import wire
from .errors import SessionChanged
from .format.jsonl import Entry
from .store import Blobs, FileChange, Session, entry_object
from .store.files import FileWatch

# Past this many bytes of lines, sessionChanged carries only the entries' ids.
MAX_CHANGED_BYTES = 256 * 1024


def entry_objects(entries: list[Entry], blobs: Blobs) -> list[dict[str, Any]]:
    return [entry_object(e, blobs) for e in entries]


def result_field(change: FileChange | None) -> wire.ExternalChange | None:
    """The ``external`` field of a result, for the change this call found (None: none)."""
    if change is None:
        return None
    return wire.ExternalChange(
        entryIds=[e.id for e in change.appended],  # type: ignore[misc]  # appended entries have ids (Entry's is optional for v1 lines)
        reloaded=change.reloaded,
        headerChanged=change.header_changed,
    )


def notifications(session: Session, change: FileChange, blobs: Blobs) -> list[tuple[str, Any]]:
    """What a client watching ``session`` is sent about ``change``: (method, params) pairs."""
    if change.reloaded is not None or change.header_changed:
        reason = change.reloaded or "header"
        return [
            (
                "session/didReload",
                wire.DidReloadParams(
                    sessionId=session.id, reason=reason, leafId=session.leaf_id, entryCount=session.entry_count
                ),
            )
        ]
    if change.appended:
        return [
            (
                "session/didAppend",
                wire.DidAppendParams(
                    sessionId=session.id,
                    entries=entry_objects(change.appended, blobs),
                    leafId=session.leaf_id,
                    external=True,
                ),
            )
        ]
    return []


def session_changed(session: Session, expected: str | None, blobs: Blobs) -> SessionChanged:
    """The refusal of an append that expected the leaf ``expected``: the leaf now, and the
    entries on the path to it that are not on the path to ``expected`` (all of it when
    ``expected`` is null or not in the session), whole unless they are large."""
    tree = session.tree
    known = {e.id for e in tree.path(expected)} if expected is not None and expected in tree.by_id else set()
    unseen = [e for e in tree.path(session.leaf_id) if e.id not in known]
    data: dict[str, Any] = {
        "sessionId": session.id,
        "leafId": session.leaf_id,
        "expectedLeafId": expected,
        "entryIds": [e.id for e in unseen],
    }
    if sum(e.length or len(e.raw) for e in unseen) <= MAX_CHANGED_BYTES:
        data["entries"] = entry_objects(unseen, blobs)
    return SessionChanged(
        f"session {session.id} changed: its leaf is {session.leaf_id!r}, not {expected!r} "
        f"({len(unseen)} entries you have not seen, written by another program); nothing was written. "
        "Fold data.entries (or getEntries data.entryIds) into what you hold, then append with the new leaf",
        **data,
    )


class Watches:
    """The sessions clients watch, and an inotify watch on each one's file once it exists."""

    def __init__(self, root: Path) -> None:
        self._lock = threading.Lock()
        self._root = root
        self._file_watch: FileWatch | None = None
        self._sessions: dict[str, Path | None] = {}  # watched session id -> the path armed (None: not yet)
        self._by_path: dict[Path, str] = {}
        self._polled: set[str] = set()  # watched, but inotify could not watch the file: checked on a timer
        # Called (from any thread) when a session starts being watched (the rpc layer starts listening).
        self.on_add: Callable[[], None] | None = None

    @property
    def file_watch(self) -> FileWatch:
        if self._file_watch is None:
            self._file_watch = FileWatch(self._root)
        return self._file_watch

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._sessions

    def __bool__(self) -> bool:
        return bool(self._sessions)

    def add(self, session: Session) -> None:
        with self._lock:
            self._sessions.setdefault(session.id, None)
        self.arm(session)
        if self.on_add is not None:
            self.on_add()

    def arm(self, session: Session) -> None:
        """Watch the file of a watched session once it is on disk."""
        if self._sessions.get(session.id, False) is not None or not session.persisted:
            return
        if not session.changes_on_disk:  # nothing on disk to watch or poll: its store tells of changes
            return
        with self._lock:
            if session.id not in self._sessions:
                return
            self._sessions[session.id] = session.path
            self._by_path[session.path] = session.id
        if not self.file_watch.add(session.path):
            with self._lock:
                self._polled.add(session.id)
            if self.on_add is not None:
                self.on_add()

    def polled(self) -> list[str]:
        """The watched sessions to check on a timer: every one without inotify, else those it could not watch."""
        with self._lock:
            if self._file_watch is not None and not self._file_watch.enabled:
                return list(self._sessions)
            return list(self._polled)

    def remove(self, session_id: str) -> None:
        with self._lock:
            self._polled.discard(session_id)
            path = self._sessions.pop(session_id, None)
            if path is not None:
                self._by_path.pop(path, None)
        if path is not None and self._file_watch is not None:
            self._file_watch.remove(path)

    def events(self) -> list[str]:
        """The watched sessions whose files had inotify events since the last call."""
        if self._file_watch is None:
            return []
        paths = self._file_watch.read()
        with self._lock:
            return [self._by_path[p] for p in paths if p in self._by_path]

    def close(self) -> None:
        with self._lock:
            self._sessions.clear()
            self._by_path.clear()
            self._polled.clear()
        if self._file_watch is not None:
            self._file_watch.close()
