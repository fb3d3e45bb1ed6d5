"""Compactions of open sessions: one at a time per session, shared, written once.

The service owns one ``Compactor``. It picks the provider, runs the engine,
and appends the outcome in a single write after the last cancellation check.
Two requests for the same session while its run is in flight share that run.
A request that finds the leaf at a compaction already is refused
(``NothingToCompact``, naming it), whoever wrote it and whenever: the answer
does not depend on what this process remembers.

autoCompact must not loop: when a run it asked for is refused (nothing to
compact, or a summary that would not shrink the context), the session is not
asked for again until its context has grown past what it was at the refusal
(see ``Compactor.after_append``).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import CompactionConflict, CompactionNotSmaller, NothingToCompact, RequestCancelled, SidecarError
from ..providers import default_provider_name, make_provider
from ..providers.base import Provider
from ..store import UNSET, Session
from ..work import NO_WORK, Work
from .branch import BRANCH_SUMMARY_MAX_TOKENS, DEFAULT_WINDOW, abandoned_branch, prepare_branch
from .files import format_file_lists
from .progress import check_cancelled
from .prompts import BRANCH_INSTRUCTIONS, BRANCH_SUMMARY_PREAMBLE, with_custom_instructions
from .run import (
    CompactionOptions,
    CompactionOutcome,
    StreamMeter,
    cancellable,
    fallback_details,
    run_compaction,
    summarize,
)

if TYPE_CHECKING:
    from ..config import ProvidersSettings

_JOIN_POLL = 0.05
AUTO_REQUEST_TTL = 600.0
# After a refused autoCompact, how much the context must grow (tokens, at least) before it is asked
# for again: the summary's overweight when larger (the summarized span must catch up with it).
AUTO_RETRY_GROWTH = 1_000


@dataclass(slots=True)
class CompactionRecord:
    entry_id: str
    outcome: CompactionOutcome
    duration_ms: int
    # Set when no provider was named (call or settings) and none had a key, so the offline one ran.
    default_fallback: str | None = None


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
    task: asyncio.Future[CompactionRecord]
    work: _SharedWork
    leaf_id: str | None
    auto: bool = False
    done: threading.Event = field(default_factory=threading.Event)


class Compactor:
    def __init__(
        self, providers_settings: Callable[[], ProvidersSettings], environ: dict[str, str] | None = None
    ) -> None:
        self._providers_settings = providers_settings
        self._environ = environ
        self._runs: dict[str, _Run] = {}
        # Session id -> when autoCompact was asked for it (monotonic seconds), and the context's size then.
        self._auto_requested: dict[str, float] = {}
        self._auto_tokens: dict[str, int] = {}
        # Session id -> the context size an append must reach before autoCompact is asked for again
        # (set when a run it asked for was refused; cleared by a compaction that is written).
        self._auto_refused: dict[str, int] = {}
        self._lock = threading.Lock()
        # Wired by the rpc layer: ask the client (server -> client request) and its loop.
        self.ask_client: Callable[[str, dict[str, object]], Coroutine[object, object, object]] | None = None
        self.client_loop: asyncio.AbstractEventLoop | None = None
        # Called (from the appending thread) when autoCompact is on and an append crossed the line.
        self.on_should_compact: Callable[[str, int], None] | None = None

    # -- providers -----------------------------------------------------------

    def provider(self, name: str | None) -> Provider:
        ask = self._ask_bridge if self.ask_client is not None else None
        return make_provider(name, self._providers_settings(), self._environ, ask)

    async def _ask_bridge(self, method: str, params: dict[str, object]) -> object:
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
                    running.work.works.append(work)  # type: ignore[union-attr]  # joins implies running is not None
            if running is None:
                break
            if joins:
                return await self._join(running, work)
            await asyncio.wait({running.task})  # a run for another leaf: let it finish first
        provider = self.provider(provider_name)
        default_fallback = self._default_fallback(provider_name, provider)
        shared = _SharedWork(work)
        target_leaf = leaf_id if leaf_id is not None else session.leaf_id
        run = _Run(
            task=asyncio.ensure_future(
                self._run(session, target_leaf, leaf_id is not None, options, provider, shared, default_fallback)
            ),
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

    def _default_fallback(self, provider_name: str | None, provider: Provider) -> str | None:
        """Why the default fell back to the offline provider; None when a provider was asked for.

        A call naming its provider, or settings naming the default, get that provider or an error
        (providerNotConfigured); only the unnamed default falls back, and the result says so."""
        if provider_name is not None or provider.name != "offline":
            return None
        settings = self._providers_settings()
        if getattr(settings, "default", None):
            return None  # offline by choice
        return "noProviderConfigured" if default_provider_name(settings, self._environ) == "offline" else None

    async def _run(
        self,
        session: Session,
        leaf_id: str | None,
        explicit: bool,
        options: CompactionOptions,
        provider: Provider,
        work: Work,
        default_fallback: str | None,
    ) -> CompactionRecord:
        record = await self._compact(session, leaf_id, explicit, options, provider, work)
        record.default_fallback = default_fallback
        with self._lock:
            self._auto_refused.pop(session.id, None)  # the context changed shape: autoCompact may ask afresh
        return record

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
        self,
        session: Session,
        leaf_id: str | None,
        explicit: bool,
        options: CompactionOptions,
        provider: Provider,
        work: Work,
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
        record = CompactionRecord(written[-1].id, outcome, int((time.monotonic() - started) * 1000))  # type: ignore[arg-type]  # a written entry has an id (Entry.id is Optional for the header)
        work.report("compacted", 100)
        return record

    @staticmethod
    def _placement(session: Session, compacted_leaf: str | None, explicit: bool) -> object:
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
            refused_until = self._auto_refused.get(session_id)
            if refused_until is not None:
                if tokens < refused_until:
                    return  # refused at about this size: asking again would only be refused again
                del self._auto_refused[session_id]
            asked = self._auto_requested.get(session_id)
            # A request never answered (its run was dropped before starting) stops blocking after a while.
            if session_id in self._runs or (asked is not None and now - asked < AUTO_REQUEST_TTL):
                return
            self._auto_requested[session_id] = now
            self._auto_tokens[session_id] = tokens
        try:
            self.on_should_compact(session_id, tokens)
        except BaseException:
            with self._lock:
                self._auto_requested.pop(session_id, None)
            raise

    def auto_finished(self, session_id: str, error: BaseException | None = None) -> None:
        """The rpc layer's auto run ended (``error``: it wrote nothing).

        A refusal that more of the same context cannot change soon (nothing to compact, a summary
        that would not shrink it) is remembered: autoCompact is not asked for again until the
        context has grown by ``AUTO_RETRY_GROWTH`` tokens (or the summary's overweight, when larger)
        past its size at the refusal. Without that, every append past the line would run (and pay
        for) the same refused summary again."""
        with self._lock:
            self._auto_requested.pop(session_id, None)
            tokens = self._auto_tokens.pop(session_id, None)
            if isinstance(error, (NothingToCompact, CompactionNotSmaller)) and tokens is not None:
                self._auto_refused[session_id] = tokens + auto_retry_growth(error)

    def auto_refused_until(self, session_id: str) -> int | None:
        """The context size at which autoCompact will be asked for again after a refusal, if one holds."""
        with self._lock:
            return self._auto_refused.get(session_id)

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
    ) -> dict[str, object] | None:
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
                summarize(provider, prep.messages, instructions, "branch", BRANCH_SUMMARY_MAX_TOKENS, options, meter),
                work,
            )
        finally:
            await _close(provider)
        check_cancelled(work, "writing")
        read_files, modified_files = prep.file_ops.lists()
        details: dict[str, object] = {"readFiles": read_files, "modifiedFiles": modified_files}
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


def auto_retry_growth(error: SidecarError) -> int:
    """How much the context must grow before autoCompact tries again after ``error``."""
    overweight = 0
    if isinstance(error, CompactionNotSmaller):
        overweight = int(error.data.get("summaryTokens", 0)) - int(error.data.get("replacedTokens", 0)) + 1
    return max(AUTO_RETRY_GROWTH, overweight)


async def _close(provider: Provider) -> None:
    close = getattr(provider, "close", None)
    if close is not None:
        await close()
