"""An observer in a process of its own (so a test can SIGSTOP or kill it): subscribe, then read.

    python observer.py SOCKET SESSION_ID [--since CURSOR]

Prints "subscribed <cursor>" once subscribed, then one JSON line per
notification it reads, until the connection ends or stdin closes.
"""

from __future__ import annotations

import json
import socket
import sys


def main() -> None:
    path, session_id = sys.argv[1], sys.argv[2]
    since = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--since" else None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)  # a small window: stopping it fills quickly
    sock.connect(path)
    stream = sock.makefile("rwb")

    def call(msg_id: int, method: str, params: dict) -> dict:
        stream.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode() + b"\n")
        stream.flush()
        while True:
            message = json.loads(stream.readline())
            if message.get("id") == msg_id:
                return message
            print(json.dumps(message), flush=True)

    call(1, "initialize", {"clientInfo": {"name": "observer"}})
    params = {"sessionId": session_id, **({"since": since} if since else {})}
    answer = call(2, "session/subscribe", params)
    print("subscribed " + json.dumps(answer["result"]), flush=True)
    for line in stream:
        sys.stdout.write(line.decode())
        sys.stdout.flush()


if __name__ == "__main__":
    main()
