"""The ``Work`` handle of one request: LSP work-done progress and ``$/cancelRequest``.

A request's operation runs in a worker thread and calls ``report`` and
``check_cancelled`` there; notifications are handed to the event loop, which
alone writes to stdout, so a report always goes out before the response.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from ..work import Work
from .messages import ProgressParams, WorkDoneBegin, WorkDoneEnd, WorkDoneReport

# Reports closer together than this are dropped unless the percentage moved:
# a scan of 10,000 files must not send 10,000 notifications.
MIN_REPORT_INTERVAL = 0.05

SendProgress = Callable[[ProgressParams], None]


class RequestWork(Work):
    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        send: SendProgress,
        token: int | str | None,
        title: str,
    ) -> None:
        self._loop = loop
        self._send = send
        self._token = token
        self._title = title
        self._cancelled = False
        self._open = False  # between begin and end
        self._last_at = 0.0
        self._last_percentage: int | None = None
        # Set (on the loop) once the operation is handed to a worker thread:
        # from then on cancelling only raises the flag the operation checks.
        self.started = False

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        self._cancelled = True

    def begin(self) -> None:
        if self._token is None:
            return
        self._open = True
        self._send(ProgressParams(token=self._token, value=WorkDoneBegin(title=self._title, percentage=0)))

    def report(self, message: str | None = None, percentage: int | None = None) -> None:
        if self._token is None or not self._open:
            return
        if percentage is not None:
            percentage = max(0, min(100, int(percentage)))
        now = time.monotonic()
        if percentage == self._last_percentage and now - self._last_at < MIN_REPORT_INTERVAL:
            return
        self._last_at, self._last_percentage = now, percentage
        params = ProgressParams(token=self._token, value=WorkDoneReport(message=message, percentage=percentage))
        self._loop.call_soon_threadsafe(self._send_if_open, params)

    def end(self, message: str | None = None) -> None:
        if self._token is None or not self._open:
            return
        self._open = False
        self._send(ProgressParams(token=self._token, value=WorkDoneEnd(message=message)))

    def _send_if_open(self, params: ProgressParams) -> None:
        if self._open:
            self._send(params)
