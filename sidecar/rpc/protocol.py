"""The protocol, strict: every request with an id gets exactly one answer.

It takes message bodies from our framing readers, checks the envelope
(answering what cannot be parsed, has no ``params`` key or a bad envelope),
gates on the lifecycle (``initialize`` first, nothing but ``exit`` after
``shutdown``) and on the roles (live.py), routes each request by its method's
``Route`` (service/methods.py): answered where it is read (inline), joined to
a run of calls written together (runs.py), or handed to its session's turn
(handlers.py); the lifecycle's own features are registered with
``server.feature`` (endpoint.py). It cancels, and encodes answers with msgspec.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import itertools
import logging
import uuid
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from functools import partial
from typing import Any, Literal, cast

import msgspec

from ..errors import RequestCancelled
from ..format.codec import encode_js, parse
from ..service import HeldUpkeep
from ..service.methods import ROUTES, Route
from .connection import Connection
from .dispatch import queue_key, session_key
from .endpoint import ClientError, Endpoint, MsgId, Pending
from .errors import (
    UNREADABLE,
    duplicate_id,
    error_object,
    invalid_request,
    method_not_found,
    not_initialized,
    unreadable,
)
from .framing import FrameError, FrameSink
from .handlers import in_turn
from .lifecycle import decode_params
from .live import gate
from .runs import PendingRun
from .salvage import recover_id

logger = logging.getLogger(__name__)

State = Literal["new", "ready", "shutdown"]

_decode = msgspec.json.Decoder().decode


def decode_message(body: bytes) -> Any:
    """A message's JSON as JSON.parse reads it: msgspec's, or where msgspec refuses a lone surrogate
    escape (JavaScript's JSON.stringify writes a string cut inside an emoji as "\\ud83d"), the value with
    that surrogate kept in its str (format/codec.parse; the common path costs nothing more)."""
    return parse(body, _decode)


# Size in bytes of the request being dispatched, for deciding whether
# a call is small enough to answer inline.
REQUEST_SIZE: ContextVar[int] = ContextVar("request_size", default=0)
# Above this request size the call could take long enough to hold up others.
INLINE_MAX_REQUEST_BYTES = 64 * 1024
# Seconds the listing-index upkeep of inline appends may wait for more of them
# (any other call, shutdown and end of input run it at once).
UPKEEP_DELAY = 0.002
# Steps of the event loop in which inline calls ran, numbered across every connection (inline_turn).
_turns = itertools.count(1)


@functools.cache
def _request_decoder(route: Route) -> Callable[[bytes], Any]:
    """A decoder of a whole request of ``route``, its params decoded with it into their Struct."""
    request = msgspec.defstruct(
        "Request", [("jsonrpc", str), ("id", int | str), ("method", str), ("params", route.params)]
    )
    return msgspec.json.Decoder(request).decode


class SidecarProtocol(Endpoint):
    _server: Connection

    def __init__(self, server: Connection, routes: Mapping[str, Route] = ROUTES) -> None:
        super().__init__(server)
        self.routes = routes
        # (the bytes that name the route's method in a request, a decoder of its whole request)
        self._hot = [
            (b'"%s"' % name.encode(), _request_decoder(route), name) for name, route in routes.items() if route.hot
        ]
        self.state: State = "new"
        self.exit_code: int | None = None  # set by ``exit``
        self._encode = msgspec.json.Encoder().encode
        self._frame_writer: FrameSink | None = None
        # Checked once: a debug trace of every message is too costly to format otherwise.
        self._trace = logger.isEnabledFor(logging.DEBUG)
        # Session key (see dispatch.session_key) -> its requests dispatched and not yet answered.
        self._keys_in_flight: dict[str, int] = {}
        # Listing-index upkeep of inline appends, run once their answers are out and
        # always before another call is handed its turn (run_upkeep).
        self.upkeep: list[HeldUpkeep] = []
        self._upkeep_scheduled = False
        # The number of this step of the event loop while inline calls run in it (see inline_turn).
        self._turn: int | None = None
        self._run = PendingRun()  # calls read together, to be written together (runs.py)

    def set_frame_writer(self, writer: FrameSink) -> None:
        self._frame_writer = writer

    @property
    def frame_writer(self) -> FrameSink | None:
        return self._frame_writer

    # -- input --------------------------------------------------------------------

    def handle_body(self, body: bytes) -> None:
        """One framed message: check it and dispatch it, answering anything that is wrong."""
        if self._trace:
            logger.debug("<- %s", body[:2000].decode("utf-8", "replace"))
        for needle, decode, name in self._hot:
            if needle not in body:
                continue
            # Most requests of a busy session: envelope and params decoded at once into their Struct,
            # not into dicts then converted. Anything that does not fit (a bad envelope, bad params)
            # takes the usual path below, which answers it as it always did.
            try:
                request = decode(body)
            except UNREADABLE:
                break
            if request.jsonrpc == "2.0" and request.method == name:
                REQUEST_SIZE.set(len(body))
                self._handle_request(request.id, name, request.params)
                return
            break
        try:
            message = decode_message(body)
        except UNREADABLE as exc:
            self._send_error(recover_id(body), unreadable(exc))
            return
        if not isinstance(message, dict):
            what = (
                "batches (JSON arrays) are not supported"
                if isinstance(message, list)
                else "a message must be a JSON object"
            )
            self._send_error(None, invalid_request(f"{what}; send one request object per message"))
            return
        msg_id = message.get("id")
        has_id = "id" in message
        id_ok = isinstance(msg_id, (str, int)) and not isinstance(msg_id, bool)
        if "method" not in message:
            if has_id and ("result" in message or "error" in message):
                self._handle_client_response(msg_id, message)  # (any id: ours are strings)
                return
            self._send_error(msg_id if id_ok else None, invalid_request("a message without 'method' is not a request"))
            return
        method = message["method"]
        if message.get("jsonrpc") != "2.0":
            problem = "'jsonrpc' must be \"2.0\""
        elif not isinstance(method, str):
            problem = "'method' must be a string"
        elif has_id and not id_ok:
            problem = "'id' must be a string or an integer"
        else:
            problem = None
        if problem is not None:
            if has_id:
                self._send_error(msg_id if id_ok else None, invalid_request(problem))
            else:
                logger.warning("dropping a malformed notification: %s", problem)
            return
        # vscode-jsonrpc, Go's jsonrpc2 and rust's lsp-server omit null params.
        params = message.get("params")
        if has_id:
            REQUEST_SIZE.set(len(body))
            self._handle_request(cast(MsgId, msg_id), method, params)  # (id_ok)
        else:
            self._handle_notification(method, params)

    def _handle_client_response(self, msg_id: Any, message: dict[str, Any]) -> None:
        """The answer to a request this server sent (``session/summarize`` for the client provider)."""
        if self._run.calls:
            self.flush_run()
        future = self._request_futures.get(msg_id)
        if not isinstance(future, concurrent.futures.Future):  # unknown, or the id of an incoming request
            logger.warning("ignoring a response to id %r: no request of ours is waiting for it", msg_id)
            return
        error = message.get("error")
        if error is not None:
            error = error if isinstance(error, dict) else {}
            client_error = ClientError(error.get("code", -32603), str(error.get("message", "")), error.get("data"))
            self._handle_response(msg_id, None, client_error)
        else:
            self._handle_response(msg_id, message.get("result"))

    def handle_frame_error(self, error: FrameError) -> None:
        self._send_response(error.id, error={"code": error.code, "message": error.message, "data": error.data})

    def _handle_request(self, msg_id: MsgId, method_name: str, params: object) -> None:
        route = self.routes.get(method_name)
        if self._run.calls and (route is None or not route.may_join_run):
            self.flush_run()  # (a call may join the run; anything else comes after it)
        if msg_id in self._request_futures or msg_id in self._run.ids:
            self._send_error(msg_id, duplicate_id(msg_id, method_name))
            return
        if self.state == "shutdown":
            self._send_error(
                msg_id, invalid_request(f"{method_name} after shutdown; only the exit notification is accepted")
            )
            return
        if method_name == "initialize":
            if self.state != "new":
                self._send_error(msg_id, invalid_request("initialize was already received; send it once per process"))
                return
        elif self.state == "new":
            self._send_error(msg_id, not_initialized(method_name))
            return
        if route is None:
            self._handle_lifecycle(msg_id, method_name, params)
            return
        if route.writes_session:
            refused = gate(self._server, params)
            if refused is not None:  # another client controls the session (rpc/live.py)
                self._send_error(msg_id, refused)
                return
        # Inline only while nothing else of its session is in flight: a request
        # read just before this one may not have taken its session's turn yet.
        key = session_key(params)
        if route.may_run_inline and key is not None and key not in self._keys_in_flight:
            if route.may_join_run:
                if self._join_run(msg_id, route, params, key):
                    return
            elif self._answer_inline(msg_id, route, params):
                return
        if self._run.calls:
            self.flush_run()
        if self.upkeep:
            self.run_upkeep()  # this call must not see the index behind an append it follows
        if not route.queued:
            self._answer_now(msg_id, route, params)
            return
        # What a large append leaves for the listing index, run once its answer is out (in_turn): its
        # fold costs in proportion to its lines (a small one's, kept in the call, costs next to nothing).
        held: list[HeldUpkeep] | None = (
            [] if route.group_sync and REQUEST_SIZE.get() > INLINE_MAX_REQUEST_BYTES else None
        )
        future = asyncio.ensure_future(in_turn(self._server, route, params, msg_id, held))
        self._request_futures[msg_id] = future
        future.add_done_callback(partial(self._send_handler_result, msg_id=msg_id, held=held))
        # (Its future completes on the event loop.)
        if key is not None:
            self._keys_in_flight[key] = self._keys_in_flight.get(key, 0) + 1
            future.add_done_callback(partial(self._key_done, key))

    def _handle_lifecycle(self, msg_id: MsgId, method_name: str, params: object) -> None:
        """initialize, shutdown (the features registered with ``server.feature``), or a method we do not have."""
        handler = self.features.get(method_name)
        if handler is None:
            logger.info("unknown method %r (request %r)", method_name, msg_id)
            self._send_error(msg_id, method_not_found(method_name))
            return
        if self._run.calls:
            self.flush_run()
        if self.upkeep:
            self.run_upkeep()
        if method_name == "shutdown":
            # Now, not when its handler first runs: an exit read in the same
            # chunk of input must already see it.
            self.state = "shutdown"
        self._execute_handler(
            msg_id,
            handler,
            callback=partial(self._send_handler_result, msg_id=msg_id),
            args=(params, msg_id),
        )

    def _key_done(self, key: str, _future: object) -> None:
        left = self._keys_in_flight[key] - 1
        if left:
            self._keys_in_flight[key] = left
        else:
            del self._keys_in_flight[key]

    def _runs_inline(self, route: Route, decoded: msgspec.Struct, key: str | None, in_run: bool = False) -> bool:
        """True when a call is sure to be quick: small, on a session already in
        memory with nothing queued for it, and needing no fsync nor a model. Running
        it directly keeps per-session order: nothing of that session is in flight.
        ``in_run``: a call joining the run of calls to its session read just
        before it, whose first one found the session in memory and its file current."""
        service = self._server.service
        if key is None or service is None or REQUEST_SIZE.get() > INLINE_MAX_REQUEST_BYTES:
            return False
        if not self._server.dispatcher.queues.idle(key):
            return False
        if route.inline_unless is not None and route.inline_unless(service, decoded):
            return False
        if in_run:  # (nothing was written since that check: the run writes when it ends)
            return True
        # Last: when it says yes, the call runs at once and its own file check takes this one's answer.
        return service.is_open(key, self.inline_turn())

    def _answer_inline(self, msg_id: MsgId, route: Route, params: object) -> bool:
        """Answer a cheap call synchronously, right where it is read (no task, no thread, no
        queue); False when it must take the usual path."""
        service = self._server.service
        assert service is not None
        try:
            decoded = decode_params(route.name, params, route.params)
            if not self._runs_inline(route, decoded, queue_key(decoded)):
                return False
            # Index upkeep waits until the answer is out (see run_upkeep).
            with service.upkeep_held(self.upkeep):
                result = route.call(service, decoded)
        except Exception as exc:
            self._send_error(msg_id, exc)
        else:
            self._send_response(msg_id, result=result)
        self._schedule_upkeep()
        return True

    def _answer_now(self, msg_id: MsgId, route: Route, params: object) -> None:
        """A call that takes no turn: answered as it is read."""
        service = self._server.service
        assert service is not None
        try:
            result = route.call(service, decode_params(route.name, params, route.params), client=self._server)
        except Exception as exc:
            self._send_error(msg_id, exc)
        else:
            self._send_response(msg_id, result=result)

    def _join_run(self, msg_id: MsgId, route: Route, params: object, key: str) -> bool:
        """An inline call joins the run (answered at flush_run); False when it must take the usual path."""
        run = self._run
        if run.calls and (run.key != key or run.route is not route):
            self.flush_run()
        try:
            decoded = decode_params(route.name, params, route.params)
            # (a run left is one of this session)
            joins = self._runs_inline(route, decoded, queue_key(decoded), bool(run.calls))
        except Exception as exc:  # bad params: answered now, after the calls read before it
            self._send_error(msg_id, exc)
            return True
        if not joins:
            return False
        run.add(route, key, msg_id, decoded)
        return True

    def flush_run(self) -> None:
        """Run the calls of the run and answer each, in the order they were read."""
        if not self._run.calls:
            return
        service = self._server.service
        assert service is not None
        self._run.flush(service, self.upkeep, self._respond, self._send_error)
        self._schedule_upkeep()

    def _respond(self, msg_id: MsgId, result: object) -> None:
        self._send_response(msg_id, result=result)

    def _schedule_upkeep(self) -> None:
        if self.upkeep and not self._upkeep_scheduled:
            # A little later: a run of appends (pipelined, or one by one as an agent streams
            # its turn) shares one index step, and answering never waits for one.
            self._upkeep_scheduled = True
            asyncio.get_running_loop().call_later(UPKEEP_DELAY, self._upkeep_due)

    def inline_turn(self) -> int:
        """A number shared by the inline calls handled in one step of the event loop (requests read
        together, answered before anything else runs), unique across connections: the store need
        not look at a session's file again for each of them (FileStore.is_current)."""
        if self._turn is None:
            self._turn = next(_turns)
            asyncio.get_running_loop().call_soon(self._end_turn)
        return self._turn

    def _end_turn(self) -> None:
        self._turn = None

    def _upkeep_due(self) -> None:
        self._upkeep_scheduled = False
        self.run_upkeep()

    def run_upkeep(self) -> None:
        """Fold what inline appends wrote into the listing index (see _answer_inline and flush_run)."""
        if not self.upkeep or self._server.service is None:
            return
        try:
            self._server.service.run_upkeep(self.upkeep)
        except Exception:  # upkeep of a cache: never fatal (the next list reads the changed files)
            logger.exception("listing index upkeep failed")
            self.upkeep.clear()

    def _handle_notification(self, method_name: str, params: object) -> None:
        if self._run.calls:
            self.flush_run()
        if method_name == "exit":
            self.exit_code = 0 if self.state == "shutdown" else 1
            return
        if method_name == "$/cancelRequest":
            self._cancel(params)
            return
        if method_name == "initialized" or method_name.startswith("$/"):
            return  # nothing to do; $/ notifications may be ignored by definition
        logger.warning("ignoring unknown notification %r (notifications get no answer)", method_name)

    def _cancel(self, params: object) -> None:
        msg_id = params.get("id") if isinstance(params, dict) else None
        if msg_id is None:
            logger.warning("$/cancelRequest without an id: %r", params)
            return
        task = self._request_futures.get(msg_id)
        if not self._server.dispatcher.cancel(msg_id, task):
            logger.debug("cancel for request %r, which is not in flight", msg_id)

    # -- output -------------------------------------------------------------------

    def _send_handler_result(self, future: Pending, *, msg_id: MsgId, held: list[HeldUpkeep] | None = None) -> None:
        self._request_futures.pop(msg_id, None)
        if future.cancelled():
            error = RequestCancelled(f"request {msg_id!r} was cancelled before it started; nothing was changed")
            self._send_error(msg_id, error)
        else:
            exc = future.exception()
            if exc is not None:
                self._send_error(msg_id, exc)
            else:
                self._send_response(msg_id, result=future.result())
        if held:
            # The call's index upkeep, after its answer and before any other call is handed its turn
            # (_handle_request runs it first), as an inline append's: in the order the writes were made,
            # for the session's next call cannot have run yet (its key is in flight until _key_done).
            self.upkeep.extend(held)
            held.clear()
            self._schedule_upkeep()

    def _send_error(self, msg_id: MsgId | None, exc: BaseException) -> None:
        self._send_response(msg_id, error=error_object(exc))

    def _send_response(
        self, msg_id: MsgId | None, result: object = None, error: dict[str, object] | None = None
    ) -> None:
        if self._run.calls:
            self.flush_run()  # (the answers of calls read before come first)
        if error is not None:
            self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": error})
            return
        writer = self._frame_writer
        if writer is not None and not self._trace:
            # The bytes msgspec makes of the envelope dict, without making the dict (a pipelined
            # run answers thousands); anything the encoder refuses takes the path below.
            try:
                body = b'{"jsonrpc":"2.0","id":' + self._encode(msg_id) + b',"result":' + self._encode(result) + b"}"
            except Exception:
                pass
            else:
                writer.send(body)
                return
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "result": result})

    async def request_client(self, method: str, params: object) -> Any:
        """Send a request to the client and wait for its answer.

        Params are plain dicts, sent as they are. If the wait is
        cancelled (a compaction cancelled while the client summarizes, a
        timeout), the client is told with ``$/cancelRequest``.
        """
        msg_id = str(uuid.uuid4())
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._request_futures[msg_id] = future
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            self._request_futures.pop(msg_id, None)
            self.notify("$/cancelRequest", {"id": msg_id})
            raise

    def notify(self, method: str, params: object = None) -> None:
        self._send_data({"jsonrpc": "2.0", "method": method, "params": params})

    def _send_data(self, data: dict[str, object]) -> None:
        if self._run.calls:
            self.flush_run()
        if self._frame_writer is None:
            logger.error("no transport to send %r", data)
            return
        try:
            body = encode_js(self._encode, data)  # (a lone surrogate written as JSON.stringify writes it)
        except Exception as exc:  # a result the encoder cannot take: still answer the request
            logger.exception("cannot encode a message")
            if isinstance(data, dict) and "result" in data:
                body = self._encode({"jsonrpc": "2.0", "id": data.get("id"), "error": error_object(exc)})
            else:
                return
        if self._trace:
            logger.debug("-> %s", body[:2000].decode("utf-8", "replace"))
        self._frame_writer.send(body)

    async def drain(self, but: MsgId | None = None) -> None:
        """Wait until every request in flight (except request ``but``) has answered."""
        while pending := [f for i, f in self._request_futures.items() if i != but and not f.done()]:
            # A request we sent the client is a concurrent future (answered from the reader's
            # thread): asyncio.wait takes it wrapped.
            await asyncio.wait(
                [asyncio.wrap_future(f) if isinstance(f, concurrent.futures.Future) else f for f in pending]
            )

    def abandon_client_requests(self, reason: str) -> None:
        """Fail every request we sent the client and it has not answered (it can no longer answer).

        Called at end of input: what waits on those answers (a compaction asking for its
        summary) fails with ``reason`` instead of waiting for ever, and writes nothing.
        """
        for future in list(self._request_futures.values()):
            if isinstance(future, concurrent.futures.Future) and not future.done():
                future.set_exception(ConnectionError(reason))
