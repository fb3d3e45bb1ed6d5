"""The JSON-RPC plumbing the server stands on: features by method name, requests in flight, worker threads.

This used to be pygls' ``JsonRPCServer`` / ``JsonRPCProtocol``. Importing pygls
imports ``lsprotocol.types`` (attrs builds ~1000 LSP classes there): ~250 ms
of CPU and ~15 MB that a sidecar paid before it could answer its first
session call, for a language-server machinery it did not use (our protocol
subclass already decoded, checked, dispatched and encoded every message
itself). What it did use is the little here: a table of features, handlers run
as tasks (coroutines) or at once (plain functions) with a callback on their
future, the futures of requests in flight (ours and the client's answers to
requests we sent), and a lazily made thread pool.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

logger = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., object])
# A request's id (a notification has none; an error may have to answer "null").
MsgId = int | str
# A request in flight: one of ours being handled (a task), or one we sent, waiting for the client.
Pending = asyncio.Future[Any] | concurrent.futures.Future[Any]


class ClientError(Exception):
    """The client answered one of our requests with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class Endpoint:
    """One side of a JSON-RPC connection: the server's features and every request in flight.

    ``features`` maps a method to its handler, already bound to the server (the
    handler's first argument). ``_request_futures`` holds the future of every
    request being handled (by its id) and of every request we sent and wait an
    answer for (by the id we gave it).
    """

    def __init__(self, server: object) -> None:
        self._server = server
        self.features: dict[str, Callable[..., object]] = {}
        self._request_futures: dict[MsgId, Pending] = {}

    def feature(self, method: str) -> Callable[[F], F]:
        def register(handler: F) -> F:
            if asyncio.iscoroutinefunction(handler):

                async def bound(*args: Any) -> Any:
                    return await handler(self._server, *args)

                self.features[method] = bound
            else:
                self.features[method] = functools.partial(handler, self._server)
            return handler

        return register

    def _execute_handler(
        self, msg_id: MsgId, handler: Callable[..., Any], callback: Callable[[Pending], None], args: tuple[object, ...]
    ) -> None:
        """Run ``handler(*args)``: a coroutine as a task (in flight until it ends), a function at once;
        ``callback`` gets its future when it is done."""
        if asyncio.iscoroutinefunction(handler):
            task = asyncio.ensure_future(handler(*args))
            self._request_futures[msg_id] = task
            task.add_done_callback(callback)
            return
        future: concurrent.futures.Future[object] = concurrent.futures.Future()
        future.add_done_callback(callback)
        try:
            future.set_result(handler(*args))
        except Exception as exc:
            future.set_exception(exc)

    def _handle_response(self, msg_id: MsgId, result: object = None, error: ClientError | None = None) -> None:
        """The client's answer to a request we sent."""
        future = self._request_futures.pop(msg_id, None)
        if future is None:
            logger.warning("an answer to id %r, which no request of ours waits for", msg_id)
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)


class EndpointServer:
    """What owns the endpoint: registers features on it and lends it worker threads."""

    def __init__(self, endpoint_cls: Callable[[Any], Endpoint], max_workers: int | None = None) -> None:
        self._max_workers = max_workers
        self._thread_pool: concurrent.futures.ThreadPoolExecutor | None = None
        self.protocol = endpoint_cls(self)

    def feature(self, method: str) -> Callable[[F], F]:
        return self.protocol.feature(method)

    @property
    def thread_pool(self) -> concurrent.futures.ThreadPoolExecutor:
        """Made on first use: a process that never needs a worker starts none."""
        if self._thread_pool is None:
            self._thread_pool = concurrent.futures.ThreadPoolExecutor(max_workers=self._max_workers)
        return self._thread_pool

    def shutdown(self) -> None:
        if self._thread_pool is not None:
            self._thread_pool.shutdown()
