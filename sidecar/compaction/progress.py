"""How a running compaction shows itself and learns it should stop.

The rpc layer adapts ``$/progress`` (begin/report/end on the client's
work-done token) and ``$/cancelRequest`` to this protocol; tests and the CLI
use the plain implementations below. Asyncio cancellation works as well.
"""

from __future__ import annotations

from typing import Protocol

from ..errors import RequestCancelled


class Progress(Protocol):
    def report(self, message: str, percentage: int | None = None) -> None: ...

    def cancelled(self) -> bool: ...


class NoProgress:
    def report(self, message: str, percentage: int | None = None) -> None:
        pass

    def cancelled(self) -> bool:
        return False


class RecordingProgress:
    """Keeps every report; cancels itself when a report's message starts with ``cancel_at``."""

    def __init__(self, cancel_at: str | None = None) -> None:
        self.reports: list[tuple[str, int | None]] = []
        self.cancel_at = cancel_at
        self._cancelled = False

    def report(self, message: str, percentage: int | None = None) -> None:
        self.reports.append((message, percentage))
        if self.cancel_at is not None and message.startswith(self.cancel_at):
            self._cancelled = True

    def cancel(self) -> None:
        self._cancelled = True

    def cancelled(self) -> bool:
        return self._cancelled


def check_cancelled(progress: Progress, phase: str) -> None:
    if progress.cancelled():
        raise RequestCancelled(f"compaction cancelled while {phase}; nothing was written", phase=phase)
