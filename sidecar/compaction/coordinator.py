"""Compactions of open sessions: one at a time per session, shared, written once.

The service owns one ``Compactor``. It picks the provider, runs the engine,
and appends the outcome in a single write after the last cancellation check.
Two requests for the same session share one run; a request that finds the
session's leaf still at the compaction this process just wrote gets that
compaction's result (the rpc layer queues calls per session, so a "second
call at once" arrives just after the first finished).
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import CompactionConflict, RequestCancelled
from ..providers import make_provider
from ..providers.base import Provider
from ..store.session import UNSET, Session
from ..work import NO_WORK, Work
from .branch import BRANCH_SUMMARY_MAX_TOKENS, DEFAULT_WINDOW, abandoned_branch, prepare_branch
from .files import format_file_lists
from .progress import check_cancelled
from .prompts import BRANCH_INSTRUCTIONS, BRANCH_SUMMARY_PREAMBLE, with_custom_instructions
from .run import CompactionOptions, CompactionOutcome, StreamMeter, cancellable, fallback_details, run_compaction, summarize

_JOIN_POLL = 0.05
AUTO_REQUEST_TTL = 600.0


@dataclass(slots=True)
class CompactionRecord:
    entry_id: str
    outcome: CompactionOutcome
    duration_ms: int


class _SharedWork(Work):
    """The run's handle: reports go to every waiting request; cancelled once all of them are."""

    def __init__(self, first: Work) -> None:
        self.works: list[Work] = [first]

    @property
    def cancelled(self) -> bool:
        return all(work.cancelled for work in self.works)

    def report(self, message: str | None = None, percentage: int | None = None) -> None:
        for work in list(self.works):
            work.report(message, percentage)


@dataclass(slots=True)
class _Run:
    task: "asyncio.Future[CompactionRecord]"
    work: _SharedWork
    leaf_id: str | None
    auto: bool = False
    done: threading.Event = field(default_factory=threading.Event)


