"""Live sessions (sidecar/live/): subscriptions and roles, fed by the store's hooks."""

from __future__ import annotations

import threading
from typing import Any, Callable

from .. import wire
from ..errors import SessionNotFound
from ..live.events import LiveSessions
from ..store import FileChange, check_session_id, Session


class LiveCalls:
    # --- live sessions (sidecar/live/: subscriptions, roles) ---
    # The store's hooks above call these; each is one attribute test when nobody subscribed.

    _live_sessions: LiveSessions | None = None
    _live_lock = threading.Lock()

    @property
    def live(self) -> LiveSessions:
        if self._live_sessions is None:
            with self._live_lock:
                if self._live_sessions is None:
                    self._live_sessions = LiveSessions(self.store.blobs)
        return self._live_sessions

    def _released(self, session_id: str) -> None:
        """The store let the session go (closed, moved, deleted): watchers and subscribers stop."""
        self.watches.remove(session_id)
        if self._live_sessions is not None:
            self._live_sessions.closed(session_id)

    def _live_appended(self, session: Session) -> None:
        if self._live_sessions is not None:
            self._live_sessions.appended(session)

    def _live_followed(self, session: Session, change: FileChange) -> None:
        if self._live_sessions is not None:
            if change.reloaded is not None:
                self._live_sessions.reloaded(session, change.reloaded)
            else:
                self._live_sessions.appended(session, external=True)

    def _live_leaf_moved(self, session: Session) -> None:
        if self._live_sessions is not None:
            self._live_sessions.leaf_moved(session)

    def live_subscribe(self, params: wire.SubscribeParams, subscriber: Any, client: Any) -> wire.SubscribeResult:
        """Subscribe in the session's turn; a session not open here is opened read-only and its file followed."""
        session = self.store.held(params.sessionId)
        if session is None:
            check_session_id(params.sessionId)
            session, _report = self.store.open(params.sessionId, None, True)
        else:
            self.store.follow(session)
        if session.id not in self.watches:
            self.live.watched_for_subscribers.add(session.id)
            self.watches.add(session)
        return self.live.subscribe(session, subscriber, params.since, client)

    def live_unsubscribe(self, params: wire.UnsubscribeParams, subscriber: Any) -> wire.UnsubscribeResult:
        return wire.UnsubscribeResult(unsubscribed=self.live.bus.unsubscribe(params.sessionId, subscriber))

    def live_take_control(self, params: wire.TakeControlParams, client: Any) -> wire.TakeControlResult:
        if self.store.held(params.sessionId) is None:
            check_session_id(params.sessionId)
            raise SessionNotFound(f"session {params.sessionId!r} is not open; open it first", sessionId=params.sessionId)
        former = self.live.roles.take(params.sessionId, client)
        return wire.TakeControlResult(sessionId=params.sessionId, tookOver=former is not None)

    # --- live across hosts ---
    def on_remote_change(self, callback: Callable[[str], None]) -> None:
        """The rpc layer's follower is told (from any thread) of sessions changed on another host."""
        self.store.on_behind = callback
