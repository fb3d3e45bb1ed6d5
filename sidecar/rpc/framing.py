"""Message framing on a byte stream: LSP ``Content-Length`` headers or one JSON value per line.

Readers turn the input stream into message bodies; a frame they cannot read
becomes a ``FrameError`` after the reader has resynchronised, so one bad frame
never stops the server and never takes the frame after it. The error carries
the id of the request the frame held when its bytes name one (salvage.py), so
it answers that request; else it is answered with ``id: null``. Which framing
a client writes is told by its first byte (``sniff_framing``). Writers put
bodies on stdout in the same framing.

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
from .salvage import SCAN_BYTES, TAIL_BYTES, names_jsonrpc, recover_id

logger = logging.getLogger(__name__)

Framing = Literal["lsp", "jsonl"]
FRAMINGS: tuple[Framing, ...] = ("lsp", "jsonl")

# A session entry can carry a large tool output; anything bigger than this is
# a runaway client, not a message.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024

_HEADER_LINE = re.compile(rb"^([A-Za-z][A-Za-z0-9-]*):(.*)$", re.S)
_CONTENT_LENGTH = re.compile(rb"content-length:", re.I)


class FrameError(Exception):
    """A frame that could not be read; the reader has already skipped past it.

    ``id`` is the id of the request the frame held when it could be read from
    its bytes (see salvage.py), so the error answers that request; else None.
    """

    def __init__(self, message: str, code: int = PARSE_ERROR, id: int | str | None = None, **data: object) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.id = id
        self.data = {"kind": "parseError" if code == PARSE_ERROR else "payloadTooLarge", **data}


def too_large(size: int, limit: int, head: bytes, tail: bytes, unit: str = "message") -> FrameError:
    """The error for a body over the limit, skipped; it answers the id its head (or end) names."""
    return FrameError(
        f"{unit} of {size} bytes is over the {limit}-byte limit and was skipped; send smaller batches "
        "(large tool output: split it over several appends)",
        code=PayloadTooLarge.code,
        id=recover_id(head, tail),
        limit=limit,
        size=size,
    )


class ByteStream(Protocol):
    """What the readers read: asyncio.StreamReader's methods, with its exceptions."""

    async def readline(self) -> bytes: ...

    async def readuntil(self, separator: bytes = b"\n") -> bytes: ...

    async def readexactly(self, n: int) -> bytes: ...


class FrameReader(Protocol):
    async def read(self) -> bytes | None:
        """The next message body; None at end of input; raises FrameError for a bad frame."""
        ...

    def ready(self) -> bool:
        """The next ``read`` returns a body already read, without waiting for input."""
        ...


def framing_of(first: bytes) -> Framing:
    """The framing a client writes, from the first byte it sends: ``{``, ``[`` or white space
    start JSON lines; anything else (``C`` of ``Content-Length``) LSP headers."""
    return "jsonl" if first and first in b"{[ \t\r\n" else "lsp"


async def sniff_framing(stream: ByteStream) -> Framing | None:
    """``framing_of`` the stream's first byte, which is left to be read again; None if the input
    ends before it."""
    if type(stream) is asyncio.StreamReader:
        first = await stream.read(1)
        stream._buffer[:0] = first  # type: ignore[attr-defined]  # put back: asyncio keeps the buffer _take_frames reads private
    else:
        first = await stream.peek(1)  # type: ignore[attr-defined]  # the threaded stream peeks; ByteStream names no peek
    return framing_of(first) if first else None


