"""The table of methods: for each method of ``sidecar.wire.METHODS``, one route.

A ``Route`` says what a method's params decode into, which service call answers it and what the
transport must know of it to run it; the rpc layer reads these properties and never a method's
name. ``wire.METHODS`` stays the contract (the schema is generated from it); ``ROUTES`` covers
exactly its methods (tests/rpc/test_methods.py says so).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import msgspec

from .. import wire
from ..work import NO_WORK, Work
from .core import SessionService
from .live import LiveClient


@dataclass(frozen=True, slots=True)
class Route:
    """One method: its params type, the service call answering it, and how it may be run.

    ``handler(service, params)``, with ``work`` after the params when ``takes_work``, the
    connection when ``takes_client``; a coroutine when ``on_loop``.
    """

    name: str
    params: type[msgspec.Struct]
    handler: Callable[..., object]
    # Gets the call's progress-and-cancel handle (work.py).
    takes_work: bool = False
    # Gets the connection it came on (the live methods: subscriptions and roles are a client's).
    takes_client: bool = False
    # A coroutine: awaited on the event loop in its session's turn, not run in a worker thread.
    on_loop: bool = False
    # Runs in its session's turn (in arrival order with the session's other calls); False: answered
    # as soon as it is read.
    queued: bool = True
    # Changes a session: on a shared server, only the client controlling it may call it (live/roles.py).
    writes_session: bool = False
    # Cheap enough to be answered where it is read, without a worker thread, when its session is
    # in memory with nothing queued for it, unless ``inline_unless(service, params)`` says it must wait
    # (an fsync, a model to ask).
    may_run_inline: bool = False
    inline_unless: Callable[..., bool] | None = None
    # Calls read together that may run inline join one run, written together:
    # ``run(service, [params, ...])`` gives each call's result or error, in order.
    run: Callable[..., Iterator[object]] | None = None
    # Calls queued on one session may share one fsync: the handler takes ``defer_sync`` after the
    # params, and the sync is left to ``service.durability_of(session)``.
    group_sync: bool = False
    # The busiest method: its requests are decoded with their params in one pass.
    hot: bool = False

    @property
    def may_join_run(self) -> bool:
        return self.run is not None

    def call(
        self, service: SessionService, params: msgspec.Struct, work: Work = NO_WORK, client: LiveClient | None = None
    ) -> object:
        """The service call, as this route takes it."""
        if self.takes_work:
            return self.handler(service, params, work)
        if self.takes_client:
            return self.handler(service, params, client)
        return self.handler(service, params)


def _append_syncs(service: SessionService, params: wire.AppendParams) -> bool:
    return service.append_syncs(params)


def _summarizes(service: SessionService, params: wire.BranchParams) -> bool:
    return params.summarize  # a branch summary asks a model


_S = SessionService
ROUTES: dict[str, Route] = {
    route.name: route
    for route in (
        Route("session/create", wire.CreateParams, _S.create),
        Route("session/open", wire.OpenParams, _S.open),
        Route("session/continueRecent", wire.ContinueRecentParams, _S.continue_recent),
        Route("session/close", wire.CloseParams, _S.close),
        Route("session/flush", wire.FlushParams, _S.flush, writes_session=True),
        Route(
            "session/append",
            wire.AppendParams,
            _S.append,
            writes_session=True,
            may_run_inline=True,
            inline_unless=_append_syncs,
            run=_S.append_run,
            group_sync=True,
            hot=True,
        ),
        Route("session/buildContext", wire.BuildContextParams, _S.build_context),
        Route(
            "session/branch",
            wire.BranchParams,
            _S.branch,
            takes_work=True,
            writes_session=True,
            may_run_inline=True,
            inline_unless=_summarizes,
        ),
        Route("session/getTree", wire.GetTreeParams, _S.get_tree),
        Route("session/getEntries", wire.GetEntriesParams, _S.get_entries),
        Route("session/setLabel", wire.SetLabelParams, _S.set_label, writes_session=True, may_run_inline=True),
        Route("session/setName", wire.SetNameParams, _S.set_name, writes_session=True, may_run_inline=True),
        Route("session/fork", wire.ForkParams, _S.fork),
        Route("session/list", wire.ListParams, _S.list, takes_work=True),
        Route("session/archive", wire.ArchiveParams, _S.archive, writes_session=True),
        Route("session/unarchive", wire.ArchiveParams, _S.unarchive, writes_session=True),
        Route("session/delete", wire.DeleteParams, _S.delete, writes_session=True),
        Route("session/restore", wire.RestoreParams, _S.restore, writes_session=True),
        Route("session/compact", wire.CompactParams, _S.compact, takes_work=True, on_loop=True, writes_session=True),
        Route("session/move", wire.MoveParams, _S.move, writes_session=True),
        Route("session/stats", wire.StatsParams, _S.stats),
        Route("session/prune", wire.PruneParams, _S.prune),
        Route("history/add", wire.HistoryAddParams, _S.history_add),
        Route("history/search", wire.HistorySearchParams, _S.history_search),
        Route("history/list", wire.HistoryListParams, _S.history_list),
        Route("session/snapshot", wire.SnapshotParams, _S.snapshot, writes_session=True),
        Route("session/diff", wire.DiffParams, _S.diff),
        Route("session/rewind", wire.RewindParams, _S.rewind, writes_session=True),
        Route("session/import", wire.ImportParams, _S.import_),
        Route("session/export", wire.ExportParams, _S.export),
        Route("session/convert", wire.ConvertParams, _S.convert),
        # Their params name no sessionId field (it is derived: wire.foreign_session_id): run in that
        # session's turn once decoded, not gated by roles (the gate reads the undecoded params).
        Route("session/appendForeign", wire.AppendForeignParams, _S.append_foreign),
        Route("session/loadForeign", wire.LoadForeignParams, _S.load_foreign),
        Route("session/listForeign", wire.ListForeignParams, _S.list_foreign),
        Route("session/deleteForeign", wire.DeleteForeignParams, _S.delete_foreign),
        Route("session/subscribe", wire.SubscribeParams, _S.live_subscribe, takes_client=True),
        Route("session/unsubscribe", wire.UnsubscribeParams, _S.live_unsubscribe, takes_client=True, queued=False),
        Route("session/takeControl", wire.TakeControlParams, _S.live_take_control, takes_client=True, queued=False),
    )
}
