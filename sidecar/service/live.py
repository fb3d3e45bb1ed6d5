"""Live sessions (sidecar/live/): subscriptions and roles, fed by the store's hooks.

``LiveHub`` is the service's collaborator for them: it makes the bus and the roles when they are
first asked for, so that each hook is one attribute test while nobody subscribed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Protocol

from .. import wire
from ..errors import SessionNotFound
from ..store import check_session_id

if TYPE_CHECKING:
    # The live engine is imported when the live sessions are first made: LiveClient is what the rpc
    # layer's connections are, and importing it must not load the bus.
    from .. import external
    from ..live.bus import Subscriber
    from ..live.events import LiveSessions
    from ..store import FileChange, Session, SessionStore


class LiveClient(Hashable, Protocol):
    """A connection as the live methods know it: the client the roles know, and what the bus sends to."""

    @property
    def subscriber(self) -> Subscriber: ...


class LiveHub:
    def __init__(
        self,
        store: SessionStore,
        watches: external.Watches,
        on_made: Callable[[LiveSessions], None] | None = None,
    ) -> None:
        self._store = store
        self._watches = watches
        self._sessions: LiveSessions | None = None
        self._lock = threading.Lock()
        # Told of the live sessions once they are made (the rpc layer wires its hooks into them).
        self._on_made = on_made

    @property
    def sessions(self) -> LiveSessions:
        if self._sessions is None:
            with self._lock:
                if self._sessions is None:
                    from ..live.events import LiveSessions

                    made = LiveSessions(self._store.blobs)
                    if self._on_made is not None:
                        self._on_made(made)
                    self._sessions = made
        return self._sessions

    @property
    def made(self) -> LiveSessions | None:
        """The live sessions if they were made already (nobody subscribed, else)."""
        return self._sessions

    # -- the store's hooks ---------------------------------------------------------------

    def closed(self, session_id: str) -> None:
        if self._sessions is not None:
            self._sessions.closed(session_id)

    def appended(self, session: Session) -> None:
        if self._sessions is not None:
            self._sessions.appended(session)

    def followed(self, session: Session, change: FileChange) -> None:
        if self._sessions is not None:
            if change.reloaded is not None:
                self._sessions.reloaded(session, change.reloaded)
            else:
                self._sessions.appended(session, external=True)

    def leaf_moved(self, session: Session) -> None:
        if self._sessions is not None:
            self._sessions.leaf_moved(session)

    # -- the methods -----------------------------------------------------------------------

    def subscribe(self, params: wire.SubscribeParams, client: LiveClient) -> wire.SubscribeResult:
        """Subscribe in the session's turn; a session not open here is opened read-only and its file followed."""
        session = self._store.held(params.sessionId)
        if session is None:
            check_session_id(params.sessionId)
            session, _report = self._store.open(params.sessionId, None, True)
        else:
            self._store.follow(session)
        if session.id not in self._watches:
            self.sessions.watched_for_subscribers.add(session.id)
            self._watches.add(session)
        return self.sessions.subscribe(session, client.subscriber, params.since, client)

    def unsubscribe(self, params: wire.UnsubscribeParams, client: LiveClient) -> wire.UnsubscribeResult:
        return wire.UnsubscribeResult(unsubscribed=self.sessions.bus.unsubscribe(params.sessionId, client.subscriber))

    def take_control(self, params: wire.TakeControlParams, client: LiveClient) -> wire.TakeControlResult:
        if self._store.held(params.sessionId) is None:
            check_session_id(params.sessionId)
            raise SessionNotFound(
                f"session {params.sessionId!r} is not open; open it first", sessionId=params.sessionId
            )
        former = self.sessions.roles.take(params.sessionId, client)
        return wire.TakeControlResult(sessionId=params.sessionId, tookOver=former is not None)
