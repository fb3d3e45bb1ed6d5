"""FrameWriter: answers sent in one turn of the event loop go out in order, the first at once, the rest in one write."""

from __future__ import annotations

import asyncio
import os

from sidecar.rpc.framing import FrameWriter


def _read_all(fd: int) -> bytes:
    os.set_blocking(fd, False)
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


async def test_frames_of_one_turn_are_written_in_order_the_first_at_once():
    read_fd, write_fd = os.pipe()
    try:
        writer = FrameWriter(write_fd, "jsonl")
        writer.send(b'{"id":1}')
        assert _read_all(read_fd) == b'{"id":1}\n'  # not held back: a lone answer costs no extra turn
        writer.send(b'{"id":2}')
        writer.send(b'{"id":3}')
        assert _read_all(read_fd) == b""  # held until the turn ends
        await asyncio.sleep(0)
        assert _read_all(read_fd) == b'{"id":2}\n{"id":3}\n'
        writer.send(b'{"id":4}')  # a new turn: at once again
        assert _read_all(read_fd) == b'{"id":4}\n'
        writer.send(b'{"id":5}')
        writer.close()  # nothing held is lost on close
        assert _read_all(read_fd) == b'{"id":5}\n'
    finally:
        os.close(read_fd)
        os.close(write_fd)


def test_without_an_event_loop_every_frame_is_written_at_once():
    read_fd, write_fd = os.pipe()
    try:
        writer = FrameWriter(write_fd, "lsp")
        writer.send(b"{}")
        writer.send(b"[]")
        assert _read_all(read_fd) == b"Content-Length: 2\r\n\r\n{}Content-Length: 2\r\n\r\n[]"
    finally:
        os.close(read_fd)
        os.close(write_fd)
