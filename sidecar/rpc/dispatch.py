"""Running service calls: in order per session, side by side across sessions, off the event loop.

The service is synchronous, so every call runs in a worker thread; the event
loop keeps reading, answering and cancelling meanwhile. Calls that name a
session wait their turn on that session's FIFO lock (``asyncio.Lock`` wakes
waiters in arrival order, and requests are dispatched in arrival order), so
requests on one session run in the order they were sent while a long request
on one session never holds up another.

Group sync: an append whose policy asks for an fsync may leave it to the
calls queued behind it on the same session (``GroupSync``). Each writes as
its turn comes; the last of the group (nobody waits behind it) or the first
call that cannot join (anything but an append) makes one fsync for all,
and only then is any of them answered: a failed fsync fails every one.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from ..format.ids import session_id_of, valid_session_id
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

    def waiting(self, key: str) -> bool:
        """Someone waits for ``key`` besides its holder."""
        entry = self._locks.get(key)
        return entry is not None and entry.users > 1

    def _drop(self, key: str, entry: _SessionLock) -> None:
        entry.users -= 1
        if entry.users == 0:
            del self._locks[key]


def queue_key(params: object) -> str | None:
    """The session a call works on, or None for calls that may run alongside anything."""
    session_id = getattr(params, "sessionId", None)
    if isinstance(session_id, str):
        return session_id
    path = getattr(params, "path", None)
    if isinstance(path, str):
        # session/open by path: the id is in the header, which is not read yet;
        # the file's name holds it (pi's <timestamp>_<id>.jsonl), so that an open
        # by path waits for calls already queued on that session by id.
        named = session_id_of(Path(path))
        return named if named is not None and valid_session_id(named) else "path:" + path
    return None


def session_key(params: object) -> str | None:
    """The session a request's params name before they are decoded (a dict, or a Struct decoded
    with its request), as ``queue_key`` reads them once decoded."""
    if isinstance(params, msgspec.Struct):  # (decoded with its request, see SidecarProtocol.handle_body)
        session_id = getattr(params, "sessionId", None)
        return session_id if isinstance(session_id, str) else None
    if not isinstance(params, dict):
        return None
    session_id = params.get("sessionId")
    if isinstance(session_id, str):
        return session_id
    path = params.get("path")
    return "path:" + path if isinstance(path, str) else None


def _in_thread(call: Callable[[Work], object], work: Work) -> object:
    work.check_cancelled()  # cancelled after being handed over, before it began
    return call(work)


@dataclass(slots=True)
class GroupSync:
    """How a call may leave its fsync to a group: ``pending()`` says written
    bytes wait for one, ``settle()`` makes it (blocking; raises if it fails)."""

    pending: Callable[[], bool]
    settle: Callable[[], None]


@dataclass(slots=True)
class _Group:
    sync: GroupSync
    # Calls of the group already done, waiting for its fsync before answering.
    held: list[asyncio.Future[None]] = field(default_factory=list)


class Dispatcher:
    def __init__(self, executor: Executor, send_progress: Callable[[ProgressParams], None]) -> None:
        self._executor = executor
        self._send_progress = send_progress
        self.queues = SessionQueues()
        self.works: dict[object, RequestWork] = {}  # request id -> its handle, while in flight
        self._groups: dict[str, _Group] = {}  # session key -> the group waiting for its fsync
        self._orphans: set[asyncio.Task[None]] = set()

    async def run(
        self,
        msg_id: object,
        title: str,
        key: str | None,
        token: int | str | None,
        call: Callable[[Work], Any],
        on_loop: bool = False,
        sync: GroupSync | None = None,
    ) -> Any:
        """Run ``call(work)`` in its session's turn: in a worker thread, or awaited
        on the event loop when ``on_loop`` (for coroutine operations).

        ``sync`` (with a key) lets the call join its session's group sync: it
        may leave written bytes unsynced, and is answered once a group fsync
        covering them succeeded. Without it, a pending group fsync is made
        before the call runs.
        """
        loop = asyncio.get_running_loop()
        work = RequestWork(loop, self._send_progress, token, title)
        self.works[msg_id] = work
        held: asyncio.Future[None] | None = None
        try:
            if key is not None:
                await self._acquire(key)
            try:
                if key is not None and sync is None and key in self._groups:
                    try:
                        await self._settle(key)
                    except Exception:
                        pass  # the group is answered with it; this call meets the latched error itself
                work.begin()
                work.started = True
                try:
                    if on_loop:
                        work.check_cancelled()
                        result = await call(work)
                    else:
                        result = await loop.run_in_executor(self._executor, _in_thread, call, work)
                except BaseException:
                    if sync is not None and key is not None:
                        await self._pass_on(key, sync)
                    raise
                finally:
                    work.end()
                if sync is not None and key is not None:
                    held = await self._join_or_settle(key, sync)
            finally:
                if key is not None:
                    self.queues.release(key)
            if held is not None:
                await held  # answered once the group's fsync succeeded; raises its error
            return result
        finally:
            self.works.pop(msg_id, None)

    async def _pass_on(self, key: str, sync: GroupSync) -> None:
        """After a call that failed: a pending group fsync goes to the calls
        queued behind, or is made now (its error is the group's, not this call's)."""
        if key not in self._groups and not sync.pending():
            return
        self._groups.setdefault(key, _Group(sync))
        if not self.queues.waiting(key):
            try:
                await self._settle(key)
            except Exception:
                pass

    def may_defer_sync(self, key: str) -> bool:
        """Whether a call now running on ``key`` should leave its fsync to the group:
        others wait behind it, or earlier calls already wait for a group fsync.
        (Read from the worker thread: a waiter that comes just after is only a missed chance.)"""
        return key in self._groups or self.queues.waiting(key)

    async def _join_or_settle(self, key: str, sync: GroupSync) -> asyncio.Future[None] | None:
        """After a call that may have left its fsync pending: hand it on to the
        calls queued behind (a future to await once the lock is released), or
        make the group's fsync now when nobody waits (raising if it fails)."""
        group = self._groups.get(key)
        if group is None:
            if not sync.pending():
                return None
            group = self._groups[key] = _Group(sync)
        if self.queues.waiting(key):
            held: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            group.held.append(held)
            return held
        await self._settle(key)
        return None

    async def _settle(self, key: str) -> None:
        """The fsync of ``key``'s group, in a worker thread; every held call gets its outcome."""
        group = self._groups.pop(key)
        error: BaseException | None = None
        try:
            await asyncio.get_running_loop().run_in_executor(self._executor, group.sync.settle)
        except BaseException as exc:
            error = exc
        for held in group.held:
            if held.done():
                continue
            if error is None:
                held.set_result(None)
            else:
                held.set_exception(error)
        if error is not None:
            raise error

    async def _acquire(self, key: str) -> None:
        try:
            await self.queues.acquire(key)
        except BaseException:
            # Cancelled while waiting: if it was the one a group counted on to
            # make its fsync, make it now.
            if key in self._groups and self.queues.idle(key):
                task = asyncio.ensure_future(self._settle_orphan(key))
                self._orphans.add(task)
                task.add_done_callback(self._orphans.discard)
            raise

    async def _settle_orphan(self, key: str) -> None:
        await self.queues.acquire(key)
        try:
            if key in self._groups:
                await self._settle(key)
        except Exception:
            pass  # its held calls were answered with the error
        finally:
            self.queues.release(key)

    def cancel(self, msg_id: object, task: asyncio.Future[Any] | concurrent.futures.Future[Any] | None) -> bool:
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
