"""The service: every protocol method, mapped onto the store and the operations.

``SessionService`` owns its collaborators as fields and hands each what it needs: the store chosen
by the settings (``SessionStore``, store/base.py), the append operation (operations/appending.py:
the tally, tool-result clearing, the compaction trigger), the compactor (loaded on first use), the
live sessions (``LiveHub``), the prompt history, the terminals' breadcrumbs, the watched sessions
and the snapshots. Each method maps one method's params onto them; ``methods.py`` says which
method of the protocol each one serves.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Iterator
from collections.abc import Set as AbstractSet
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import wire
from ..config import Settings
from ..errors import InvalidParams, InvalidState
from ..format.jsstr import session_name
from ..operations.results import DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, open_result, session_info
from ..store import ListQuery, check_session_id, open_store
from ..work import NO_WORK, Work
from .fields import made_on_first_use

if TYPE_CHECKING:
    # Each engine is imported where it is first used (see made_on_first_use): making a service, and
    # answering initialize and a first session/list, loads the store and the listing alone. The
    # compactor is imported when it is first used too (the rpc layer wires its hooks as it is made).
    from .. import external
    from ..compaction.coordinator import Compactor
    from ..history import PromptHistory
    from ..live.events import LiveSessions
    from ..operations.appending import Appending
    from ..snapshots.engine import Snapshots
    from ..store import CachedContext, Durability, FileChange, HeldUpkeep, Session, SessionStore
    from ..store.files import Breadcrumbs
    from .foreign import ForeignSessions
    from .live import LiveClient, LiveHub


class SessionService:
    """One sidecar's sessions: every protocol method, as one object the rpc layer calls.

    Each public method takes the params Struct of one protocol method and returns
    its result Struct (see ``sidecar.wire``); errors are ``SidecarError`` values
    with stable codes. The service is synchronous and thread-safe for calls on
    different sessions; callers serialize calls on one session (the rpc layer
    does, with a queue per session).
    """

    def __init__(self, root: Path, settings: Settings | None = None) -> None:
        settings = settings or Settings()
        self.store: SessionStore = open_store(root, settings, _context_for_cache)  # the backend the settings choose
        # Results only go on the wire (the rpc server sets this): JSON kept from
        # an earlier answer may be sent as is, without decoding it first.
        self.raw_results = False
        self._compactor: Compactor | None = None
        self._compactor_lock = threading.Lock()
        # Wires a new compactor's client hooks (the rpc layer sets it): the engine loads on first use.
        self.on_compactor: Callable[[Compactor], None] | None = None
        # Told (from any thread) when a session starts being watched (the rpc layer starts listening).
        self.on_watch: Callable[[], None] | None = None
        # Wires the live sessions' hooks into the transport when they are made (see ``wire_live``).
        self._on_live: Callable[[LiveSessions], None] | None = None
        # Sends a notification to the clients (the rpc server sets it; any thread may call it).
        self.notify: Callable[[str, object], None] | None = None
        self.store.on_change = self._changed
        self.store.on_append = self._appended
        self.store.on_release = self._released
        self.store.redact_entry = redact_on_append  # used when store.redactOnAppend is on

    # -- the collaborators, each made (and its engine imported) when a method first asks for it --

    @made_on_first_use
    def appending(self) -> Appending:
        """session/append: the tally carried from append to append, clearing, the compaction trigger."""
        from ..operations.appending import Appending

        return Appending(self.store, self._compaction_due)

    @made_on_first_use
    def history(self) -> PromptHistory:
        """Prompts the user typed, across sessions (history/*), beside the listing index."""
        from ..history import PromptHistory
        from ..store.index import INDEX_DIR

        return PromptHistory(self.store.root / INDEX_DIR)

    @made_on_first_use
    def breadcrumbs(self) -> Breadcrumbs:
        """The session each terminal used last (continueRecent with terminalId)."""
        from ..store.files import Breadcrumbs

        return Breadcrumbs(self.store.root)

    @made_on_first_use
    def watches(self) -> external.Watches:
        """Sessions whose clients asked to hear of another program's writes (open/create ``watch``)."""
        from .. import external

        watches = external.Watches(self.store.root)
        watches.on_add = self._watch_added
        return watches

    @made_on_first_use
    def hub(self) -> LiveHub:
        """Subscriptions and roles (sidecar/live/)."""
        from .live import LiveHub

        return LiveHub(self.store, self.watches, self._live_made)

    @made_on_first_use
    def snapshots(self) -> Snapshots:
        """Snapshots of sessions' folders and rewinds (sidecar/snapshots/)."""
        from ..snapshots.engine import Snapshots

        return Snapshots(self.store.root)

    @made_on_first_use
    def foreign(self) -> ForeignSessions:
        """Another tool's transcripts kept as sessions (session/appendForeign...: foreign.py)."""
        from .foreign import ForeignSessions

        return ForeignSessions(self.store, self.appending, self._trash)

    def _watch_added(self) -> None:
        if self.on_watch is not None:
            self.on_watch()

    def has_watches(self) -> bool:
        """Some session is watched (without making the watches when none ever was)."""
        watches = SessionService.watches.made(self)
        return watches is not None and bool(watches)

    def live_made(self) -> LiveSessions | None:
        """The live sessions if they were made already (see ``live``)."""
        hub = SessionService.hub.made(self)
        return hub.made if hub is not None else None

    def wire_live(self, wire_hooks: Callable[[LiveSessions], None]) -> None:
        """Call ``wire_hooks`` on the live sessions when they are made (now, if they are already)."""
        self._on_live = wire_hooks
        made = self.live_made()
        if made is not None:
            wire_hooks(made)

    def _live_made(self, live: LiveSessions) -> None:
        if self._on_live is not None:
            self._on_live(live)

    @property
    def root(self) -> Path:
        return self.store.root

    @property
    def settings(self) -> Settings:
        """The settings in effect (with the values the store settled, such as its compatibility)."""
        return self.store.settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        self.store.settings = settings

    @property
    def live(self) -> LiveSessions:
        """The live sessions' bus and roles (made on first use)."""
        return self.hub.sessions

    @property
    def compactor(self) -> Compactor:
        """Compaction runs, shared per session; the rpc layer wires its client hooks. Made on first use."""
        compactor = self._compactor
        if compactor is None:
            with self._compactor_lock:
                if self._compactor is None:
                    engine: type[Compactor]
                    if self.settings.store.format == "spec":  # the spec's own algorithm and prompts
                        from ..compaction.spec import SpecCompactor as engine
                    else:
                        from ..compaction.coordinator import Compactor as engine
                    made = engine(lambda: self.settings.providers)
                    if self.on_compactor is not None:
                        self.on_compactor(made)
                    self._compactor = made
                compactor = self._compactor
        return compactor

    def _compaction_due(self, session_id: str, tokens: int) -> None:
        self.compactor.after_append(session_id, tokens, True, self.settings.compaction.autoCompact)

    # -- what the rpc layer asks before and after a call ------------------------------

    def is_open(self, session_id: str, turn: int | None = None) -> bool:
        """The session is in memory (calls on it need no file to be read); ``turn``: see ``SessionStore.is_current``."""
        return self.store.is_current(session_id, turn)

    def append_syncs(self, params: wire.AppendParams) -> bool:
        """This append would wait for the disk (an fsync, or the file's creation)."""
        return self.store.append_syncs(params.sessionId, _MessageRoles(params.entries))

    def durability_of(self, session_id: str) -> Durability | None:
        """Where the appends of open session ``session_id`` become durable (for a group sync of deferred appends)."""
        return self.store.durability_of(session_id)

    def upkeep_held(self, held: list[HeldUpkeep]) -> AbstractContextManager[None]:
        return self.store.upkeep_held(held)

    def run_upkeep(self, held: list[HeldUpkeep]) -> None:
        self.store.run_upkeep(held)

    def reindex(self) -> int:
        return self.store.reindex()

    # -- the store's hooks --------------------------------------------------------------

    def follow(self, session_id: str) -> None:
        """Catch an open session up with its file now (the rpc layer's watch calls this in the session's turn)."""
        session = self.store.held(session_id)
        if session is not None and session.writer.error is None:
            self.store.follow(session, wait=False)

    def changed_behind(self, session_id: str) -> bool:
        """The open session's file is not as the session last saw it (one stat)."""
        session = self.store.held(session_id)
        return session is not None and session.changed_behind()

    def on_remote_change(self, callback: Callable[[str], None]) -> None:
        """The rpc layer's follower is told (from any thread) of sessions changed on another host."""
        self.store.on_behind = callback

    # Each hook tells only the collaborators already made: one not made yet has nothing to hear.

    def _changed(self, session: Session, change: FileChange) -> None:
        """Another program changed the session and it caught up: the tally and watchers follow."""
        appending = SessionService.appending.made(self)
        if appending is not None:
            appending.forget(session)
        hub = SessionService.hub.made(self)
        if hub is not None:
            hub.followed(session, change)
        notify = self.notify
        watches = SessionService.watches.made(self)
        if notify is not None and watches is not None and session.id in watches:
            from .. import external

            for method, params in external.notifications(session, change, self.store.blobs):
                notify(method, params)

    def _appended(self, session: Session) -> None:
        hub = SessionService.hub.made(self)
        if hub is not None:
            hub.appended(session)
        watches = SessionService.watches.made(self)
        if watches:
            watches.arm(session)  # a watched session's file may just have been made

    def _released(self, session_id: str) -> None:
        """The store let the session go (closed, moved, deleted): watchers and subscribers stop."""
        watches = SessionService.watches.made(self)
        if watches is not None:
            watches.remove(session_id)
        hub = SessionService.hub.made(self)
        if hub is not None:
            hub.closed(session_id)

    def _set_watch(self, session: Session, watch: bool) -> None:
        if watch:
            self.watches.add(session)
        else:
            watches = SessionService.watches.made(self)
            if watches is not None:
                watches.remove(session.id)

    def _remember_terminal(self, terminal_id: str | None, session: Session) -> None:
        if terminal_id is not None and not session.in_memory:
            self.breadcrumbs.remember(terminal_id, session.header_obj().get("cwd", ""), self.store.location(session))

    # -- sessions -----------------------------------------------------------------------

    def session(self, session_id: str) -> Session:
        """An open session (opened when it is not); see ``SessionStore.live``."""
        return self.store.live(session_id)[0]

    def create(self, params: wire.CreateParams) -> wire.CreateResult:
        if params.terminalId is not None:
            _check_terminal_id(params.terminalId)
        session = self.store.create(
            params.cwd, params.sessionId, params.parentSession, params.persist, **self._origin_of(params)
        )
        self._set_watch(session, params.watch)
        if params.name is not None and session_name(params.name):
            session.set_name(params.name)
        if params.terminalId is not None and params.persist:
            self.breadcrumbs.remember(params.terminalId, params.cwd, self.store.location(session))
        return wire.CreateResult(sessionId=session.id, path=self.store.location(session), header=session.header_obj())

    def open(self, params: wire.OpenParams) -> wire.OpenResult:
        if params.terminalId is not None:
            _check_terminal_id(params.terminalId)
        if (params.sessionId is None) == (params.path is None):
            raise InvalidParams("session/open takes exactly one of sessionId and path")
        session, report = self.store.open(params.sessionId, params.path, params.readOnly)
        self._set_watch(session, params.watch)
        self._remember_terminal(params.terminalId, session)
        return open_result(session, self.store.location(session), report.parse_errors, report.migrated_from)

    def continue_recent(self, params: wire.ContinueRecentParams) -> wire.OpenResult | None:
        last_used = None
        if params.terminalId is not None:
            _check_terminal_id(params.terminalId)
            last_used = self.breadcrumbs.recall(params.terminalId, params.cwd)
        for session, report, preferred in self.store.recent(params.cwd, last_used):
            if not preferred:
                self._remember_terminal(params.terminalId, session)
            return open_result(session, self.store.location(session), report.parse_errors, report.migrated_from)
        return None

    def close(self, params: wire.CloseParams) -> None:
        session = self.store.release(params.sessionId)
        self._released(session.id)

    def close_all(self) -> None:
        """Flush and close every open session (shutdown, EOF)."""
        watches = SessionService.watches.made(self)
        if watches is not None:
            watches.close()
        self.store.close_all()
        history = SessionService.history.made(self)
        if history is not None:
            history.close()

    def flush(self, params: wire.FlushParams) -> wire.FlushResult:
        session = self.session(params.sessionId)
        session.flush()
        return wire.FlushResult(persisted=session.persisted)

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
        from ..operations import context

        session, change = self.store.live(params.sessionId)
        return context.answer(session, change, params, self.store.blobs, self.raw_results)

    # -- compaction -----------------------------------------------------------------------

    async def compact(self, params: wire.CompactParams, work: Work = NO_WORK, auto: bool = False) -> wire.CompactResult:
        """Summarize the older part of a path and append one ``compaction`` entry (async: it awaits a model).

        Progress goes to ``work`` (preparing, pruning, summarizing with the
        streamed token count, writing); a cancel at any point writes nothing.
        """
        from ..operations import compacting

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

    # -- tree ---------------------------------------------------------------------------

    def branch(self, params: wire.BranchParams, work: Work = NO_WORK) -> wire.BranchResult:
        session = self.session(params.sessionId)
        if params.entryId is not None:
            session.get(params.entryId)
        if params.summarize and params.entryId != session.leaf_id:
            from ..operations import compacting

            session.check_writable()  # before asking a model for a summary that could not be kept
            # Summarizing awaits a model: run it on this worker thread's own loop.
            summary = asyncio.run(
                self.compactor.branch_summary(
                    session, params.entryId, compacting.options(params, self.settings.compaction), params.provider, work
                )
            )
            if summary is not None:
                written = session.append([summary], params.entryId)
                return wire.BranchResult(leafId=session.leaf_id, summaryEntryId=written[0].id)
        session.branch(params.entryId)
        hub = SessionService.hub.made(self)
        if hub is not None:
            hub.leaf_moved(session)
        return wire.BranchResult(leafId=session.leaf_id)

    def get_tree(self, params: wire.GetTreeParams) -> wire.GetTreeResult:
        from .. import external

        session, change = self.store.live(params.sessionId)
        labels = session.tree.labels
        nodes = [
            wire.TreeNode(
                id=entry.id,  # type: ignore[arg-type]  # an entry in a tree has an id (Entry's is optional for v1 lines)
                parentId=parent,
                type=entry.type,
                timestamp=entry.timestamp,
                role=entry.role() if entry.type == "message" else None,
                label=labels.get(entry.id),  # type: ignore[arg-type]  # (as above)
            )
            for entry, parent in session.tree.effective_parents()
        ]
        return wire.GetTreeResult(nodes=nodes, leafId=session.leaf_id, external=external.result_field(change))

    def get_entries(self, params: wire.GetEntriesParams) -> wire.GetEntriesResult:
        from .. import external

        session = self.session(params.sessionId)
        entries = session.tree.entries if params.ids is None else [session.get(i) for i in params.ids]
        return wire.GetEntriesResult(entries=external.entry_objects(entries, self.store.blobs))

    def set_label(self, params: wire.SetLabelParams) -> wire.SetLabelResult:
        session = self.session(params.sessionId)
        entry = session.set_label(params.entryId, params.label)
        return wire.SetLabelResult(entryId=entry.id, leafId=session.leaf_id)  # type: ignore[arg-type]  # written: it has an id

    def set_name(self, params: wire.SetNameParams) -> wire.SetNameResult:
        session = self.session(params.sessionId)
        titled = session.prefix
        entry = session.set_name(params.name)
        if session.prefix != titled:
            self.store.renamed(session)
        return wire.SetNameResult(entryId=entry.id, name=session.name, title=session.name)  # type: ignore[arg-type]  # written: it has an id

    def fork(self, params: wire.ForkParams) -> wire.ForkResult:
        """Copy the path root -> entry into a new session, connected (store/pathcopy.py).

        Label entries on the path are dropped and the labels of the copied
        entries written again after them, so labels set on other branches
        (whose label entries are not on the path) are kept too.
        """
        source = self.session(params.sessionId)
        target_id = params.entryId if params.entryId is not None else source.leaf_id
        if target_id is None:
            raise InvalidState("the session is empty (or its leaf was reset); name an entryId to fork from")
        target = source.get(target_id)
        if params.entryId is not None and target.type == "message" and target.role() not in ("user", "assistant"):
            raise InvalidParams(
                f"fork from a user or assistant message; entry {target_id} is a {target.role()} message "
                "(forking there could leave a tool call without its result)",
                entryId=target_id,
            )
        from ..store import connected_path, label_timestamps

        copied = connected_path(source.tree.path(target_id), source.tree.labels, label_timestamps(source.tree.entries))
        cwd = params.cwd if params.cwd is not None else source.header_obj().get("cwd", "")
        forked = self.store.copy(source, copied.entries, copied.labels, cwd)
        return wire.ForkResult(sessionId=forked.id, path=self.store.location(forked), persisted=forked.persisted)

    # -- snapshots and rewind (sidecar/snapshots/) -----------------------------------------------

    def snapshot(self, params: wire.SnapshotParams) -> wire.SnapshotResult:
        return self.snapshots.snapshot(self.session(params.sessionId), params)

    def diff(self, params: wire.DiffParams) -> wire.DiffResult:
        return self.snapshots.diff(self.session(params.sessionId), params)

    def rewind(self, params: wire.RewindParams) -> wire.RewindResult:
        return self.snapshots.rewind(self.session(params.sessionId), params)

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
            watches = SessionService.watches.made(self)
            if watches is not None:
                watches.remove(session.id)
            return wire.DeleteResult(sessionId=params.sessionId, trashPath=None)
        location = self.store.move(params.sessionId, None, "trash")
        return wire.DeleteResult(sessionId=params.sessionId, trashPath=location)

    def _trash(self, session_id: str) -> None:
        """Move a session to the trash as session/delete does (prune and deleteForeign)."""
        self.delete(wire.DeleteParams(sessionId=session_id))

    # -- foreign sessions (foreign.py) ------------------------------------------------------------

    def append_foreign(self, params: wire.AppendForeignParams) -> wire.AppendForeignResult:
        return self.foreign.append(params)

    def load_foreign(self, params: wire.LoadForeignParams) -> wire.LoadForeignResult:
        return self.foreign.load(params)

    def list_foreign(self, params: wire.ListForeignParams) -> wire.ListForeignResult:
        return self.foreign.list(params)

    def delete_foreign(self, params: wire.DeleteForeignParams) -> wire.DeleteForeignResult:
        return self.foreign.delete(params)

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
        from ..operations import upkeep

        return upkeep.stats(self.store, params)

    def prune(self, params: wire.PruneParams) -> wire.PruneResult:
        from ..operations import upkeep

        return upkeep.prune(self.store, params, self.settings.retention, self._trash)

    # -- prompt history (operations/history.py) ------------------------------------------------------

    def history_add(self, params: wire.HistoryAddParams) -> None:
        from ..operations import history as prompt_history

        prompt_history.add(self.history, params)

    def history_search(self, params: wire.HistorySearchParams) -> wire.HistoryResult:
        from ..operations import history as prompt_history

        return prompt_history.search(self.history, params)

    def history_list(self, params: wire.HistoryListParams) -> wire.HistoryResult:
        from ..operations import history as prompt_history

        return prompt_history.recent(self.history, params)

    # --- import (session/import: sessions of Codex, Claude Code and opencode as pi sessions) ---
    def import_(self, params: wire.ImportParams) -> wire.ImportResult:
        from ..importers.run import import_sources

        return import_sources(self.store, params)

    # --- export (sidecar/export/) ---

    def export(self, params: wire.ExportParams) -> wire.ExportResult:
        from ..operations import exporting

        return exporting.export(self.session(params.sessionId), params, self.store.blobs)

    # --- spec format (issue 14): where a session came from, converting between formats ---

    def _origin_of(self, params: wire.CreateParams) -> dict[str, Any]:
        """create's source/cronJobId, which only a spec-format store keeps (pi's header has no place for them)."""
        if params.source is None and params.cronJobId is None:
            return {}
        if self.settings.store.format != "spec":
            raise InvalidParams(
                'source and cronJobId are kept by spec-format roots only (store.format "spec")',
                field="source" if params.source is not None else "cronJobId",
            )
        return {"source": params.source, "cron_job_id": params.cronJobId}

    def convert(self, params: wire.ConvertParams) -> wire.ConvertResult:
        from ..operations import convert

        return convert.convert(self.store, params)

    # -- live sessions (sidecar/live/: subscriptions, roles) ------------------------------

    def live_subscribe(self, params: wire.SubscribeParams, client: LiveClient) -> wire.SubscribeResult:
        return self.hub.subscribe(params, client)

    def live_unsubscribe(self, params: wire.UnsubscribeParams, client: LiveClient) -> wire.UnsubscribeResult:
        return self.hub.unsubscribe(params, client)

    def live_take_control(self, params: wire.TakeControlParams, client: LiveClient) -> wire.TakeControlResult:
        return self.hub.take_control(params, client)


def _context_for_cache(session: Session) -> CachedContext | None:
    """The context the file store's tree cache keeps (operations/cached.py), its engine loaded when a cache is first written."""
    from ..operations.cached import context_for_cache

    return context_for_cache(session)


def _check_terminal_id(terminal_id: str) -> None:
    from ..store.files import check_terminal_id

    check_terminal_id(terminal_id)


def redact_on_append(obj: dict[str, Any]) -> dict[str, Any]:
    """store.redactOnAppend: one entry with its secrets replaced (numbered within the entry)."""
    from ..export.redact import Redactor

    return Redactor().value(obj)


class _MessageRoles(AbstractSet[str]):
    """The roles of an append's messages, gathered only if the store asks (``roles & {...}``,
    ``"assistant" in roles``): under most fsync policies it need not look at the entries."""

    __slots__ = ("_entries", "_roles")

    def __init__(self, entries: list[Any]) -> None:
        self._entries = entries
        self._roles: set[str] | None = None

    def _gathered(self) -> set[str]:
        if self._roles is None:
            self._roles = {
                e["message"].get("role")
                for e in self._entries
                if isinstance(e, dict) and e.get("type") == "message" and isinstance(e.get("message"), dict)
            }
        return self._roles

    def __contains__(self, role: object) -> bool:
        return role in self._gathered()

    def __iter__(self) -> Iterator[str]:
        return iter(self._gathered())

    def __len__(self) -> int:
        return len(self._gathered())

    def __and__(self, other: AbstractSet[object]) -> set[str]:
        return self._gathered() & set(other)
