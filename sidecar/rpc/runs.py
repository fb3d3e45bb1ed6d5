"""Runs of pipelined appends: the protocol's part that writes appends read together at once.

Appends read together (a client pipelining them) are not run one by one as they are
read: the inline ones to one session wait in a run, which is run when input has no
more whole frames ready, or before anything else is handled or sent (flush_run): one
write of all their lines instead of one each (Writing.append_run), answered in order,
each once its lines are written. Appends that need an fsync never run inline, so the
run never answers ahead of the disk.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server import SidecarServer

logger = logging.getLogger(__name__)

# What an inline handler returns when the call must take the usual path (handlers.py).
NOT_INLINE = object()


class AppendRuns:
    """SidecarProtocol's runs (protocol.py): inline appends to one session, read and not run yet."""

    _server: "SidecarServer"
    upkeep: list[Any]
    # (id, decoded params) of each append of the run, all to session _run_key.
    _run: list[tuple[Any, Any]]
    _run_key: str | None
    _run_ids: set[Any]  # the ids of _run: requests in flight, as much as those with a future

    def _send_error(self, msg_id: Any, exc: BaseException) -> None:
        raise NotImplementedError

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        raise NotImplementedError

    def _schedule_upkeep(self) -> None:
        raise NotImplementedError

    def join_run(self, msg_id: Any, join: Any, params: Any, key: str) -> bool:
        """An inline append joins the run (answered at flush_run); False when it must take the usual path."""
        if self._run and self._run_key != key:
            self.flush_run()
        try:
            decoded = join(params, bool(self._run))  # (a run left is one of this session)
        except Exception as exc:  # bad params: answered now, after the appends read before it
            self._send_error(msg_id, exc)
            return True
        if decoded is NOT_INLINE:
            return False
        self._run.append((msg_id, decoded))
        self._run_ids.add(msg_id)
        self._run_key = key
        return True

    def flush_run(self) -> None:
        """Run the appends of the run and answer each, in the order they were read."""
        run, self._run = self._run, []
        if not run:
            return
        self._run_ids.clear()
        service = self._server.service
        answered = 0
        try:
            with service.upkeep_held(self.upkeep):
                for outcome in service.append_run([decoded for _, decoded in run]):
                    msg_id = run[answered][0]
                    answered += 1
                    if isinstance(outcome, Exception):
                        self._send_error(msg_id, outcome)
                    else:
                        self._send_response(msg_id, result=outcome)
        except Exception as exc:  # a bug of ours: every call of the run still gets one answer
            logger.exception("a run of appends failed")
            for msg_id, _ in run[answered:]:
                self._send_error(msg_id, exc)
        self._schedule_upkeep()
