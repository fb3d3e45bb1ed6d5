"""Appending, the context built from a path, compaction and the clearing of old tool results."""

from __future__ import annotations

from typing import Iterator


from .. import wire
from ..operations import compacting, context
from ..work import NO_WORK, Work


class Writing:
    # -- append / context ---------------------------------------------------------------

    def append(self, params: wire.AppendParams, defer_sync: bool = False) -> wire.AppendResult:
        """Append a batch (operations/appending.py). With ``defer_sync`` the sync the policy asks for is
        left to ``durability_of(...).sync_deferred`` (the caller must not answer before it)."""
        return self.appending.append(params, defer_sync)

    def append_run(self, run: list[wire.AppendParams]) -> Iterator[wire.AppendResult | Exception]:
        """``append`` of each call of ``run`` (pipelined appends to one session, none asking for an
        fsync), in order, their lines written together: see ``operations.appending``."""
        return self.appending.run(run)

    def should_compact(self, tokens: int) -> bool:
        return self.appending.should_compact(tokens)

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
