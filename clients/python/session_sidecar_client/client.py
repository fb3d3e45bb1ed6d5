"""The asyncio client: spawn or attach, frame messages, match answers, progress, cancellation.

    async with SidecarClient.spawn(root="/tmp/sessions") as client:
        created = await client.create("/work/app")
        await client.append(created["sessionId"], [...])

``spawn`` starts ``session-sidecar`` (found on PATH unless ``command`` says
otherwise), ``initialize``s it and, on leaving the ``async with``, sends
``shutdown`` and ``exit``, waits for the process and kills it if it does not
end within ``close_timeout``. ``attach`` does the same over streams you
already have. Both can be awaited instead of entered, then call ``close()``.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import logging
import os
import shutil

try:
    import fcntl
except ImportError:  # (Windows)
    fcntl = None  # type: ignore[assignment]  # (no pipe to widen there)
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from typing import Any, Literal, Protocol

from .errors import ConnectionClosed, ProtocolVersionError, RpcError, check_protocol_version, describe_exit
from .methods import ProgressCallback, SidecarMethods
from .protocol import (
    PROTOCOL_VERSION,
    ClientInfo,
    DidAppendParams,
    DidChangeLeafParams,
    DidCloseParams,
    DidCompactParams,
    DidLoseControlParams,
    DidReloadParams,
    DidSetLabelParams,
    DidSetNameParams,
    InitializeResult,
    PayloadTooLargeError,
    ProgressValue,
    ResyncParams,
    SummarizeParams,
    SummarizeResult,
)

# msgspec, optional: where it is installed (as beside the sidecar) answers decode faster (_loads).
_msgspec_loads: Callable[[str | bytes], Any] | None
_msgspec_refusals: tuple[type[Exception], ...]
try:
    import msgspec.json
except ImportError:
    _msgspec_loads, _msgspec_refusals = None, ()
else:
    _msgspec_loads, _msgspec_refusals = msgspec.json.Decoder().decode, (msgspec.DecodeError,)

logger = logging.getLogger("session_sidecar_client")

Framing = Literal["lsp", "jsonl"]
DEFAULT_COMMAND = "session-sidecar"
DEFAULT_CLIENT_NAME = "session-sidecar-client"
READ_LIMIT = 64 * 1024 * 1024
# The sidecar's frame limit (sidecar/rpc/framing.py MAX_MESSAGE_BYTES): a larger frame is refused unread.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024

NotificationCallback = Callable[[str, Any], Any]
RequestHandler = Callable[[Any], Awaitable[Any] | Any]
SummarizeHandler = Callable[[SummarizeParams], Awaitable[SummarizeResult]]
DidCompactCallback = Callable[[DidCompactParams], Any]
DidAppendCallback = Callable[[DidAppendParams], Any]
DidReloadCallback = Callable[[DidReloadParams], Any]
DidChangeLeafCallback = Callable[[DidChangeLeafParams], Any]
DidSetLabelCallback = Callable[[DidSetLabelParams], Any]
DidSetNameCallback = Callable[[DidSetNameParams], Any]
DidCloseCallback = Callable[[DidCloseParams], Any]
ResyncCallback = Callable[[ResyncParams], Any]
DidLoseControlCallback = Callable[[DidLoseControlParams], Any]
TraceCallback = Callable[[Literal["send", "receive"], Any], None]
ServerProgressCallback = Callable[[int | str, ProgressValue], Any]
PROGRESS_CREATE = "window/workDoneProgress/create"
# What the client has a dedicated option for (checked against the schema's lists by the tests).
SERVER_REQUESTS_HANDLED = {"session/summarize": "summarize", PROGRESS_CREATE: "on_server_progress"}
SERVER_NOTIFICATIONS_HANDLED = {
    "$/progress": "on_progress / on_server_progress",
    "session/didCompact": "on_did_compact",
    "session/didAppend": "on_did_append",
    "session/didReload": "on_did_reload",
    # A subscriber's (session/subscribe): didAppend and didCompact come to the callbacks above.
    "session/didChangeLeaf": "on_did_change_leaf",
    "session/didSetLabel": "on_did_set_label",
    "session/didSetName": "on_did_set_name",
    "session/didClose": "on_did_close",
    "session/resync": "on_resync",
    "session/didLoseControl": "on_did_lose_control",
}
ProtocolErrorCallback = Callable[[RpcError], Any]


class Writer(Protocol):
    """What the client writes to: an ``asyncio.StreamWriter`` (a subprocess's stdin is one)."""

    def write(self, data: bytes) -> None: ...
    async def drain(self) -> None: ...
    def close(self) -> None: ...
    def is_closing(self) -> bool: ...


class EncodedJson(bytes):
    """A params value already encoded: compact UTF-8 JSON that goes out as these bytes, not encoded again.

    ``request("session/append", {"sessionId": sid, "entries": EncodedJson(encoded_list)})`` sends the
    frame ``json`` would make of the decoded value (with its bytes spliced in where the value goes), for
    a caller that already has the bytes (an adapter encoding a large batch faster than ``json`` can). Only
    a value of the params object itself may be one; the bytes are the caller's to vouch for (nothing
    checks them), and ``trace`` gets the value decoded, as if it had been sent decoded.
    """


class FrameError(Exception):
    """The server sent bytes that are not a frame."""


class _Opening:
    """What ``spawn`` and ``attach`` return: await it for a client, or ``async with`` it."""

    def __init__(self, open_: Callable[[], Awaitable[SidecarClient]]) -> None:
        self._open = open_
        self._client: SidecarClient | None = None

    def __await__(self) -> Generator[Any, None, SidecarClient]:
        return self._open().__await__()

    async def __aenter__(self) -> SidecarClient:
        self._client = await self._open()
        return self._client

    async def __aexit__(self, *exc: object) -> None:
        if self._client is not None:
            await self._client.close()


class SidecarClient(SidecarMethods):
    """A JSON-RPC connection to one session-sidecar.

    Usually made by ``spawn`` or ``attach``. The typed methods (``create``,
    ``append``, ``build_context``...; see ``methods.py``) and ``request`` are
    safe to call concurrently: answers are matched by id.

    Options: ``summarize`` answers the server's ``session/summarize`` (the
    ``client`` provider); ``handlers`` answers any other server->client
    request by method (a function of the params, plain or async; an exception
    becomes an error answer); ``on_did_compact`` gets ``session/didCompact``;
    ``on_did_append`` and ``on_did_reload`` get ``session/didAppend`` and
    ``session/didReload`` (sessions opened with ``watch=True``: another
    program wrote the file; ``didAppend`` also for a session you subscribed
    to, with a ``cursor``); the other events of a subscription have one typed
    callback each (``on_did_change_leaf``, ``on_did_set_label``,
    ``on_did_set_name``, ``on_did_close``, ``on_resync``,
    ``on_did_lose_control``), and come to ``on_notification`` when not given;
    ``on_server_progress(token, value)`` accepts the server's own progress
    tokens (``window/workDoneProgress/create``, for autoCompact) and gets their
    ``$/progress``; ``on_notification(method, params)`` gets every other
    notification; ``on_protocol_error`` gets error answers with no request
    (id null: the server could not read something we sent); ``trace(direction,
    message)`` sees every message; ``close_timeout`` bounds ``close()``.
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: Writer,
        *,
        framing: Framing = "lsp",
        process: asyncio.subprocess.Process | None = None,
        summarize: SummarizeHandler | None = None,
        handlers: Mapping[str, RequestHandler] | None = None,
        on_notification: NotificationCallback | None = None,
        on_did_compact: DidCompactCallback | None = None,
        on_did_append: DidAppendCallback | None = None,
        on_did_reload: DidReloadCallback | None = None,
        on_did_change_leaf: DidChangeLeafCallback | None = None,
        on_did_set_label: DidSetLabelCallback | None = None,
        on_did_set_name: DidSetNameCallback | None = None,
        on_did_close: DidCloseCallback | None = None,
        on_resync: ResyncCallback | None = None,
        on_did_lose_control: DidLoseControlCallback | None = None,
        on_server_progress: ServerProgressCallback | None = None,
        on_protocol_error: ProtocolErrorCallback | None = None,
        trace: TraceCallback | None = None,
        close_timeout: float = 5.0,
    ) -> None:
        if framing not in ("lsp", "jsonl"):
            raise ValueError(f"framing must be 'lsp' or 'jsonl', not {framing!r}")
        self.reader = reader
        self.writer = writer
        self.framing: Framing = framing
        self.process = process
        self.handlers: dict[str, RequestHandler] = dict(handlers or {})
        if summarize is not None:
            self.handlers["session/summarize"] = summarize
        self.on_notification = on_notification
        self.on_did_compact = on_did_compact
        self.on_did_append = on_did_append
        self.on_did_reload = on_did_reload
        self.on_did_change_leaf = on_did_change_leaf
        self.on_did_set_label = on_did_set_label
        self.on_did_set_name = on_did_set_name
        self.on_did_close = on_did_close
        self.on_resync = on_resync
        self.on_did_lose_control = on_did_lose_control
        self.on_server_progress = on_server_progress
        self._server_tokens: set[Any] = set()  # accepted from window/workDoneProgress/create
        self.on_protocol_error = on_protocol_error
        self.trace = trace
        self.close_timeout = close_timeout
        self.initialize_result: InitializeResult | None = None
        self.state: Literal["new", "initialized", "shutdown", "closed"] = "new"
        self._ids = itertools.count(1)
        self._pending: dict[int | str, asyncio.Future[Any]] = {}  # in the order sent
        self._pending_methods: dict[int | str, str] = {}
        self._suspect: set[int | str] = set()  # frames holding a lone surrogate escape (see _settle_unaddressed)
        self._progress: dict[int | str, ProgressCallback] = {}
        self._abandoned: set[int | str] = set()  # cancelled by us; their late answers are dropped
        self._unmatched_ids: set[int | str] = set()  # requests sent by send_message; nobody waits for them
        self._serving: dict[Any, asyncio.Task[None]] = {}  # server->client requests being answered
        self._callbacks: set[asyncio.Task[Any]] = set()
        self._closing: asyncio.Task[int | None] | None = None
        self._eof = False
        self._reader_task = asyncio.get_running_loop().create_task(self._read_loop())

    # -- opening -------------------------------------------------------------------

    @classmethod
    def spawn(
        cls,
        args: Sequence[str] = (),
        *,
        command: str | Sequence[str] | None = None,
        root: str | os.PathLike[str] | None = None,
        config: str | os.PathLike[str] | None = None,
        framing: Framing = "lsp",
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: Any = None,
        initialize: bool = True,
        client_name: str = DEFAULT_CLIENT_NAME,
        client_version: str | None = None,
        session_root: str | os.PathLike[str] | None = None,
        settings: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> _Opening:
        """Start a sidecar subprocess and (unless ``initialize=False``) initialize it.

        ``command``: the program (and leading arguments) to run, default
        ``session-sidecar`` looked up on PATH; ``serve``, ``args``, ``--root``,
        ``--config`` and ``--jsonl`` are appended. ``stderr`` goes to
        ``asyncio.create_subprocess_exec`` as is: None shares ours (the server's
        logs go where ours go), ``asyncio.subprocess.DEVNULL`` drops them.
        ``session_root`` and ``settings`` go in ``initialize``; other keyword
        options (``summarize``, ``on_notification``, ``close_timeout``...) to
        the constructor.
        """

        async def open_() -> SidecarClient:
            argv = [*_resolve_command(command), "serve", *args]
            if root is not None:
                argv += ["--root", os.fspath(root)]
            if config is not None:
                argv += ["--config", os.fspath(config)]
            if framing == "jsonl":
                argv.append("--jsonl")
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                limit=READ_LIMIT,
            )
            assert process.stdout is not None and process.stdin is not None
            _widen_pipe(process.stdin)
            client = cls(process.stdout, process.stdin, framing=framing, process=process, **options)
            await client._start(initialize, client_name, client_version, session_root, settings)
            return client

        return _Opening(open_)

    @classmethod
    def attach(
        cls,
        reader: asyncio.StreamReader,
        writer: Writer,
        *,
        framing: Framing = "lsp",
        initialize: bool = True,
        client_name: str = DEFAULT_CLIENT_NAME,
        client_version: str | None = None,
        session_root: str | os.PathLike[str] | None = None,
        settings: Mapping[str, Any] | None = None,
        token: str | None = None,
        **options: Any,
    ) -> _Opening:
        """Talk to a sidecar over streams you already have (a socket, pipes of a process you started).

        ``token``: a sidecar serving TCP (``serve --listen``) answers only a client
        whose ``initialize`` carries the token of its ``--token-file``; without it
        (or with another) ``initialize`` fails with ``unauthorized`` (-33071).
        """

        async def open_() -> SidecarClient:
            client = cls(reader, writer, framing=framing, **options)
            await client._start(initialize, client_name, client_version, session_root, settings, token)
            return client

        return _Opening(open_)

    @classmethod
    def connect_socket(cls, path: str | os.PathLike[str], *, wait: float = 5.0, **options: Any) -> _Opening:
        """Attach to a sidecar serving a unix socket (``serve --socket PATH``, or ``SidecarServer.start``).

        Waits up to ``wait`` seconds for the socket to accept (a server still
        starting), then initializes; other keyword options as for ``attach``.
        Closing the client ends this connection; the server goes on serving.
        """

        async def open_() -> SidecarClient:
            from .server import open_socket

            reader, writer = await open_socket(path, wait, READ_LIMIT)
            return await cls.attach(reader, writer, **options)

        return _Opening(open_)

    async def _start(
        self,
        initialize: bool,
        client_name: str,
        client_version: str | None,
        session_root: str | os.PathLike[str] | None,
        settings: Mapping[str, Any] | None,
        token: str | None = None,
    ) -> None:
        if not initialize:
            return
        info: ClientInfo = {"name": client_name}
        if client_version is not None:
            info["version"] = client_version
        try:
            try:
                result = await self.initialize(
                    client_info=info,
                    protocol_version=PROTOCOL_VERSION,
                    session_root=os.fspath(session_root) if session_root is not None else None,
                    settings=dict(settings) if settings is not None else None,
                    token=token,
                )
            except RpcError as exc:
                # A sidecar of another major refuses our version and says which it speaks.
                if exc.data.get("field") == "protocolVersion" and isinstance(exc.data.get("supported"), str):
                    raise ProtocolVersionError(exc.data["supported"], PROTOCOL_VERSION) from exc
                raise
            check_protocol_version(result.get("protocolVersion"), PROTOCOL_VERSION)
        except BaseException:
            await self.close()
            raise

    async def __aenter__(self) -> SidecarClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- closing -------------------------------------------------------------------

    @property
    def returncode(self) -> int | None:
        return self.process.returncode if self.process is not None else None

    @property
    def closed(self) -> bool:
        return self.state == "closed" or self._eof

    async def close(self, timeout: float | None = None) -> int | None:
        """End politely (``shutdown``, ``exit``, end of input); kill the process if it takes longer than ``timeout``.

        Returns the process's exit code (None for attached streams). Safe to call twice.
        """
        if self._closing is None:
            self._closing = asyncio.ensure_future(self._close(self.close_timeout if timeout is None else timeout))
        return await asyncio.shield(self._closing)

    async def _close(self, timeout: float) -> int | None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        try:
            async with asyncio.timeout_at(deadline):
                if self.state == "initialized" and not self._eof:
                    try:
                        await self.shutdown()
                    except (RpcError, ConnectionClosed) as error:
                        logger.debug("shutdown failed while closing: %s", error)
                if self.state == "shutdown" and not self._eof:
                    self._write_quietly({"jsonrpc": "2.0", "method": "exit"})
                self.state = "closed"
                self._close_writer()
                if self.process is not None:
                    await self.process.wait()
                else:
                    await asyncio.shield(self._reader_task)
        except TimeoutError:
            if self.process is not None and self.process.returncode is None:
                logger.warning(
                    "session-sidecar (pid %s) did not exit within %.1fs; killing it", self.process.pid, timeout
                )
                self.process.kill()
                await self.process.wait()
        finally:
            self.state = "closed"
            self._close_writer()
            if not self._reader_task.done():
                try:  # a process's stdout ends with it; give the reader a moment to see that
                    await asyncio.wait_for(asyncio.shield(self._reader_task), 1.0)
                except (TimeoutError, asyncio.CancelledError):
                    self._reader_task.cancel()
            self._fail_pending("the client was closed")
            for task in [*self._serving.values(), *self._callbacks]:
                task.cancel()
        return self.returncode

    async def wait(self) -> int | None:
        """Wait for the process to end (after ``exit``, say); its exit code."""
        if self.process is not None:
            return await self.process.wait()
        await asyncio.shield(self._reader_task)
        return None

    def exit(self) -> None:
        """Send the ``exit`` notification (``close`` does it for you); nothing can be sent after it."""
        self.notify("exit")
        self.state = "closed"

    def _close_writer(self) -> None:
        try:
            if not self.writer.is_closing():
                self.writer.close()
        except (ConnectionError, RuntimeError):
            pass

    # -- requests ------------------------------------------------------------------

    @property
    def methods(self) -> list[str]:
        """The methods the server offers (from ``initialize``)."""
        if self.initialize_result is None:
            return []
        return list(self.initialize_result["capabilities"]["methods"])

    async def request(self, method: str, params: Any = None, *, on_progress: ProgressCallback | None = None) -> Any:
        """Send any request and wait for its result; ``on_progress`` gets each ``$/progress`` value.

        Raises ``RpcError`` (the subclass for its code) for an error answer and
        ``ConnectionClosed`` if the sidecar goes away first. Cancelling the task
        that awaits this sends ``$/cancelRequest``.
        """
        if self.closed:
            raise self._closed_error(method)
        msg_id = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        token: str | None = None
        if on_progress is not None:
            token = f"progress-{msg_id}"
            params = {**(params or {}), "workDoneToken": token}
            self._progress[token] = on_progress
        if params is not None:
            message["params"] = params
        # Encode first: what cannot be sent (a value json cannot encode, a frame over
        # the limit) fails here as its own error, and nothing waits for an answer.
        frame, suspect = self._encode_checked(message)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        self._pending_methods[msg_id] = method
        if suspect:
            self._suspect.add(msg_id)
        try:
            self._write_frame(message, frame)
            await self.writer.drain()
            result = await future
        except asyncio.CancelledError:
            # Cancelling this task cancelled the future too; an answer that already came is a result, not a cancel.
            answered = future.done() and not future.cancelled()
            if not answered and not self.closed:
                self._abandoned.add(msg_id)
                self._write_quietly({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": msg_id}})
            raise
        except (ConnectionError, RuntimeError) as error:
            if isinstance(error, ConnectionClosed):
                raise
            raise ConnectionClosed(f"{method}: could not write to the sidecar: {error}", self.returncode) from error
        finally:
            self._pending.pop(msg_id, None)
            self._pending_methods.pop(msg_id, None)
            self._suspect.discard(msg_id)
            if token is not None:
                self._progress.pop(token, None)
        if method == "initialize":
            self.initialize_result = result
            self.state = "initialized"
            self.notify("initialized", {})
        elif method == "shutdown":
            self.state = "shutdown"
        return result

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._write(message)

    def send_message(self, message: Any) -> None:
        """Any JSON value as one frame, unchecked (for tests and tools; answers to it are not matched, see ``trace``)."""
        if isinstance(message, dict) and "method" in message and isinstance(message.get("id"), (int, str)):
            self._unmatched_ids.add(message["id"])
        self._write(message)

    def send_raw(self, data: bytes) -> None:
        """Bytes exactly as given, no framing (for testing how the server copes with bad input)."""
        self.writer.write(data)

    def _encode(self, message: Any) -> bytes:
        return self._encode_checked(message)[0]

    def _encode_checked(self, message: Any) -> tuple[bytes, bool]:
        """The frame, and whether it holds a lone surrogate.

        A str holding a lone surrogate (text cut mid-emoji, or read with
        ``surrogateescape``) has no UTF-8: it goes out as the ``\\udXXX`` escape
        JavaScript's ``JSON.stringify`` writes, which the sidecar reads back as
        the same str. ``TypeError`` (a value json cannot encode) and
        ``ValueError`` (NaN, infinity: not JSON) are raised as json raises them;
        a frame over the sidecar's limit raises ``PayloadTooLargeError``. Nothing
        is written in those cases.
        """
        params = message.get("params") if isinstance(message, dict) else None
        if isinstance(params, dict) and any(isinstance(value, EncodedJson) for value in params.values()):
            body, suspect = _spliced(message, params)
        else:
            body, suspect = _json_bytes(message)
        if len(body) > MAX_MESSAGE_BYTES:
            method = message.get("method", "the message") if isinstance(message, dict) else "the message"
            raise PayloadTooLargeError(
                message=f"{method}: the message is {len(body)} bytes, over the sidecar's {MAX_MESSAGE_BYTES}-byte frame limit; send smaller batches (it was not sent)",
                data={"bytes": len(body), "limit": MAX_MESSAGE_BYTES},
            )
        if self.framing == "lsp":
            return b"Content-Length: %d\r\n\r\n%b" % (len(body), body), suspect
        return body + b"\n", suspect

    def _write(self, message: Any) -> None:
        if self.closed:
            raise self._closed_error(message.get("method") if isinstance(message, dict) else None)
        self._write_frame(message, self._encode(message))

    def _write_frame(self, message: Any, frame: bytes) -> None:
        if self.closed:
            raise self._closed_error(message.get("method") if isinstance(message, dict) else None)
        if self.trace is not None:
            self.trace("send", _decoded(message))
        self.writer.write(frame)

    def _closed_error(self, method: str | None) -> ConnectionClosed:
        """The error every call and notification gets once the connection is closed."""
        how = "the connection is closed"
        if self.process is not None and self.process.returncode is not None:
            how += f" (the sidecar {describe_exit(self.process.returncode)})"
        return ConnectionClosed(f"{method}: {how}" if method else how, self.returncode)

    def _write_quietly(self, message: Any) -> None:
        try:
            self._write(message)
        except (ConnectionError, RuntimeError) as error:
            logger.debug("could not send %s: %s", message.get("method"), error)

    # -- input ---------------------------------------------------------------------

    async def _read_message(self) -> Any:
        if self.framing == "jsonl":
            while True:
                line = await self.reader.readline()
                if not line:
                    return None
                if line.strip():
                    return loads_json(line)
        length: int | None = None
        while True:
            line = await self.reader.readline()
            if not line:
                return None
            if not line.strip():
                if length is None:
                    raise FrameError("a frame without Content-Length")
                break
            name, _, value = line.decode("ascii", "replace").partition(":")
            if name.strip().lower() == "content-length":
                try:
                    length = int(value.strip())
                except ValueError:
                    raise FrameError(f"bad Content-Length {value.strip()!r}") from None
        return loads_json(await self.reader.readexactly(length))

    async def _read_loop(self) -> None:
        reason = "the sidecar closed its output"
        try:
            while (message := await self._read_message()) is not None:
                if self.trace is not None:
                    self.trace("receive", message)
                try:
                    self._dispatch(message)
                except Exception:  # a bug in a callback must not stop the reader
                    logger.exception("failed to handle %r", message)
        except (asyncio.IncompleteReadError, ConnectionError):
            reason = "the sidecar's output ended in the middle of a message"
        except (FrameError, ValueError) as error:
            reason = f"the sidecar sent something unreadable ({error})"
            logger.error("%s; giving up on the connection", reason)
        finally:
            self._eof = True
            returncode = None
            if self.process is not None:
                try:
                    returncode = await asyncio.wait_for(self.process.wait(), 2.0)
                except TimeoutError:
                    pass
            self._fail_pending(
                reason + (f" (it {describe_exit(returncode)})" if returncode is not None else ""), returncode
            )

    def _fail_pending(self, reason: str, returncode: int | None = None) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(
                    ConnectionClosed(
                        f"{reason} before answering", returncode if returncode is not None else self.returncode
                    )
                )
        self._pending.clear()

    def _dispatch(self, message: Any) -> None:
        if not isinstance(message, dict):
            logger.warning("ignoring a message that is not an object: %r", message)
            return
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                self._serve_request(message["id"], method, message.get("params"))
            else:
                self._notification(method, message.get("params"))
            return
        msg_id = message.get("id")
        future = self._pending.get(msg_id) if isinstance(msg_id, (int, str)) else None
        if future is None and msg_id is None and "error" in message:
            future = self._settle_unaddressed()
        if future is None:
            if msg_id in self._abandoned:
                self._abandoned.discard(msg_id)
                return
            if msg_id in self._unmatched_ids:
                self._unmatched_ids.discard(msg_id)
                return
            if "error" in message:
                error = RpcError.from_error_object(message["error"])
                error.request_id = msg_id if isinstance(msg_id, (int, str)) else None
                if self.on_protocol_error is not None:
                    self._call_back(self.on_protocol_error, error)
                else:
                    logger.warning("error from the sidecar for id %r: %s", msg_id, error)
            else:
                logger.warning("ignoring an answer to id %r: no request of ours is waiting for it", msg_id)
            return
        if future.done():
            return
        if "error" in message:
            future.set_exception(RpcError.from_error_object(message["error"]))
        else:
            future.set_result(message.get("result"))

    def _settle_unaddressed(self) -> asyncio.Future[Any] | None:
        """The call an error answered with ``id: null`` belongs to, if it can be told.

        The sidecar answers ``id: null`` only for a frame whose id it could not
        read (it recovers the id wherever it can, and this client writes the id
        first in every frame). The frame is one of the calls still pending: the
        oldest whose frame holds a lone surrogate escape (the one thing an older
        sidecar could not read in a frame this client encoded), else the only
        call in flight. With several in flight and none suspect nothing tells
        which: None, and the error goes to ``on_protocol_error`` (bound the calls
        with ``asyncio.timeout``).
        """
        for msg_id in self._pending:
            if msg_id in self._suspect and not self._pending[msg_id].done():
                return self._pending[msg_id]
        waiting = [future for future in self._pending.values() if not future.done()]
        return waiting[0] if len(waiting) == 1 else None

    def _notification(self, method: str, params: Any) -> None:
        if method == "$/progress" and isinstance(params, dict):
            token = params.get("token")
            callback = self._progress.get(token)  # type: ignore[arg-type]  # the token as the server sent it: a dict of ours answers None for any other
            if callback is not None:
                self._call_back(callback, params.get("value"))
                return
            if token in self._server_tokens and self.on_server_progress is not None:
                value = params.get("value")
                if isinstance(value, dict) and value.get("kind") == "end":
                    self._server_tokens.discard(token)
                self._call_back(self.on_server_progress, token, value)
                return
        elif method == "$/cancelRequest" and isinstance(params, dict):
            task = self._serving.get(params.get("id"))
            if task is not None:
                task.cancel()
            return
        elif method == "session/didCompact" and self.on_did_compact is not None:
            self._call_back(self.on_did_compact, params)
            return
        elif method == "session/didAppend" and self.on_did_append is not None:
            self._call_back(self.on_did_append, params)
            return
        elif method == "session/didReload" and self.on_did_reload is not None:
            self._call_back(self.on_did_reload, params)
            return
        elif (typed := self._typed_callback(method)) is not None:
            self._call_back(typed, params)
            return
        if self.on_notification is not None:
            self._call_back(self.on_notification, method, params)

    def _typed_callback(self, method: str) -> Callable[..., Any] | None:
        """The ``on_did_x`` callback given for a subscription's ``session/didX`` notification, if any."""
        attribute = SERVER_NOTIFICATIONS_HANDLED.get(method, "")
        if not attribute.startswith("on_") or attribute == "on_notification" or method in ("$/progress",):
            return None
        return getattr(self, attribute, None)

    def _call_back(self, callback: Callable[..., Any], *args: Any) -> None:
        """Run a user callback; an async one becomes a task. Its errors are logged, never raised into the reader."""
        try:
            outcome = callback(*args)
        except Exception:
            logger.exception("callback %r failed", callback)
            return
        if inspect.isawaitable(outcome):
            task = asyncio.ensure_future(outcome)
            self._callbacks.add(task)
            task.add_done_callback(self._callback_done)

    def _callback_done(self, task: asyncio.Task[Any]) -> None:
        self._callbacks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("callback failed", exc_info=task.exception())

    # -- server -> client requests ---------------------------------------------------

    def _serve_request(self, msg_id: Any, method: str, params: Any) -> None:
        task = asyncio.ensure_future(self._answer(msg_id, method, params))
        self._serving[msg_id] = task
        task.add_done_callback(lambda _: self._serving.pop(msg_id, None))

    async def _answer(self, msg_id: Any, method: str, params: Any) -> None:
        handler = self.handlers.get(method)
        answer: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id}
        if handler is None and method == PROGRESS_CREATE and self.on_server_progress is not None:
            if isinstance(params, dict) and isinstance(params.get("token"), (int, str)):
                self._server_tokens.add(params["token"])
            answer["result"] = None
        elif handler is None:
            logger.info("the sidecar asked %s, which this client does not handle", method)
            answer["error"] = {
                "code": -32601,
                "message": f"the client does not handle {method}",
                "data": {"kind": "methodNotFound", "method": method},
            }
        else:
            try:
                result = handler(params)
                if inspect.isawaitable(result):
                    result = await result
                answer["result"] = result
            except asyncio.CancelledError:
                if self.closed:
                    raise
                answer["error"] = {
                    "code": -32800,
                    "message": f"{method} was cancelled",
                    "data": {"kind": "requestCancelled"},
                }
            except RpcError as error:
                answer["error"] = error.to_dict()
            except Exception as error:
                logger.info("the %s handler raised %r", method, error)
                answer["error"] = {
                    "code": -32603,
                    "message": f"{type(error).__name__}: {error}" if str(error) else type(error).__name__,
                    "data": {"kind": "internalError", "method": method},
                }
        if not self.closed:
            self._write_quietly(answer)


