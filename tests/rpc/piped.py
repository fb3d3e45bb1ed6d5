"""A SidecarServer fed message by message in this process, its answers read back from a pipe.

For tests of what the protocol does between frames (runs of pipelined appends, calls answered
inline), where a subprocess could not say when input "has no more frames ready".
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from sidecar.rpc.framing import FrameWriter
from sidecar.rpc.server import SidecarServer


class PipedServer:
    def __init__(self, root: Path) -> None:
        self.server = SidecarServer(root)
        self.read_fd, write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)
        self.server.protocol.set_frame_writer(FrameWriter(write_fd, "jsonl"))
        self.next_id = 0

    def feed(self, method: str, params: Any) -> int:
        """Hand the server one request, as its loop does with a frame it read; returns the request's id."""
        self.next_id += 1
        body = msgspec.json.encode({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.server.protocol.handle_body(body)
        return self.next_id

    def written(self) -> bytes:
        """What the server wrote so far (without waiting for anything)."""
        data = b""
        while True:
            try:
                chunk = os.read(self.read_fd, 65536)
            except BlockingIOError:
                return data
            data += chunk
