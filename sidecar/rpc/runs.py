"""Runs of pipelined calls: calls read together, written at once.

Calls of a route that may join a run (``Route.run``: session/append), read together (a client
pipelining them), are not run one by one as they are read: the inline ones to one session wait
in a run, which is run when input has no more whole frames ready, or before anything else is
handled or sent (SidecarProtocol.flush_run): one write of all their lines instead of one each,
answered in order, each once its lines are written. Calls that need an fsync never run inline,
so the run never answers ahead of the disk.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import msgspec

from ..service import HeldUpkeep, SessionService
from ..service.methods import Route

logger = logging.getLogger(__name__)

MsgId = int | str


class PendingRun:
    """The calls of one run: all of ``route``, all to session ``key``, read and not run yet."""

    __slots__ = ("calls", "ids", "key", "route")

    def __init__(self) -> None:
        # (id, decoded params) of each call of the run.
        self.calls: list[tuple[MsgId, msgspec.Struct]] = []
        self.ids: set[MsgId] = set()  # the ids of calls: requests in flight, as much as those with a future
        self.key: str | None = None
        self.route: Route | None = None

    def add(self, route: Route, key: str, msg_id: MsgId, decoded: msgspec.Struct) -> None:
        self.calls.append((msg_id, decoded))
        self.ids.add(msg_id)
        self.key, self.route = key, route

    def flush(
        self,
        service: SessionService,
        upkeep: list[HeldUpkeep],
        respond: Callable[[MsgId, object], None],
        refuse: Callable[[MsgId, BaseException], None],
    ) -> None:
        """Run the calls and answer each, in the order they were read (the store's upkeep held until after)."""
        calls, self.calls = self.calls, []
        route = self.route
        if not calls or route is None or route.run is None:
            return
        self.ids.clear()
        answered = 0
        try:
            with service.upkeep_held(upkeep):
                for outcome in route.run(service, [decoded for _, decoded in calls]):
                    msg_id = calls[answered][0]
                    answered += 1
                    if isinstance(outcome, Exception):
                        refuse(msg_id, outcome)
                    else:
                        respond(msg_id, outcome)
        except Exception as exc:  # a bug of ours: every call of the run still gets one answer
            logger.exception("a run of appends failed")
            for msg_id, _ in calls[answered:]:
                refuse(msg_id, exc)
