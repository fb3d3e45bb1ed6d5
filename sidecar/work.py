"""A handle that long operations get from their caller: progress reports and cancellation.

Transport-neutral on purpose: the service and compaction call ``report`` and
``check_cancelled`` without knowing that the rpc layer turns them into LSP
``$/progress`` notifications and ``$/cancelRequest`` handling. Operations
check for cancellation only at points where stopping leaves nothing
half-written (before a write, between files of a scan).
"""

from __future__ import annotations

from .errors import RequestCancelled


class Work:
    """The do-nothing handle: no progress goes anywhere, nothing is ever cancelled."""

    @property
    def cancelled(self) -> bool:
        return False

    def report(self, message: str | None = None, percentage: int | None = None) -> None:
        """Say how far the operation is; ``percentage`` is 0-100."""

    def check_cancelled(self) -> None:
        """Raise ``RequestCancelled`` if the caller gave up; call only where stopping is safe."""
        if self.cancelled:
            raise RequestCancelled("the request was cancelled by the client; nothing was changed")


NO_WORK = Work()
