"""Frame readers: the frames cut out of a stream reader's buffer in one pass read exactly as the
line-by-line path reads them, whatever the input holds and however it is split into reads."""

from __future__ import annotations

import asyncio
import io
import random

import pytest

from sidecar.rpc.framing import FrameError, _ThreadedStream, make_reader, sniff_framing


class _LineByLine:
    """The same stream under another type: the readers take their line-by-line path only."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self._stream = stream

    async def readline(self) -> bytes:
        return await self._stream.readline()

    async def readuntil(self, separator: bytes = b"\n") -> bytes:
        return await self._stream.readuntil(separator)

    async def readexactly(self, n: int) -> bytes:
        return await self._stream.readexactly(n)


def _lsp(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


LSP_INPUT = b"".join(
    [
        _lsp(b'{"id":1}'),
        _lsp(b'{"id":2}'),
        b"\r\n",  # a blank line between frames
        _lsp(b'{"id":3}'),
        b"Content-Type: application/json\r\n" + _lsp(b'{"id":4}'),  # another header first
        b"Content-Length: 8\r\nContent-Type: x\r\n\r\n" + b'{"id":5}',  # another header after
        b"content-length: 8\r\n\r\n" + b'{"id":6}',  # lower case
        b"garbage line\r\n",  # junk: an error, then the next frame
        _lsp(b'{"id":7}'),
        b"Content-Length: 12x\r\n\r\n",  # not a count: an error
        _lsp(b'{"id":8}'),
        b"Content-Length: 9999\r\n\r\n",  # over the limit: an error, its bytes skipped
        b"x" * 9999,
        _lsp(b'{"id":9}'),
        _lsp(b'{"id":10, "text": "' + b"a" * 300 + b'"}'),
        b'{"jsonrpc":"2.0","id":20}\n',  # a JSON-RPC message on a line of its own: read as one
        b'{"not":"rpc"}\r\njunk\r\n' + _lsp(b'{"id":21}'),  # two lines of junk: one error, then the frame
        b"tail of a body" + _lsp(b'{"id":22}'),  # a header glued to junk (a body's tail): the frame, no error
        b"Content-Length: 5\r\nnot a header\r\n" + _lsp(b'{"id":23}'),  # a header block cut: two errors
        b"Content-Length: 5000\r\n\r\n"
        + b'{"jsonrpc":"2.0","id":24,"params":"'
        + b"p" * 4963
        + b'"}',  # too large: its id
        b'Content-Length: 40\r\n\r\n{"id":11}',  # cut short by the end of input
    ]
)

JSONL_INPUT = b"".join(
    [
        b'{"id":1}\n',
        b'{"id":2}\r\n',
        b"\n",
        b"   \n",
        b'{"id":3}\n',
        b"not json\n",
        b'{"id":4, "text": "' + b"b" * 300 + b'"}\n',
        b"z" * 5000 + b"\n",
        b'{"id":5}\n',
        b'{"id":25,"text":"' + b"q" * 9000 + b'"}\n',
        b'{"id":6}',  # too long: skipped to its end, its id kept
    ]
)


async def _read_all(framing: str, data: bytes, chunks: list[int], line_by_line: bool) -> list[object]:
    stream = asyncio.StreamReader(limit=4096)
    reader = make_reader(framing, _LineByLine(stream) if line_by_line else stream, max_bytes=4096)  # type: ignore[arg-type]

    async def feed() -> None:
        at = 0
        for size in chunks:
            stream.feed_data(data[at : at + size])
            at += size
            await asyncio.sleep(0)
        stream.feed_data(data[at:])
        stream.feed_eof()

    feeding = asyncio.ensure_future(feed())
    seen: list[object] = []
    while True:
        try:
            body = await reader.read()
        except FrameError as error:
            seen.append(("error", error.code, error.id))
            continue
        if body is None:
            break
        seen.append(body)
    await feeding
    return seen


@pytest.mark.parametrize("framing, data", [("lsp", LSP_INPUT), ("jsonl", JSONL_INPUT)])
@pytest.mark.parametrize("seed", range(12))
async def test_bulk_frames_read_as_line_by_line(framing: str, data: bytes, seed: int) -> None:
    rng = random.Random(seed)
    # Seed 0: the whole input in one read (the pipelined case); others: split at random points.
    chunks = [] if seed == 0 else [rng.randint(1, 200) for _ in range(rng.randint(1, 60))]
    expected = await _read_all(framing, data, chunks, line_by_line=True)
    assert await _read_all(framing, data, chunks, line_by_line=False) == expected
    bodies = [item for item in expected if isinstance(item, bytes)]
    errors = [item for item in expected if not isinstance(item, bytes)]
    if framing == "lsp":
        assert bodies[:6] == [b'{"id":%d}' % n for n in range(1, 7)]  # every header form above
        assert bodies[6:] == [
            b'{"id":7}',
            b'{"id":8}',
            b'{"id":9}',
            b'{"id":10, "text": "' + b"a" * 300 + b'"}',
            b'{"jsonrpc":"2.0","id":20}\n',
            b'{"id":21}',
            b'{"id":22}',
            b'{"id":23}',
        ]
        parse, large = -32700, -33011
        assert errors == [
            ("error", parse, None),
            ("error", parse, None),
            ("error", large, None),
            ("error", parse, None),
            ("error", parse, None),
            ("error", parse, None),
            ("error", large, 24),
        ]
    else:
        assert bodies[0] == b'{"id":1}\n' and bodies[-1] == b'{"id":6}'
        assert bodies[1:] == [
            b'{"id":2}\r\n',
            b'{"id":3}\n',
            b"not json\n",
            b'{"id":4, "text": "' + b"b" * 300 + b'"}\n',
            b'{"id":5}\n',
            b'{"id":6}',
        ]
        assert errors == [("error", -33011, None), ("error", -33011, 25)]  # the long lines refused


async def test_bulk_take_leaves_a_partial_frame_for_later() -> None:
    stream = asyncio.StreamReader()
    reader = make_reader("lsp", stream)
    first, second = _lsp(b'{"id":1}'), _lsp(b'{"id":2}')
    stream.feed_data(first + second[:10])
    assert await reader.read() == b'{"id":1}'
    waiting = asyncio.ensure_future(reader.read())
    await asyncio.sleep(0)
    assert not waiting.done()
    stream.feed_data(second[10:])
    assert await waiting == b'{"id":2}'


@pytest.mark.parametrize("framing, data", [("lsp", LSP_INPUT), ("jsonl", JSONL_INPUT)])
async def test_a_reader_thread_reads_as_the_pipe_reader_does(framing: str, data: bytes) -> None:
    """stdin from a file or a terminal is read by a thread (_ThreadedStream), with the pipe reader's
    contract: the same bodies and errors, the same ids read from lines over the limit."""
    expected = await _read_all(framing, data, [], line_by_line=False)
    stream = _ThreadedStream(io.BufferedReader(io.BytesIO(data)), limit=4096)  # type: ignore[arg-type]
    assert await sniff_framing(stream) == framing
    reader = make_reader(framing, stream, max_bytes=4096)
    seen: list[object] = []
    while True:
        try:
            body = await reader.read()
        except FrameError as error:
            seen.append(("error", error.code, error.id))
            continue
        if body is None:
            break
        seen.append(body)
    assert seen == expected


@pytest.mark.parametrize(
    "first, framing",
    [
        (b"{", "jsonl"),
        (b"[", "jsonl"),
        (b"\r\n", "jsonl"),
        (b" ", "jsonl"),
        (b"Content-Length: 2", "lsp"),
        (b"x", "lsp"),
        (b"", None),
    ],
)
async def test_the_framing_is_told_by_the_first_byte_which_stays_to_be_read(first: bytes, framing: str | None) -> None:
    stream = asyncio.StreamReader()
    stream.feed_data(first)
    stream.feed_eof()
    assert await sniff_framing(stream) == framing
    assert await stream.read() == first
