"""The baseline: a minimal hand-rolled asyncio JSON-RPC server that answers every request with its params.

Same framing as the sidecar (LSP ``Content-Length``), same pipe reader, same
JSON library: what is left between it and the sidecar is dispatch, the
service and the disk.
"""

from __future__ import annotations

import asyncio
import os
import sys

import msgspec

_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode


async def serve() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 26)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    out = sys.stdout.fileno()
    while True:
        length = None
        while True:
            line = await reader.readline()
            if not line:
                return
            if line == b"\r\n":
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        message = _decode(await reader.readexactly(length or 0))
        if "id" in message:
            body = _encode({"jsonrpc": "2.0", "id": message["id"], "result": message.get("params")})
            os.write(out, b"Content-Length: %d\r\n\r\n%b" % (len(body), body))


if __name__ == "__main__":
    asyncio.run(serve())
