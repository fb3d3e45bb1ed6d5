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
import collections
import logging
import os
import re
import stat
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any, BinaryIO, Literal, Protocol

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

    def ready(self) -> bool:
        """The next ``read`` returns a body already read, without waiting for input."""
        ...


class LspFrameReader:
    """``Content-Length: N\\r\\n`` (other headers ignored), a blank line, N bytes of JSON."""

    def __init__(self, stream: ByteStream, max_bytes: int = MAX_MESSAGE_BYTES) -> None:
        self._stream = stream
        self._max_bytes = max_bytes
        self._ready: collections.deque[bytes] = collections.deque()

    def ready(self) -> bool:
        return bool(self._ready) or _take_frames(self._stream, self._ready, _lsp_frames, self._max_bytes)

    async def read(self) -> bytes | None:
        if self._ready or _take_frames(self._stream, self._ready, _lsp_frames, self._max_bytes):
            return self._ready.popleft()
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
        self._ready: collections.deque[bytes] = collections.deque()

    def ready(self) -> bool:
        return bool(self._ready) or _take_frames(self._stream, self._ready, _jsonl_frames, self._max_bytes)

    async def read(self) -> bytes | None:
        if self._ready or _take_frames(self._stream, self._ready, _jsonl_frames, self._max_bytes):
            return self._ready.popleft()
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


# -- whole frames from what was already read --------------------------------------------
#
# A client that pipelines sends many requests in one write, and the pipe hands
# them to us in one read. Taking each through readline/readline/readexactly
# costs several coroutine steps per frame (about a tenth of a small append's
# time in the server); instead, the well-formed frames already in the stream
# reader's buffer are cut out in one pass. Anything else (a partial frame,
# other headers, junk, an oversized body, an error or the end of input) is left
# in the buffer for the readers' line-by-line code above, which handles it as
# it always did. This reads asyncio.StreamReader's buffer (``_buffer``), which
# has been its buffer since Python 3.4; any other stream takes the line-by-line code.

_LSP_HEADER = b"Content-Length: "
# "Content-Length: " + at most 20 digits + "\r\n\r\n"
_LSP_HEADER_MAX = len(_LSP_HEADER) + 20 + 4


def _lsp_frames(buffer: bytearray, ready: collections.deque[bytes], max_bytes: int) -> int:
    """Append the bodies of the complete ``Content-Length: N\r\n\r\n`` frames at the start of
    ``buffer`` to ``ready``; the number of bytes they took."""
    at, size = 0, len(buffer)
    while buffer.startswith(_LSP_HEADER, at):
        digits_at = at + len(_LSP_HEADER)
        blank = buffer.find(b"\r\n\r\n", digits_at, at + _LSP_HEADER_MAX)
        if blank < 0:
            break
        digits = buffer[digits_at:blank]
        if not digits.isdigit():
            break
        length = int(digits)
        start = blank + 4
        if length > max_bytes or start + length > size:
            break
        ready.append(bytes(buffer[start : start + length]))
        at = start + length
    return at


def _jsonl_frames(buffer: bytearray, ready: collections.deque[bytes], max_bytes: int) -> int:
    """Append the complete non-blank lines at the start of ``buffer`` to ``ready`` (blank ones are
    skipped, as the reader does); the number of bytes they took."""
    at = 0
    while (end := buffer.find(b"\n", at)) >= 0:
        if end + 1 - at > max_bytes:
            break
        line = bytes(buffer[at : end + 1])
        if line.strip():
            ready.append(line)
        at = end + 1
    return at


def _take_frames(stream: Any, ready: collections.deque[bytes], frames: Any, max_bytes: int) -> bool:
    """Move the complete frames at the start of an asyncio stream reader's buffer to ``ready``; True if any."""
    if type(stream) is not asyncio.StreamReader or stream.exception() is not None:
        return False
    buffer = stream._buffer
    if not buffer:
        return False
    taken = frames(buffer, ready, max_bytes)
    if not taken:
        return False
    del buffer[:taken]
    stream._maybe_resume_transport()  # as its own reads do, once the buffer is below its limit again
    return bool(ready)


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