class Compactor:
    def __init__(self, providers_settings: Callable[[], Any], environ: dict[str, str] | None = None) -> None:
        self._providers_settings = providers_settings
        self._environ = environ
        self._runs: dict[str, _Run] = {}
        self._last: dict[str, CompactionRecord] = {}
        # Session id -> when autoCompact was asked for it (monotonic seconds).
        self._auto_requested: dict[str, float] = {}
        self._lock = threading.Lock()
        # Wired by the rpc layer: ask the client (server -> client request) and its loop.
        self.ask_client: Callable[[str, dict[str, Any]], Any] | None = None
        self.client_loop: asyncio.AbstractEventLoop | None = None
        # Called (from the appending thread) when autoCompact is on and an append crossed the line.
        self.on_should_compact: Callable[[str, int], None] | None = None

    # -- providers -----------------------------------------------------------

    def provider(self, name: str | None) -> Provider:
        ask = self._ask_bridge if self.ask_client is not None else None
        return make_provider(name, self._providers_settings(), self._environ, ask)

    async def _ask_bridge(self, method: str, params: dict[str, Any]) -> Any:
        """Ask the client from whichever loop we run on (branch summaries run in a worker's own loop)."""
        assert self.ask_client is not None
        owner = self.client_loop
        try:
            current = asyncio.get_running_loop()
        except RuntimeError:
            current = None
        if owner is None or owner is current:
            return await self.ask_client(method, params)
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self.ask_client(method, params), owner))

    # -- compaction ------------------------------------------------------------

    async def compact(
        self,
        session: Session,
        leaf_id: str | None,
        options: CompactionOptions,
        provider_name: str | None,
        work: Work = NO_WORK,
        auto: bool = False,
    ) -> CompactionRecord:
        while True:
            with self._lock:
                running = self._runs.get(session.id)
                joins = running is not None and leaf_id in (None, running.leaf_id)
                if joins:
                    running.work.works.append(work)  # type: ignore[union-attr]
            if running is None:
                break
            if joins:
                return await self._join(running, work)
            await asyncio.wait({running.task})  # a run for another leaf: let it finish first
        last = self._last.get(session.id)
        if last is not None and session.leaf_id == last.entry_id and leaf_id in (None, last.entry_id):
            return last  # compacted just now and nothing added since: the same compaction
        provider = self.provider(provider_name)
        shared = _SharedWork(work)
        target_leaf = leaf_id if leaf_id is not None else session.leaf_id
        run = _Run(
            task=asyncio.ensure_future(self._compact(session, target_leaf, leaf_id is not None, options, provider, shared)),
            work=shared,
            leaf_id=target_leaf,
            auto=auto,
        )
        with self._lock:
            self._runs[session.id] = run
        try:
            return await self._join(run, work)
        finally:
            if run.task.done():
                self._finish(session.id, run)
            else:
                run.task.add_done_callback(lambda _: self._finish(session.id, run))

    def _finish(self, session_id: str, run: _Run) -> None:
        with self._lock:
            if self._runs.get(session_id) is run:
                del self._runs[session_id]
            if run.auto:
                self._auto_requested.pop(session_id, None)
        run.done.set()

    async def _join(self, run: _Run, work: Work) -> CompactionRecord:
        """Wait for the shared run; this request alone stops waiting when it is cancelled."""
        try:
            while True:
                done, _ = await asyncio.wait({run.task}, timeout=_JOIN_POLL)
                if done:
                    return run.task.result()
                if work.cancelled and not run.work.cancelled:
                    raise RequestCancelled("compaction request cancelled; the compaction continues for other requests")
        except asyncio.CancelledError:
            if work in run.work.works:
                run.work.works.remove(work)
            if not run.work.works and not run.task.done():
                run.task.cancel()
            raise

    async def _compact(
        self, session: Session, leaf_id: str | None, explicit: bool, options: CompactionOptions, provider: Provider, work: Work
    ) -> CompactionRecord:
        started = time.monotonic()
        try:
            path = session.path_to(leaf_id)
            outcome = await run_compaction(path, options, provider, work)
        finally:
            await _close(provider)
        work.report("writing", 95)
        check_cancelled(work, "writing")  # the last point where stopping leaves nothing behind
        session.follow(wait=False)  # another program may have appended while the model summarized
        parent = self._placement(session, leaf_id, explicit)
        written = session.append(outcome.entries, parent)
        record = CompactionRecord(written[-1].id, outcome, int((time.monotonic() - started) * 1000))  # type: ignore[arg-type]
        self._last[session.id] = record
        work.report("compacted", 100)
        return record

    @staticmethod
    def _placement(session: Session, compacted_leaf: str | None, explicit: bool) -> Any:
        """Where the entries go: below the compacted leaf, or the leaf it grew into meanwhile."""
        if explicit or session.leaf_id == compacted_leaf:
            return compacted_leaf if explicit else UNSET
        if compacted_leaf is not None and any(e.id == compacted_leaf for e in session.tree.path(session.leaf_id)):
            return UNSET  # appended to meanwhile: what came after the compacted leaf is kept as well
        raise CompactionConflict(
            f"the session moved to another branch (leaf {session.leaf_id}) while compacting {compacted_leaf}; "
            "nothing was written",
            leafId=session.leaf_id,
            compactedLeafId=compacted_leaf,
        )

    # -- auto-compaction ---------------------------------------------------------

    def after_append(self, session_id: str, tokens: int, should_compact: bool, auto_enabled: bool) -> None:
        """The service's hook: ask the rpc layer for a compaction once per crossing of the line."""
        if not (should_compact and auto_enabled and self.on_should_compact is not None):
            return
        now = time.monotonic()
        with self._lock:
            asked = self._auto_requested.get(session_id)
            # A request never answered (its run was dropped before starting) stops blocking after a while.
            if session_id in self._runs or (asked is not None and now - asked < AUTO_REQUEST_TTL):
                return
            self._auto_requested[session_id] = now
        try:
            self.on_should_compact(session_id, tokens)
        except BaseException:
            with self._lock:
                self._auto_requested.pop(session_id, None)
            raise

    def auto_finished(self, session_id: str) -> None:
        """The rpc layer's auto run ended without starting a compaction (error, nothing to compact)."""
        with self._lock:
            self._auto_requested.pop(session_id, None)

    def wait_idle(self, session_id: str, timeout: float | None = None) -> bool:
        """Block a worker thread until the session's running compaction is over; True if none is left."""
        with self._lock:
            run = self._runs.get(session_id)
        return True if run is None else run.done.wait(timeout)

    # -- branch summaries --------------------------------------------------------

    async def branch_summary(
        self,
        session: Session,
        target_id: str | None,
        options: CompactionOptions,
        provider_name: str | None,
        work: Work = NO_WORK,
    ) -> dict[str, Any] | None:
        """The ``branch_summary`` entry for leaving the current branch for ``target_id``, or None."""
        old_path = session.path_to(session.leaf_id)
        target_path = session.path_to(target_id) if target_id is not None else []
        entries = abandoned_branch(old_path, target_path)
        budget = (options.context_window or DEFAULT_WINDOW) - options.reserve_tokens
        prep = prepare_branch(entries, budget)
        if not prep.messages:
            return None
        provider = self.provider(provider_name)
        try:
            meter = StreamMeter(work, BRANCH_SUMMARY_MAX_TOKENS)
            instructions = with_custom_instructions(BRANCH_INSTRUCTIONS, options.custom_instructions)
            part = await cancellable(
                summarize(provider, prep.messages, instructions, "branch", BRANCH_SUMMARY_MAX_TOKENS, options, meter), work
            )
        finally:
            await _close(provider)
        check_cancelled(work, "writing")
        read_files, modified_files = prep.file_ops.lists()
        details: dict[str, Any] = {"readFiles": read_files, "modifiedFiles": modified_files}
        fallback = fallback_details(provider.name, [part], ["branch"])
        if fallback is not None:
            details["fallback"] = fallback
        return {
            "type": "branch_summary",
            # pi 1.5: the leaf being left (0.73.1 wrote the target here).
            "fromId": session.leaf_id if session.leaf_id is not None else "root",
            "summary": BRANCH_SUMMARY_PREAMBLE + part.text + format_file_lists(read_files, modified_files),
            "details": details,
        }


async def _close(provider: Provider) -> None:
    close = getattr(provider, "close", None)
    if close is not None:
        await close()

