"""How a running compaction shows itself and learns it should stop.

Compaction takes the service's ``Work`` handle (``sidecar.work``): the rpc
layer turns ``report`` into ``$/progress`` on the work-done token and
``$/cancelRequest`` into ``cancelled``. Asyncio cancellation works as well.
Every check happens before the single write, so stopping writes nothing.
"""

from __future__ import annotations

from ..errors import RequestCancelled
from ..work import NO_WORK, Work

__all__ = ["NO_WORK", "Work", "check_cancelled"]


def check_cancelled(work: Work, phase: str) -> None:
    if work.cancelled:
        raise RequestCancelled(f"compaction cancelled while {phase}; nothing was written", phase=phase)