class LspFrameReader:
    """``Content-Length: N\\r\\n`` (other headers ignored), a blank line, N bytes of JSON.

    Bytes outside a frame (junk, the tail of a body whose Content-Length was
    wrong, a client writing JSON lines) never take the frame after them: a
    header line ends them wherever it starts, even glued to their end. A line
    of them that is a JSON-RPC message (an object with ``"jsonrpc"``) is read
    as one, as with JSON lines. Other lines of junk are one parse error per
    run, except junk a header is glued to: that is the tail of a body whose
    Content-Length was too short, and that body was answered already.
    """

    def __init__(self, stream: ByteStream, max_bytes: int = MAX_MESSAGE_BYTES) -> None:
        self._stream = stream
        self._max_bytes = max_bytes
        self._ready: collections.deque[bytes] = collections.deque()
        self._held: bytes | None = None  # a line read that the next read starts with

    def ready(self) -> bool:
        return bool(self._ready) or (
            self._held is None and _take_frames(self._stream, self._ready, _lsp_frames, self._max_bytes)
        )

    async def read(self) -> bytes | None:
        if self._ready or (
            self._held is None and _take_frames(self._stream, self._ready, _lsp_frames, self._max_bytes)
        ):
            return self._ready.popleft()
        junk = _Junk()
        while True:
            line = await self._next_line()
            if line is None or not line.strip():
                if junk:
                    raise junk.error()
                if line is None:
                    return None
                continue  # blank lines between messages are harmless
            before, header = _split_at_header(line)
            if before.strip() and names_jsonrpc(before):  # a JSON-RPC message on a line of its own
                if junk:
                    self._held = line
                    raise junk.error()
                self._held = header
                return before
            if before.strip():
                junk.add(before)
                if header is not None:  # glued to the tail of a body whose length was wrong: answered already
                    return await self._frame(header)
            elif header is not None:
                if junk:
                    self._held = header
                    raise junk.error()
                return await self._frame(header)

    async def _frame(self, line: bytes) -> bytes | None:
        """The body of the frame whose first header line is ``line``."""
        length: int | None = None
        problem: str | None = None
        while True:
            match = _HEADER_LINE.match(line.rstrip(b"\r\n"))
            assert match is not None
            name, value = match.group(1).lower(), match.group(2).strip()
            if name == b"content-length":
                # More than 20 digits is no byte count (and int() refuses over 4300 digits).
                if not value.isdigit() or len(value) > 20:
                    problem, length = f"Content-Length must be a byte count, got {value[:40]!r}", None
                else:
                    problem, length = None, int(value)
            next_line = await self._next_line()
            if next_line is None:
                return None  # the input ended inside a header block
            if not next_line.strip():
                break
            if _HEADER_LINE.match(next_line.rstrip(b"\r\n")) is None:
                self._held = next_line  # read again as what it is (junk, a message line, a glued header)
                raise FrameError(
                    f"a header block ended by {next_line[:60]!r} instead of a blank line; "
                    "send 'Content-Length: N', a blank line (\\r\\n\\r\\n), then N bytes"
                )
            line = next_line
        if problem is not None or length is None:
            raise FrameError(
                problem or "a header block without Content-Length; send 'Content-Length: N' before each body"
            )
        if length > self._max_bytes:
            raise await self._skip_body(length)
        try:
            return await self._stream.readexactly(length)
        except asyncio.IncompleteReadError:
            logger.warning("input ended inside a message body")
            return None

    async def _next_line(self) -> bytes | None:
        if self._held is not None:
            line, self._held = self._held, None
            return line
        try:
            line = await self._stream.readline()
        except ValueError:  # a header line longer than the stream's limit
            raise FrameError("a header line is too long; is this LSP framing?") from None
        return line or None

    async def _skip_body(self, length: int) -> FrameError:
        """Read past a body over the limit, keeping its head and end for its id; the error."""
        head = tail = b""
        left = length
        while left > 0:
            try:
                chunk = await self._stream.readexactly(min(left, 1 << 20))
            except asyncio.IncompleteReadError as end:
                chunk, left = end.partial, len(end.partial)
            head = head or chunk[:SCAN_BYTES]
            tail = (tail + chunk[-TAIL_BYTES:])[-TAIL_BYTES:]
            left -= len(chunk)
        return too_large(length, self._max_bytes, head, tail)


def _split_at_header(line: bytes) -> tuple[bytes, bytes | None]:
    """(bytes before a header, the header line or None): a whole header line, or a Content-Length
    glued to the end of other bytes (the tail of a body whose length was wrong: the next frame)."""
    if _HEADER_LINE.match(line.rstrip(b"\r\n")) is not None:
        return b"", line
    found = _CONTENT_LENGTH.search(line)
    if found is None:
        return line, None
    return line[: found.start()], line[found.start() :]


