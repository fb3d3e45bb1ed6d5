"""Appending, the context built from a path, compaction and the clearing of old tool results."""

from __future__ import annotations

from typing import Any, Callable, Iterator

import msgspec

from .. import external, wire
from ..context.tally import TokenTally
from ..format.jsonl import Entry
from ..operations import compacting, context
from ..operations.appendrun import AppendRun
from ..store import UNSET, Session
from ..work import NO_WORK, Work


class Writing:
    # -- append / context ---------------------------------------------------------------

    def append(self, params: wire.AppendParams, defer_sync: bool = False) -> wire.AppendResult:
        """Append a batch. With ``defer_sync`` the sync the policy asks for is
        left to ``durability_of(...).sync_deferred`` (the caller must not answer before it)."""
        session, change = self.store.live(params.sessionId)
        return self._append_to(session, change, params, defer_sync)

    def _append_to(self, session: Session, change: Any, params: wire.AppendParams, defer_sync: bool = False) -> wire.AppendResult:
        if params.expectedLeafId is not msgspec.UNSET and params.expectedLeafId != session.leaf_id:
            raise external.session_changed(session, params.expectedLeafId, self.store.blobs)  # type: ignore[arg-type]
        parent = UNSET if params.parentId is msgspec.UNSET else params.parentId
        objs: list[dict[str, Any]] = []
        appended = session.append(params.entries, parent, defer_sync, objs)
        tokens = self._context_tokens(session, appended, objs)
        cleared, tokens = self._clear_tool_results(session, appended, objs, tokens, defer_sync)
        return self._result_of(session, appended, tokens, change, cleared, session.leaf_id)

    def _result_of(self, session: Session, appended: list[Entry], tokens: int, change: Any,
                   cleared: wire.ClearedToolResults | None, leaf_id: str | None) -> wire.AppendResult:
        should_compact = self.should_compact(tokens)
        if should_compact:  # (the compaction engine is not loaded for an append that does not need it)
            self.compactor.after_append(session.id, tokens, should_compact, self.settings.compaction.autoCompact)
        return wire.AppendResult(
            entries=[wire.AppendedEntry(id=e.id, parentId=e.parent_id, timestamp=e.timestamp) for e in appended],  # type: ignore[arg-type]
            leafId=leaf_id,
            contextTokens=tokens,
            shouldCompact=should_compact,
            external=None if change is None else external.result_field(change),
            clearedToolResults=cleared,
        )

    def append_run(self, run: list[wire.AppendParams]) -> Iterator[wire.AppendResult | Exception]:
        """``append`` of each call of ``run`` (pipelined appends to one session, none asking for an
        fsync), in order, their lines written together: see ``operations.appendrun``."""
        try:
            session, change = self.store.live(run[0].sessionId)
        except Exception as exc:
            yield exc
            yield from map(self._one, run[1:])
            return
        yield from AppendRun(self._tallies, self.settings.compaction.clearToolResults,
                             lambda params: self._outcome(lambda: self._append_to(session, change, params)),
                             self._one, self._answer).run(session, change, run)

    def _answer(self, session: Session, appended: list[Entry], objs: list[dict[str, Any]], tally: TokenTally,
                change: Any, leaf: str | None) -> wire.AppendResult:
        """A call of a run once its lines are written: what ``append`` does after its write, and its result."""
        if appended and session.on_append is not None and session.writer.exists:
            session.on_append(session, appended)
        self._tallies[session] = tally
        if self.settings.compaction.clearToolResults.enabled:
            cleared, tokens = self._clear_tool_results(session, appended, objs, tally.total, False)
        else:  # (what it gives then, without the call: most runs)
            cleared, tokens = None, tally.total
        return self._result_of(session, appended, tokens, change, cleared, leaf if cleared is None else session.leaf_id)

    def _one(self, params: wire.AppendParams) -> wire.AppendResult | Exception:
        return self._outcome(lambda: self.append(params))

    @staticmethod
    def _outcome(call: Callable[[], wire.AppendResult]) -> wire.AppendResult | Exception:
        try:
            return call()
        except Exception as exc:
            return exc

    def should_compact(self, tokens: int) -> bool:
        return compacting.should_compact(tokens, self.settings.compaction)

    def _context_tokens(self, session: Session, appended: list[Entry], objs: list[dict[str, Any]] | None = None) -> int:
        """The context size at the leaf, carried forward from the last append when the path just grew."""
        previous = self._tallies.get(session)
        tally = previous.extended(appended, objs) if previous is not None else None
        if tally is None:
            tally = TokenTally.of_path(session.tree.path(session.leaf_id))
        self._tallies[session] = tally
        return tally.total

    def build_context(self, params: wire.BuildContextParams) -> wire.BuildContextResult:
        session, change = self.store.live(params.sessionId)
        return context.answer(session, change, params, self.store.blobs, self.raw_results)

    # -- compaction -----------------------------------------------------------------------

    async def compact(self, params: wire.CompactParams, work: Work = NO_WORK, auto: bool = False) -> wire.CompactResult:
        """Summarize the older part of a path and append one ``compaction`` entry (async: it awaits a model).

        Progress goes to ``work`` (preparing, pruning, summarizing with the
        streamed token count, writing); a cancel at any point writes nothing.
        """
        session = self.session(params.sessionId)
        session.check_writable()  # before asking a model for a summary that could not be kept
        if params.leafId is not None:
            session.get(params.leafId)
        compacting.check(params)
        options = compacting.options(params, self.settings.compaction)
        record = await self.compactor.compact(session, params.leafId, options, params.provider, work, auto=auto)
        return compacting.result(record)

    async def auto_compact(self, session_id: str, work: Work = NO_WORK) -> wire.CompactResult:
        """The compaction autoCompact asks for (see ``Compactor.on_should_compact``)."""
        try:
            result = await self.compact(wire.CompactParams(sessionId=session_id), work, auto=True)
        except BaseException as error:
            self.compactor.auto_finished(session_id, error)  # a refusal is remembered: no retry on every append
            raise
        self.compactor.auto_finished(session_id)
        return result

    # --- tool-result clearing (issue 13 item 3) ---

    def _clear_tool_results(
        self, session: Session, appended: list[Entry], objs: list[dict[str, Any]], tokens: int, defer_sync: bool
    ) -> tuple[wire.ClearedToolResults | None, int]:
        """After an append past ``compaction.clearToolResults.triggerTokens``: clear old tool outputs in one batch."""
        settings = self.settings.compaction.clearToolResults
        if not settings.enabled or tokens <= settings.triggerTokens:
            return None, tokens
        from ..operations import clearing

        return clearing.clear_after_append(session, appended, objs, tokens, settings, self._tallies, defer_sync)