def _resolve_command(command: str | Sequence[str] | None) -> list[str]:
    if command is None:
        configured = os.environ.get("SESSION_SIDECAR_BIN")
        if configured:
            return [configured]
        found = shutil.which(DEFAULT_COMMAND)
        if found is None:
            raise FileNotFoundError(
                f"{DEFAULT_COMMAND} is not on PATH; install it (pip install session-sidecar), "
                "set SESSION_SIDECAR_BIN to its path (.venv/bin/session-sidecar after scripts/demo.sh) or pass command=[...]"
            )
        return [found]
    if isinstance(command, (str, os.PathLike)):
        return [os.fspath(command)]
    return [os.fspath(part) for part in command]


# Linux's F_SETPIPE_SZ (fcntl names it from Python 3.10 on Linux only), and the size asked for: a large request
# (an append of 1,000 entries is ~250 KB) fits in one write, which the sidecar reads in one go (its pipe reader
# takes up to 256 KiB at a time), instead of 64 KiB pieces, each a wake-up of both processes (~1 ms of such
# an append's 10 ms); 1 MiB is the most an unprivileged process may ask for (/proc/sys/fs/pipe-max-size).
_SET_PIPE_SIZE = getattr(fcntl, "F_SETPIPE_SZ", None) if fcntl is not None else None
_PIPE_SIZE = 1 << 20


