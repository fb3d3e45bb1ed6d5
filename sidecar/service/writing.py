"""Appending, the context built from a path, compaction and the clearing of old tool results."""

from __future__ import annotations

from typing import Any

import msgspec

from .. import external, wire
from ..context.tally import TokenTally
from ..format.jsonl import Entry
from ..operations import compacting, context
from ..store.session import UNSET, Session
from ..work import NO_WORK, Work


class Writing:
    # -- append / context ---------------------------------------------------------------

    def append(self, params: wire.AppendParams, defer_sync: bool = False) -> wire.AppendResult:
        """Append a batch. With ``defer_sync`` the sync the policy asks for is
        left to ``durability_of(...).sync_deferred`` (the caller must not answer before it)."""
        session, change = self.store.live(params.sessionId)
        if params.expectedLeafId is not msgspec.UNSET and params.expectedLeafId != session.leaf_id:
            raise external.session_changed(session, params.expectedLeafId, self.store.blobs)  # type: ignore[arg-type]
        parent = UNSET if params.parentId is msgspec.UNSET else params.parentId
        objs: list[dict[str, Any]] = []
        appended = session.append(params.entries, parent, defer_sync, objs)
        tokens = self._context_tokens(session, appended, objs)
        cleared, tokens = self._clear_tool_results(session, appended, objs, tokens, defer_sync)
        should_compact = self.should_compact(tokens)
        if should_compact:  # (the compaction engine is not loaded for an append that does not need it)
            self.compactor.after_append(session.id, tokens, should_compact, self.settings.compaction.autoCompact)
        return wire.AppendResult(
            entries=[wire.AppendedEntry(id=e.id, parentId=e.parent_id, timestamp=e.timestamp) for e in appended],  # type: ignore[arg-type]
            leafId=session.leaf_id,
            contextTokens=tokens,
            shouldCompact=should_compact,
            external=external.result_field(change),
            clearedToolResults=cleared,
        )

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
            return await self.compact(wire.CompactParams(sessionId=session_id), work, auto=True)
        finally:
            self.compactor.auto_finished(session_id)

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
