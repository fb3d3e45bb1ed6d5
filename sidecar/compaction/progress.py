"""How a running compaction shows itself and learns it should stop.

Compaction takes the service's ``Work`` handle (``sidecar.work``): the rpc
layer turns ``report`` into ``$/progress`` on the work-done token and
``$/cancelRequest`` into ``cancelled``. Asyncio cancellation works as well.
Every check happens before the single write, so stopping writes nothing.
"""

from __future__ import annotations

from ..errors import RequestCancelled
from ..work import NO_WORK, Work

__all__ = ["NO_WORK", "Work", "RecordingWork", "check_cancelled"]


class RecordingWork(Work):
    """Keeps every report; cancels itself when a report's message starts with ``cancel_at``."""

    def __init__(self, cancel_at: str | None = None) -> None:
        self.reports: list[tuple[str | None, int | None]] = []
        self.cancel_at = cancel_at
        self._cancelled = False

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        self._cancelled = True

    def report(self, message: str | None = None, percentage: int | None = None) -> None:
        self.reports.append((message, percentage))
        if self.cancel_at is not None and message is not None and message.startswith(self.cancel_at):
            self._cancelled = True


def check_cancelled(work: Work, phase: str) -> None:
    if work.cancelled:
        raise RequestCancelled(f"compaction cancelled while {phase}; nothing was written", phase=phase)