def _widen_pipe(stdin: asyncio.StreamWriter) -> None:
    """Make the pipe to the sidecar's stdin hold ``_PIPE_SIZE`` bytes where the OS lets it (else as it is)."""
    if _SET_PIPE_SIZE is None:
        return
    pipe = stdin.transport.get_extra_info("pipe")
    try:
        fcntl.fcntl(pipe.fileno(), _SET_PIPE_SIZE, _PIPE_SIZE)
    except (OSError, AttributeError, ValueError):
        pass  # (over the user's pipe quota, or no descriptor: 64 KiB pieces, as before)


def loads_json(data: str | bytes) -> Any:
    """A frame's JSON (or any JSON text) decoded: by msgspec where it is installed (a large answer ~3x faster), else by json.

    msgspec gives what json gives or refuses (a lone surrogate's escape, NaN, a number past a float,
    UTF-16): what it refuses is decoded by json, as it always was."""
    if _msgspec_loads is not None:
        try:
            return _msgspec_loads(data)
        except _msgspec_refusals:
            pass
    return json.loads(data)


def _json_bytes(value: Any) -> tuple[bytes, bool]:
    """``value`` as compact UTF-8 JSON, and whether it holds a lone surrogate (then written as its escape)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        return text.encode(), False
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode(), True


def _spliced(message: dict[str, Any], params: dict[str, Any]) -> tuple[bytes, bool]:
    """The frame body ``_json_bytes`` gives of ``message`` with each ``EncodedJson`` params value decoded,
    made without decoding them: every other key and value encoded as ``json`` does, in the same order.
    The pieces are joined once (each join or + of a large batch's bytes is a copy of them)."""
    suspect = False
    pieces: list[bytes] = []

    def add(value: Any) -> None:
        nonlocal suspect
        if isinstance(value, EncodedJson):
            pieces.append(value)
            return
        encoded, odd = _json_bytes(value)
        suspect = suspect or odd
        pieces.append(encoded)

    def members(obj: dict[str, Any]) -> None:
        pieces.append(b"{")
        for index, (key, value) in enumerate(obj.items()):
            if index:
                pieces.append(b",")
            add(key)
            pieces.append(b":")
            if value is params:
                members(value)
            else:
                add(value)
        pieces.append(b"}")

    members(message)
    return b"".join(pieces), suspect


def _decoded(message: Any) -> Any:
    """What a trace is shown of a message: any ``EncodedJson`` params value decoded (as if it had been sent so)."""
    params = message.get("params") if isinstance(message, dict) else None
    if not isinstance(params, dict) or not any(isinstance(value, EncodedJson) for value in params.values()):
        return message
    decoded = {key: json.loads(value) if isinstance(value, EncodedJson) else value for key, value in params.items()}
    return {**message, "params": decoded}
