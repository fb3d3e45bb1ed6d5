"""``serve``'s start-up: answer the first ``initialize`` as early as possible, then hand over to the server.

A client's first message is ``initialize``, so this module reads it with our
own framing reader and, when it is a well-formed ``initialize`` request that
succeeds, answers it through ``lifecycle.initialize`` - the function the
server's ``initialize`` feature runs too - before the server itself and what
it brings (the dispatcher, the compaction engine its hooks wire) are set up.
The server is then given the service, the lifecycle state, the reader and the
writer, and serves everything else exactly as before. (This began as a way
round pygls' ~300 ms import; the server no longer stands on pygls, see
``endpoint.py``, and the early answer stays: it is still the earliest moment.)

Start-up makes many objects (modules, classes, functions) that live as long
as the process. Scanning them again is wasted work: they are frozen
(``gc.freeze``) once start-up is over. The collector stays on.

Anything else as the first frame (a bad frame, end of input, another method, a
malformed envelope, an ``initialize`` whose params are refused) is not
answered here: it is handed to the server unread, which gives it the
answer it always gave. So this module adds no behaviour of its own, only an
earlier moment for one answer.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import msgspec

from ..config import Settings
from .errors import UNREADABLE
from .framing import FrameError, FrameReader, FrameWriter, Framing, claim_stdout, make_reader, open_input, sniff_framing

if TYPE_CHECKING:
    from ..service import SessionService
    from .server import SidecarServer

logger = logging.getLogger(__name__)

_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode

# What the first read gave, when it is handed to the server instead of answered here.
Unread = bytes | FrameError | None


def serve(
    root: Path,
    settings: Settings | None = None,
    *,
    framing: Framing | None = None,
    max_workers: int | None = None,
    stdin: BinaryIO | None = None,
    stdout_fd: int | None = None,
) -> int:
    """Serve on stdin/stdout until ``exit`` or end of input; the exit code (0 after shutdown or at
    end of input, 1 on exit without shutdown). ``framing`` None: the client's, told by its first byte."""
    if stdout_fd is None:
        stdout_fd = claim_stdout()
    servers: list[SidecarServer] = []
    try:
        return asyncio.run(
            _serve(root, settings or Settings(), framing, max_workers, stdin or sys.stdin.buffer, stdout_fd, servers)
        )
    finally:
        for server in servers:
            server.shutdown()


async def _serve(
    root: Path,
    settings: Settings,
    framing: Framing | None,
    max_workers: int | None,
    stdin: BinaryIO,
    stdout_fd: int,
    servers: list[SidecarServer],
) -> int:
    from . import lifecycle  # noqa: F401  (the service and the store, imported before waiting for input)

    default_root = Path(root).expanduser().absolute()
    stream = await open_input(stdin)
    framing = framing or await sniff_framing(stream) or "lsp"
    reader = make_reader(framing, stream)
    writer = FrameWriter(stdout_fd, framing)
    service, unread = await answer_first_initialize(reader, writer, settings, default_root)

    gc.freeze()  # see the module's doc
    from .server import SidecarServer

    server = SidecarServer(default_root, settings, framing=framing, max_workers=max_workers, keep_serving=_keep_serving)
    servers.append(server)
    if service is not None:
        server.attach(service)
        server.protocol.state = "ready"
    gc.freeze()  # start-up is over
    return await server.run(reader if service is not None else _Replay(unread, reader), writer)


async def _keep_serving(server: SidecarServer, sock: socket.socket, path: Path) -> None:
    """initialize's keepServing (rpc/sockets.py, imported only by a sidecar that is asked to)."""
    from .sockets import keep_serving

    await keep_serving(server, sock, path)


async def answer_first_initialize(
    reader: FrameReader, writer: FrameWriter, settings: Settings, default_root: Path
) -> tuple[SessionService | None, Unread]:
    """Read the first frame and answer it if it is an ``initialize`` that succeeds.

    Returns the new service (answered), or None and what was read (not answered).
    """
    try:
        body = await reader.read()
    except FrameError as error:
        return None, error
    if body is None:
        return None, None
    service = _initialize(body, writer, settings, default_root)
    return (service, None) if service is not None else (None, body)


def _initialize(body: bytes, writer: FrameWriter, settings: Settings, default_root: Path) -> SessionService | None:
    from .lifecycle import initialize

    try:
        message = _decode(body)
    except UNREADABLE:  # answered by the server
        return None
    # The envelope checks of SidecarProtocol.handle_body, for this one case.
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or message.get("method") != "initialize":
        return None
    msg_id = message.get("id")
    if "id" not in message or not isinstance(msg_id, (str, int)) or isinstance(msg_id, bool):
        return None
    try:
        service, result = initialize(message.get("params"), settings, default_root)
        answer = _encode({"jsonrpc": "2.0", "id": msg_id, "result": result})
    except Exception as exc:  # refused (or a bug): the server runs it again and answers as it always did
        logger.debug("initialize is left to the server: %s", exc)
        return None
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug("<- %s", body[:2000].decode("utf-8", "replace"))
        logger.debug("-> %s", answer[:2000].decode("utf-8", "replace"))
    writer.send(answer)
    return service


class _Replay:
    """A reader that first gives back what was already read (a body, a bad frame, or the end)."""

    def __init__(self, unread: Unread, reader: FrameReader) -> None:
        self._pending: list[Unread] = [unread]
        self._reader = reader

    async def read(self) -> bytes | None:
        if self._pending:
            item = self._pending.pop()
            if isinstance(item, FrameError):
                raise item
            return item
        return await self._reader.read()

    def ready(self) -> bool:
        ready = getattr(self._reader, "ready", None)
        return bool(self._pending) or (ready is not None and ready())
