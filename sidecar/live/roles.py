"""Who controls a session: one client writes it, the others observe.

A client becomes the controller of a session by being the first to write it
(or to open or create it for writing) while nobody controls it, or by asking
(``session/takeControl``); the former controller is told. A controller that
disconnects leaves the session without one. Only between clients of one
sidecar: another process is kept out by the file lock (store/files/lock.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable

from ..errors import NotController


class Roles:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._controllers: dict[str, Hashable] = {}
        # Told (session id, former controller, new controller) when control moves.
        self.on_change: Callable[[str, Hashable | None, Hashable | None], None] | None = None

    def controller(self, session_id: str) -> Hashable | None:
        return self._controllers.get(session_id)

    def check(self, session_id: str, client: Hashable, claim: bool = True) -> None:
        """Raise NotController unless ``client`` controls the session (claiming it when nobody does)."""
        with self._lock:
            owner = self._controllers.get(session_id)
            if owner is None and claim:
                self._controllers[session_id] = client
                return
            if owner is client or owner is None:
                return
        raise NotController(
            f"another client controls session {session_id}; observe it (session/subscribe, reads), "
            "or call session/takeControl to write",
            sessionId=session_id,
        )

    def take(self, session_id: str, client: Hashable) -> Hashable | None:
        """Make ``client`` the controller; the former one (None: nobody, or the client itself)."""
        with self._lock:
            former = self._controllers.get(session_id)
            self._controllers[session_id] = client
        former = None if former is client else former
        if former is not None and self.on_change is not None:
            self.on_change(session_id, former, client)
        return former

    def release(self, session_id: str, client: Hashable) -> None:
        with self._lock:
            if self._controllers.get(session_id) is client:
                del self._controllers[session_id]

    def release_all(self, client: Hashable) -> list[str]:
        """The client left: it controls nothing any more. The sessions it controlled."""
        with self._lock:
            mine = [s for s, c in self._controllers.items() if c is client]
            for session_id in mine:
                del self._controllers[session_id]
        return mine

    def forget(self, session_id: str) -> None:
        """The session was closed or moved away: nobody controls it."""
        with self._lock:
            self._controllers.pop(session_id, None)
