"""Running service calls: in order per session, side by side across sessions, off the event loop.

The service is synchronous, so every call runs in a worker thread; the event
loop keeps reading, answering and cancelling meanwhile. Calls that name a
session wait their turn on that session's FIFO lock (``asyncio.Lock`` wakes
waiters in arrival order, and requests are dispatched in arrival order), so
requests on one session run in the order they were sent while a long request
on one session never holds up another.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import Executor
from typing import Any, Callable

from ..work import Work
from .messages import ProgressParams
from .progress import RequestWork


class _SessionLock:
    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0


class SessionQueues:
    """One FIFO lock per session key, dropped when nobody holds or waits for it."""

    def __init__(self) -> None:
        self._locks: dict[str, _SessionLock] = {}

    def __len__(self) -> int:
        return len(self._locks)

    async def acquire(self, key: str) -> None:
        entry = self._locks.get(key)
        if entry is None:
            entry = self._locks[key] = _SessionLock()
        entry.users += 1
        try:
            await entry.lock.acquire()
        except BaseException:  # cancelled while waiting for its turn
            self._drop(key, entry)
            raise

    def release(self, key: str) -> None:
        entry = self._locks[key]
        entry.lock.release()
        self._drop(key, entry)

    def idle(self, key: str) -> bool:
        """Nobody runs on or waits for ``key``."""
        return key not in self._locks

    def _drop(self, key: str, entry: _SessionLock) -> None:
        entry.users -= 1
        if entry.users == 0:
            del self._locks[key]


def queue_key(params: Any) -> str | None:
    """The session a call works on, or None for calls that may run alongside anything."""
    session_id = getattr(params, "sessionId", None)
    if isinstance(session_id, str):
        return session_id
    path = getattr(params, "path", None)
    if isinstance(path, str):
        return "path:" + path  # session/open by path: the id is not known before loading
    return None


def _in_thread(call: Callable[[Work], Any], work: Work) -> Any:
    work.check_cancelled()  # cancelled after being handed over, before it began
    return call(work)


class Dispatcher:
    def __init__(self, executor: Executor, send_progress: Callable[[ProgressParams], None]) -> None:
        self._executor = executor
        self._send_progress = send_progress
        self.queues = SessionQueues()
        self.works: dict[Any, RequestWork] = {}  # request id -> its handle, while in flight

    async def run(
        self,
        msg_id: Any,
        title: str,
        key: str | None,
        token: int | str | None,
        call: Callable[[Work], Any],
        on_loop: bool = False,
    ) -> Any:
        """Run ``call(work)`` in its session's turn: in a worker thread, or awaited
        on the event loop when ``on_loop`` (for coroutine operations)."""
        loop = asyncio.get_running_loop()
        work = RequestWork(loop, self._send_progress, token, title)
        self.works[msg_id] = work
        try:
            if key is not None:
                await self.queues.acquire(key)
            try:
                work.begin()
                work.started = True
                try:
                    if on_loop:
                        work.check_cancelled()
                        return await call(work)
                    return await loop.run_in_executor(self._executor, _in_thread, call, work)
                finally:
                    work.end()
            finally:
                if key is not None:
                    self.queues.release(key)
        finally:
            self.works.pop(msg_id, None)

    def cancel(self, msg_id: Any, task: asyncio.Future[Any] | None) -> bool:
        """Cancel a request in flight; True if it was found.

        A request still waiting for its turn is dropped at once (its task is
        cancelled, it answers -32800). One already running is asked to stop:
        it stops at its next safe point, or finishes and answers normally.
        """
        work = self.works.get(msg_id)
        if work is not None and work.started:
            work.cancel()
            return True
        if task is not None and not task.done():
            task.cancel()
            return True
        return False
