"""Watched sessions: follow another program's writes as they happen, in each session's turn.

The service keeps which sessions clients watch and an inotify descriptor on
their folders (sidecar/external.py, store/files/filewatch.py). Here the event loop
reads that descriptor when it is readable and, for each session whose file is
no longer as the session last saw it (our own appends raise events too; one
stat tells them apart), queues a ``follow`` in the session's turn, like any
request: it folds the new entries in and the service sends
``session/didAppend`` (or ``session/didReload``). Without inotify the watched
files are checked every ``POLL_S`` instead.
"""

from __future__ import annotations

import asyncio
import logging

from ..work import Work
from .connection import Served

logger = logging.getLogger(__name__)

# How often watched files are checked where inotify is not available.
POLL_S = 0.05


class SessionFollower:
    def __init__(self, server: Served) -> None:
        self._server = server
        self._loop: asyncio.AbstractEventLoop | None = None
        self._reading = -1
        self._poll: asyncio.TimerHandle | None = None
        self._queued: set[str] = set()
        self._tasks: set[asyncio.Future[None]] = set()

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Begin watching (after initialize made the service): inotify, else the timer."""
        self._loop = loop
        service = self._server.service
        if service is not None:  # another host's change (store/postgres/notify.py): follow it in its turn

            def behind(session_id: str) -> None:
                loop.call_soon_threadsafe(self._maybe_follow, session_id)

            service.on_remote_change(behind)
        self.refresh()

    def refresh(self) -> None:
        """Called when the set of watched sessions may have changed: make sure something watches them."""
        service, loop = self._server.service, self._loop
        if service is None or loop is None or not service.has_watches():
            return
        fd = service.watches.file_watch.fd
        if fd >= 0 and self._reading != fd:
            loop.add_reader(fd, self._on_events)
            self._reading = fd
        if self._poll is None and service.watches.polled():
            self._poll = loop.call_later(POLL_S, self._on_timer)

    def _on_events(self) -> None:
        service = self._server.service
        if service is None:
            return
        try:
            changed = service.watches.events()
        except Exception:
            logger.exception("reading inotify events failed")
            return
        for session_id in changed:
            self._maybe_follow(session_id)

    def _on_timer(self) -> None:
        self._poll = None
        service = self._server.service
        polled = service.watches.polled() if service is not None else []
        for session_id in polled:
            self._maybe_follow(session_id)
        if polled and self._loop is not None:
            self._poll = self._loop.call_later(POLL_S, self._on_timer)

    def _maybe_follow(self, session_id: str) -> None:
        service = self._server.service
        if service is None or session_id in self._queued or not service.changed_behind(session_id):
            return
        self._queued.add(session_id)
        task = asyncio.ensure_future(self._follow(session_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _follow(self, session_id: str) -> None:
        service = self._server.service
        assert service is not None
        try:
            # Off the queue before it runs: an event during the run queues the next one.
            def call(work: Work) -> None:
                self._queued.discard(session_id)
                service.follow(session_id)

            await self._server.dispatcher.run(object(), "follow", session_id, None, call)
        except Exception as error:  # a damaged rewrite, a latched session: the next call answers it
            logger.info("following %s failed: %s", session_id, error)
        finally:
            self._queued.discard(session_id)

    def stop(self) -> None:
        if self._loop is not None and self._reading >= 0:
            self._loop.remove_reader(self._reading)
            self._reading = -1
        if self._poll is not None:
            self._poll.cancel()
            self._poll = None
        for task in list(self._tasks):
            task.cancel()  # one still waiting for its session's turn; a running one finishes