class _Junk:
    """A run of lines outside any frame: counted, the first kept to show in the error."""

    def __init__(self) -> None:
        self.first = b""
        self.lines = 0

    def __bool__(self) -> bool:
        return self.lines > 0

    def add(self, data: bytes) -> None:
        logger.warning("skipping bytes that are not a header: %r", data[:120])
        self.first = self.first or data
        self.lines += 1

    def error(self) -> FrameError:
        more = f" and {self.lines - 1} more lines" if self.lines > 1 else ""
        return FrameError(f"expected a header line such as 'Content-Length: 42', got {self.first[:60]!r}{more}")


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
                line = await self._stream.readuntil(b"\n")
            except asyncio.IncompleteReadError as end:  # the last line, without its newline
                line = end.partial
                if not line:
                    return None
            except asyncio.LimitOverrunError as over:
                raise await self._skip_line(over.consumed) from None
            if line.strip():
                return line

    async def _skip_line(self, consumed: int) -> FrameError:
        """Read past a line over the limit (the stream left its bytes unread), keeping its head and
        end for its id; the error."""
        head = await self._stream.readexactly(consumed)
        size, tail = len(head), head[-TAIL_BYTES:]
        head = head[:SCAN_BYTES]
        while True:
            try:
                rest = await self._stream.readuntil(b"\n")
            except asyncio.IncompleteReadError as end:
                rest = end.partial
            except asyncio.LimitOverrunError as over:
                rest = await self._stream.readexactly(over.consumed)
                size, tail = size + len(rest), (tail + rest[-TAIL_BYTES:])[-TAIL_BYTES:]
                continue
            size, tail = size + len(rest), (tail + rest[-TAIL_BYTES:])[-TAIL_BYTES:]
            return too_large(size, self._max_bytes, head, tail, unit="line")


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
    buffer = stream._buffer  # type: ignore[attr-defined]  # (read in place: asyncio keeps it private)
    if not buffer:
        return False
    taken = frames(buffer, ready, max_bytes)
    if not taken:
        return False
    del buffer[:taken]
    stream._maybe_resume_transport()  # type: ignore[attr-defined]  # private to asyncio; as its own reads do, once the buffer is below its limit again
    return bool(ready)


def make_reader(framing: Framing, stream: ByteStream, max_bytes: int = MAX_MESSAGE_BYTES) -> FrameReader:
    return LspFrameReader(stream, max_bytes) if framing == "lsp" else JsonlFrameReader(stream, max_bytes)


class _ThreadedStream:
    """Blocking reads of a binary file in one dedicated thread (the portable fallback), with
    asyncio.StreamReader's contract: a line over ``limit`` raises LimitOverrunError and stays to be read."""

    def __init__(self, source: BinaryIO, limit: int = MAX_MESSAGE_BYTES) -> None:
        self._source = source
        self._limit = limit
        self._pending = b""  # read from the file, not yet by the caller (a peek, an over-long line)
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stdin")

    async def _run(self, read: Any, *args: Any) -> bytes:
        return await asyncio.get_running_loop().run_in_executor(self._thread, read, *args)

    async def peek(self, n: int) -> bytes:
        if len(self._pending) < n:
            self._pending += await self._run(self._source.read, n - len(self._pending))
        return self._pending[:n]

    async def readline(self) -> bytes:
        """As StreamReader's: the last line's bytes at the end of input; a line over the limit is
        dropped (as far as read) with ValueError."""
        try:
            return await self.readuntil(b"\n")
        except asyncio.IncompleteReadError as end:
            return end.partial
        except asyncio.LimitOverrunError as over:
            self._pending = self._pending[over.consumed :]
            raise ValueError(str(over)) from None

    async def readuntil(self, separator: bytes = b"\n") -> bytes:
        assert separator == b"\n"
        if b"\n" not in self._pending:
            self._pending += await self._run(self._source.readline, self._limit + 1)
        end = self._pending.find(b"\n") + 1 or len(self._pending)
        if end > self._limit:
            raise asyncio.LimitOverrunError("a line over the limit", min(end, self._limit))
        line, self._pending = self._pending[:end], self._pending[end:]
        if not line.endswith(b"\n"):
            raise asyncio.IncompleteReadError(line, None)
        return line

    async def readexactly(self, n: int) -> bytes:
        data, self._pending = self._pending[:n], self._pending[n:]
        if len(data) < n:
            data += await self._run(self._source.read, n - len(data))
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
    return _ThreadedStream(source, max_bytes)


class FrameSink(Protocol):
    """Where a connection's frames go: ``FrameWriter`` (a pipe), sockets.py's ``SocketFrameWriter``."""

    closed: bool

    def send(self, body: bytes) -> None: ...

    def flush(self) -> None: ...


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
