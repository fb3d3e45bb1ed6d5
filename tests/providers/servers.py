"""A loopback HTTP server that plays scripted responses in the providers' real wire formats.

Each request takes the next responder from the script. Responders write
real HTTP/1.1: status lines, headers (retry-after, ...), chunked
Server-Sent Events, and connections cut mid-body (an unterminated chunked
body, which clients see as a broken transfer, exactly as in production).
"""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[BaseHTTPRequestHandler], None]


class LoopbackServer:
    def __init__(self) -> None:
        self.script: deque[Responder] = deque()
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                server.requests.append(
                    {
                        "path": self.path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": json.loads(raw) if raw else None,
                    }
                )
                responder = server.script.popleft() if server.script else status(500, {"error": "script exhausted"})
                responder(self)

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client hanging up on a cut stream is part of the script

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def push(self, *responders: Responder) -> None:
        self.script.extend(responders)

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def status(code: int, body: Any, headers: dict[str, str] | None = None) -> Responder:
    def respond(handler: BaseHTTPRequestHandler) -> None:
        payload = json.dumps(body).encode()
        handler.send_response(code)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(payload)

    return respond


def sse(events: list[tuple[str | None, Any]], cut_after: int | None = None) -> Responder:
    """A 200 text/event-stream of ``(event name, data)``; ``cut_after`` events, then the socket dies."""

    def respond(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        for number, (name, data) in enumerate(events):
            if cut_after is not None and number == cut_after:
                handler.wfile.flush()
                handler.close_connection = True
                handler.connection.shutdown(socket.SHUT_RDWR)
                return
            text = data if isinstance(data, str) else json.dumps(data)
            frame = (f"event: {name}\n" if name else "") + f"data: {text}\n\n"
            chunk = frame.encode()
            handler.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            handler.wfile.flush()
        handler.wfile.write(b"0\r\n\r\n")

    return respond


# -- Anthropic Messages streaming -------------------------------------------------


def anthropic_events(
    text_pieces: list[str], model: str = "claude-test", stop: bool = True
) -> list[tuple[str | None, Any]]:
    events: list[tuple[str | None, Any]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "content": [],
                    "model": model,
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 321, "output_tokens": 1},
                },
            },
        ),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
        ("ping", {"type": "ping"}),
    ]
    for piece in text_pieces:
        events.append(
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}},
            )
        )
    events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 42},
            },
        )
    )
    if stop:
        events.append(("message_stop", {"type": "message_stop"}))
    return events


def anthropic_error_event(error_type: str = "overloaded_error", message: str = "Overloaded") -> tuple[str, Any]:
    return ("error", {"type": "error", "error": {"type": error_type, "message": message}})


def anthropic_error_body(error_type: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}}


# -- OpenAI chat-completions streaming ---------------------------------------------


def openai_events(
    text_pieces: list[str], model: str = "gpt-test", done: bool = True, finish: bool = True
) -> list[tuple[str | None, Any]]:
    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }

    events: list[tuple[str | None, Any]] = [(None, chunk({"role": "assistant", "content": ""}))]
    events += [(None, chunk({"content": piece})) for piece in text_pieces]
    if finish:
        events.append((None, chunk({}, "stop")))
        events.append(
            (
                None,
                {
                    "id": "chatcmpl-1",
                    "object": "chat.completion.chunk",
                    "created": 1,
                    "model": model,
                    "choices": [],
                    "usage": {"prompt_tokens": 123, "completion_tokens": 45, "total_tokens": 168},
                },
            )
        )
    if done:
        events.append((None, "[DONE]"))
    return events
