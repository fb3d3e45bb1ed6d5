"""The sessions one process holds, as every store keeps them (store/base.py's first part).

A store subclasses ``HeldSessions`` for its registry (sessions by id under one
lock), the service's hooks and releasing; ``_closing`` is what the store does
for a session it lets go of before the session closes (the file store writes
its tree cache), ``_check_id`` how it tells a malformed id from an unknown one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

from ..errors import InvalidState, SessionNotFound
from ..format.jsonl import Entry
from .base import Durability, FileChange
from .ids import check_session_id

if TYPE_CHECKING:  # (a store is made, and lists, before any session is: store/session.py loads on first use)
    from .batch import Redact
    from .session import Session

S = TypeVar("S", bound="Session")


class HeldSessions(Generic[S]):
    def __init__(self) -> None:
        self._open: dict[str, S] = {}
        self._lock = threading.RLock()
        # Told when another program changed a held session and the session caught up.
        self.on_change: Callable[[Session, FileChange], None] | None = None
        # Told when a batch of a held session reached the store (before the listing's upkeep).
        self.on_append: Callable[[Session], None] | None = None
        # Told when a held session is let go of to be moved or deleted.
        self.on_release: Callable[[str], None] | None = None
        # Told (from any thread) that a held session was changed elsewhere and should be followed
        # in its turn (the PostgreSQL store's listener, store/postgres/notify.py).
        self.on_behind: Callable[[str], None] | None = None
        # store.redactOnAppend: what each appended entry passes through first (the service sets it).
        self.redact_entry: Redact | None = None

    def held(self, session_id: str) -> S | None:
        # One dict lookup is atomic: no lock (this runs several times per append; the lock
        # orders the changes of several steps, which a lookup sees before or after, never half done).
        return self._open.get(session_id)

    def held_sessions(self) -> list[Session]:
        with self._lock:
            held: list[Session] = list(self._open.values())
            return held

    def forget(self, session_id: str) -> S | None:
        """Stop holding a session without writing anything (one that was never written)."""
        with self._lock:
            return self._open.pop(session_id, None)

    def durability_of(self, session_id: str) -> Durability | None:
        session = self.held(session_id)
        return session.writer if session is not None else None

    def release(self, session_id: str) -> S:
        with self._lock:
            session = self._open.pop(session_id, None)
        if session is None:
            self._check_id(session_id)
            raise SessionNotFound(f"session {session_id!r} is not open", sessionId=session_id)
        self._closing(session)
        session.close()
        return session

    def take_held(self, session_id: str, moving_on: bool = False) -> S | None:
        """Stop holding a session about to move (it is closed). ``moving_on``: it is opened again
        where it goes, so whoever listens for releases is not told."""
        with self._lock:
            session = self._open.pop(session_id, None)
        if session is not None:
            if self.on_release is not None and not moving_on:
                self.on_release(session_id)
            session.close()
        return session

    def moved_unwritten(self, session_id: str, cwd: str) -> bool:
        """session/move of a held session that has nothing stored: in memory, its header takes
        ``cwd`` (True: nothing else to move); not written yet, refused. False: move what is stored."""
        held = self.held(session_id)
        if held is not None and held.in_memory:
            held.header = Entry.from_obj({**held.header_obj(), "cwd": cwd})
            return True
        if held is not None and not held.persisted:
            raise InvalidState(
                f"session {session_id} has no file yet (nothing is written before the first user or assistant "
                "message); create it with the cwd it belongs to, or move it once it is written",
                sessionId=session_id,
            )
        return False

    def close_all(self) -> list[Session]:
        with self._lock:
            sessions: list[Session] = list(self._open.values())
            self._open.clear()
        for session in sessions:
            self._closing(session)
            session.close()
        return sessions

    def _closing(self, session: Session) -> None:
        """What the store keeps of a session it lets go of, before the session closes."""

    def _check_id(self, session_id: str) -> None:
        check_session_id(session_id)
