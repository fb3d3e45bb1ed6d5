"""Message framing on a byte stream: LSP ``Content-Length`` headers or one JSON value per line.

Readers turn the input stream into message bodies; a frame they cannot read
becomes a ``FrameError`` (answered with ``id: null``) after the reader has
resynchronised, so one bad frame never stops the server. Writers put bodies
on stdout in the same framing.

On POSIX pipes stdin is read by an asyncio pipe reader (reading it in a
thread pool, as pygls did, measured ~4x slower per round trip). Elsewhere (Windows,
stdin redirected from a file) a reader thread does the blocking reads.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import stat
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import BinaryIO, Literal, Protocol

from ..errors import PARSE_ERROR, PayloadTooLarge

logger = logging.getLogger(__name__)

Framing = Literal["lsp", "jsonl"]
FRAMINGS: tuple[Framing, ...] = ("lsp", "jsonl")

# A session entry can carry a large tool output; anything bigger than this is
# a runaway client, not a message.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024

_HEADER_LINE = re.compile(rb"^([A-Za-z][A-Za-z0-9-]*):(.*)$", re.S)
_CONTENT_LENGTH = re.compile(rb"content-length:", re.I)


class FrameError(Exception):
    """A frame that could not be read; the reader has already skipped past it."""

    def __init__(self, message: str, code: int = PARSE_ERROR, **data: object) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.data = {"kind": "parseError" if code == PARSE_ERROR else "payloadTooLarge", **data}


class ByteStream(Protocol):
    async def readline(self) -> bytes: ...

    async def readexactly(self, n: int) -> bytes: ...


class FrameReader(Protocol):
    async def read(self) -> bytes | None:
        """The next message body; None at end of input; raises FrameError for a bad frame."""
        ...


class LspFrameReader:
    """``Content-Length: N\\r\\n`` (other headers ignored), a blank line, N bytes of JSON."""

    def __init__(self, stream: ByteStream, max_bytes: int = MAX_MESSAGE_BYTES) -> None:
        self._stream = stream
        self._max_bytes = max_bytes

    async def read(self) -> bytes | None:
        length: int | None = None
        problem: str | None = None
        seen_header = False
        while True:
            line = await self._readline()
            if line is None:
                return None
            if not line.strip():
                if not seen_header and problem is None:
                    continue  # blank lines between messages are harmless
                break
            match = _HEADER_LINE.match(line.rstrip(b"\r\n"))
            if match is None:
                # Junk: the tail of a body whose length was wrong, or noise. A
                # header glued to its end is where the next frame starts.
                found = _CONTENT_LENGTH.search(line)
                logger.warning("skipping bytes that are not a header: %r", line[:120])
                if found is None:
                    problem = problem or f"expected a header line such as 'Content-Length: 42', got {line[:60]!r}"
                    continue
                match = _HEADER_LINE.match(line[found.start() :].rstrip(b"\r\n"))
                assert match is not None
                problem = None
            seen_header = True
            name, value = match.group(1).lower(), match.group(2).strip()
            if name == b"content-length":
                # More than 20 digits is no byte count (and int() refuses over 4300 digits).
                if not value.isdigit() or len(value) > 20:
                    problem = f"Content-Length must be a byte count, got {value[:40]!r}"
                    length = None
                else:
                    length = int(value)
        if problem is not None or length is None:
            raise FrameError(problem or "a header block without Content-Length")
        if length > self._max_bytes:
            await self._discard(length)
            raise FrameError(
                f"message of {length} bytes is over the {self._max_bytes}-byte limit; send smaller batches",
                code=PayloadTooLarge.code,
                limit=self._max_bytes,
                size=length,
            )
        try:
            return await self._stream.readexactly(length)
        except asyncio.IncompleteReadError:
            logger.warning("input ended inside a message body")
            return None

    async def _readline(self) -> bytes | None:
        try:
            line = await self._stream.readline()
        except ValueError:  # a header line longer than the stream's limit
            raise FrameError("a header line is too long; is this LSP framing?") from None
        return line or None

    async def _discard(self, count: int) -> None:
        while count > 0:
            chunk = min(count, 1 << 20)
            try:
                await self._stream.readexactly(chunk)
            except asyncio.IncompleteReadError:
                return
            count -= chunk


class JsonlFrameReader:
    """One JSON value per line (``\\n``, optionally ``\\r\\n``); blank lines are skipped."""

    def __init__(self, stream: ByteStream, max_bytes: int = MAX_MESSAGE_BYTES) -> None:
        self._stream = stream
        self._max_bytes = max_bytes

    async def read(self) -> bytes | None:
        while True:
            try:
                line = await self._stream.readline()
            except ValueError:  # asyncio's limit: the over-long line is dropped
                raise FrameError(
                    f"a line over the {self._max_bytes}-byte limit was dropped; send smaller batches",
                    code=PayloadTooLarge.code,
                    limit=self._max_bytes,
                ) from None
            if not line:
                return None
            if line.strip():
                return line


def make_reader(framing: Framing, stream: ByteStream, max_bytes: int = MAX_MESSAGE_BYTES) -> FrameReader:
    return LspFrameReader(stream, max_bytes) if framing == "lsp" else JsonlFrameReader(stream, max_bytes)


class _ThreadedStream:
    """Blocking reads of a binary file in one dedicated thread (the portable fallback)."""

    def __init__(self, source: BinaryIO) -> None:
        self._source = source
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stdin")

    async def readline(self) -> bytes:
        return await asyncio.get_running_loop().run_in_executor(self._thread, self._source.readline)

    async def readexactly(self, n: int) -> bytes:
        data = await asyncio.get_running_loop().run_in_executor(self._thread, self._source.read, n)
        if len(data) < n:
            raise asyncio.IncompleteReadError(data, n)
        return data


async def open_input(source: BinaryIO, max_bytes: int = MAX_MESSAGE_BYTES) -> ByteStream:
    """An asyncio reader for ``source``: a pipe reader where the OS allows, else a reader thread."""
    if sys.platform != "win32":
        try:
            mode = os.fstat(source.fileno()).st_mode
        except (OSError, ValueError):
            mode = 0
        # Not terminals: a pipe reader makes the descriptor non-blocking, which
        # would leak into the shell that shares the terminal.
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            loop = asyncio.get_running_loop()
            reader = asyncio.StreamReader(limit=max_bytes, loop=loop)
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), source)
            return reader
    return _ThreadedStream(source)


class FrameWriter:
    """Writes framed bodies to a file descriptor; only the event loop thread calls it.

    The first frame of a turn of the event loop is written at once; frames
    sent later in the same turn (answers to pipelined requests read from one
    chunk of input) are written together when the turn ends: one write
    instead of one per answer, in the same order.
    """

    def __init__(self, fd: int, framing: Framing) -> None:
        self._fd = fd
        self._framing = framing
        self.closed = False
        self._held: list[bytes] = []
        self._turn: asyncio.AbstractEventLoop | None = None  # set while a turn's first frame is out

    def send(self, body: bytes) -> None:
        if self.closed:
            return
        if self._framing == "lsp":
            data = b"Content-Length: %d\r\n\r\n%b" % (len(body), body)
        else:
            data = body + b"\n"  # msgspec's JSON never holds a raw newline
        if self._turn is not None:
            self._held.append(data)
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is not None:
            self._turn = loop
            loop.call_soon(self.flush)
        self._write(data)

    def flush(self) -> None:
        """Write the frames held back in this turn (the event loop calls it at the turn's end)."""
        self._turn = None
        if self._held:
            data = b"".join(self._held)
            self._held.clear()
            self._write(data)

    def _write(self, data: bytes) -> None:
        if self.closed:
            return
        view = memoryview(data)
        try:
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
        except (BrokenPipeError, ConnectionResetError):
            logger.warning("the client closed stdout; dropping further output")
            self.closed = True

    def close(self) -> None:
        self.flush()
        self.closed = True


def claim_stdout() -> int:
    """Keep stdout for protocol messages only; the descriptor to write them to.

    The real stdout is moved to a private descriptor, and descriptor 1 (with
    ``sys.stdout``) now points at stderr: a stray ``print`` in any library
    lands in the log instead of corrupting a frame.
    """
    sys.stdout.flush()
    private = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return private
