"""Sessions as a collection: the listing, archive / trash / restore / move, upkeep and the prompt history."""

from __future__ import annotations

import os


from .. import wire
from ..errors import InvalidParams
from ..operations import upkeep
from ..operations import history as prompt_history
from ..operations.results import DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, session_info
from ..store import ListQuery, check_session_id
from ..work import NO_WORK, Work


class ShelfCalls:
    # -- list ---------------------------------------------------------------------------------

    def list(self, params: wire.ListParams, work: Work = NO_WORK) -> wire.ListResult:
        limit = params.limit if params.limit is not None else DEFAULT_LIST_LIMIT
        if limit < 1 or limit > MAX_LIST_LIMIT:
            raise InvalidParams(f"limit must be between 1 and {MAX_LIST_LIMIT}", limit=limit)
        after = None
        if params.cursor is not None:
            after = self.store.decode_cursor(params.cursor)
            if after is None:
                raise InvalidParams("cursor is not one this server gave out; pass nextCursor from the previous page")
        query = ListQuery(params.cwd, params.all, params.includeArchived, params.query, limit, after)
        page = self.store.list(query, work)
        return wire.ListResult(sessions=[session_info(s) for s in page.sessions], nextCursor=page.next_cursor)

    # -- archive / delete / restore / move ----------------------------------------------------

    def archive(self, params: wire.ArchiveParams) -> wire.ArchiveResult:
        location = self.store.move(params.sessionId, "live", "archive")
        return wire.ArchiveResult(sessionId=params.sessionId, path=location, archived=True)

    def unarchive(self, params: wire.ArchiveParams) -> wire.ArchiveResult:
        location = self.store.move(params.sessionId, "archive", "live")
        return wire.ArchiveResult(sessionId=params.sessionId, path=location, archived=False)

    def delete(self, params: wire.DeleteParams) -> wire.DeleteResult:
        """Move to the trash (from the live or the archived area); nothing is erased."""
        check_session_id(params.sessionId)
        session = self.store.held(params.sessionId)
        if session is not None and not session.persisted:
            self.store.forget(session.id)  # nothing was written: nothing to move
            self.watches.remove(session.id)
            return wire.DeleteResult(sessionId=params.sessionId, trashPath=None)
        location = self.store.move(params.sessionId, None, "trash")
        return wire.DeleteResult(sessionId=params.sessionId, trashPath=location)

    def restore(self, params: wire.RestoreParams) -> wire.RestoreResult:
        location = self.store.move(params.sessionId, "trash", "live")
        return wire.RestoreResult(sessionId=params.sessionId, path=location)

    def move(self, params: wire.MoveParams) -> wire.MoveResult:
        """Give a live session another project folder (its header's cwd and where it is kept)."""
        check_session_id(params.sessionId)
        if not os.path.isabs(params.cwd) or "\x00" in params.cwd:
            raise InvalidParams(f"cwd must be an absolute path, not {params.cwd!r}", field="cwd")
        return wire.MoveResult(sessionId=params.sessionId, path=self.store.move_cwd(params.sessionId, params.cwd))

    # -- upkeep: stats and retention (operations/upkeep.py) ----------------------------------------

    def stats(self, params: wire.StatsParams) -> wire.StatsResult:
        return upkeep.stats(self.store, params)

    def prune(self, params: wire.PruneParams) -> wire.PruneResult:
        trash = lambda session_id: self.delete(wire.DeleteParams(sessionId=session_id))  # noqa: E731
        return upkeep.prune(self.store, params, self.settings.retention, trash)

    # -- prompt history (operations/history.py) ------------------------------------------------------

    def history_add(self, params: wire.HistoryAddParams) -> None:
        prompt_history.add(self.history, params)

    def history_search(self, params: wire.HistorySearchParams) -> wire.HistoryResult:
        return prompt_history.search(self.history, params)

    def history_list(self, params: wire.HistoryListParams) -> wire.HistoryResult:
        return prompt_history.recent(self.history, params)
