"""Real sidecar processes for crash tests: spawned from a fork server, spoken to from threads, SIGKILLed."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ZYGOTE = Path(__file__).with_name("zygote.py")


class Zygote:
    """The fork server (see zygote.py): ``spawn`` returns a fresh sidecar in a few milliseconds."""

    def __init__(self) -> None:
        self._dir = tempfile.mkdtemp(prefix="zygote-")
        self.socket_path = os.path.join(self._dir, "s")
        self.process = subprocess.Popen(
            [sys.executable, str(ZYGOTE), self.socket_path],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=None,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == b"ready"

    def spawn(self, *args: str) -> Child:
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        stderr_fd = os.open(os.devnull, os.O_WRONLY)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(self.socket_path)
            socket.send_fds(conn, [json.dumps(["serve", *args]).encode()], [stdin_r, stdout_w, stderr_fd])
            pid = int(conn.recv(64))
        for fd in (stdin_r, stdout_w, stderr_fd):
            os.close(fd)
        return Child(pid, stdin_w, stdout_r)

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        try:
            os.unlink(self.socket_path)
            os.rmdir(self._dir)
        except OSError:
            pass


class Child:
    """One sidecar (LSP framing). A reader thread files every response by id as it arrives."""

    def __init__(self, pid: int, stdin_fd: int, stdout_fd: int, framing: str = "lsp") -> None:
        self.pid = pid
        self.framing = framing
        self._stdin = os.fdopen(stdin_fd, "wb", buffering=0)
        self._stdout = os.fdopen(stdout_fd, "rb")
        self.responses: dict[Any, dict[str, Any]] = {}
        self.duplicates: list[dict[str, Any]] = []  # a second answer to the same id
        self._cond = threading.Condition()
        self._next = 0
        self._send_lock = threading.Lock()
        self.eof = False
        self._reader = threading.Thread(target=self._read_all, daemon=True)
        self._reader.start()

    def _read_all(self) -> None:
        stream = self._stdout
        try:
            while self.framing == "jsonl":
                line = stream.readline()
                if not line.endswith(b"\n"):
                    return  # end of output, or the process died mid-line
                self._file(json.loads(line))
            while True:
                length = None
                while True:
                    line = stream.readline()
                    if not line:
                        return
                    if line == b"\r\n":
                        break
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                assert length is not None
                body = stream.read(length)
                if len(body) < length:
                    return  # the process died mid-response: not acknowledged
                self._file(json.loads(body))
        finally:
            with self._cond:
                self.eof = True
                self._cond.notify_all()

    def _file(self, message: dict[str, Any]) -> None:
        if "id" in message and "method" not in message:
            with self._cond:
                if message["id"] is not None and message["id"] in self.responses:
                    self.duplicates.append(message)
                self.responses[message["id"]] = message
                self._cond.notify_all()

    def _frame(self, body: bytes) -> bytes:
        return body + b"\n" if self.framing == "jsonl" else b"Content-Length: %d\r\n\r\n%b" % (len(body), body)

    def send_raw(self, data: bytes) -> None:
        with self._send_lock:
            self._stdin.write(data)

    def send(self, method: str, params: Any = None) -> int:
        """Send a request without waiting; its id. A broken pipe is not reported: see ``responses``."""
        with self._send_lock:
            self._next += 1
            msg_id = self._next
            message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
            if params is not None:
                message["params"] = params
            body = json.dumps(message).encode()
            try:
                self._stdin.write(self._frame(body))
            except (OSError, ValueError):  # the process was killed (and stdin closed)
                pass
        return msg_id

    def notify(self, method: str, params: Any = None) -> None:
        body = json.dumps({"jsonrpc": "2.0", "method": method, "params": params}).encode()
        with self._send_lock:
            self._stdin.write(self._frame(body))

    def close_stdin(self) -> None:
        with self._send_lock:
            self._stdin.close()

    def wait_for(self, msg_id: int, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while msg_id not in self.responses:
                left = deadline - time.monotonic()
                if self.eof or left <= 0:
                    raise AssertionError(f"no answer to request {msg_id} (eof={self.eof})")
                self._cond.wait(left)
            return self.responses[msg_id]

    def call(self, method: str, params: Any = None, timeout: float = 30.0) -> Any:
        answer = self.wait_for(self.send(method, params), timeout)
        assert "result" in answer, (method, answer)
        return answer["result"]

    def initialize(self, root: Path, **settings: Any) -> None:
        self.call(
            "initialize",
            {"clientInfo": {"name": "crash"}, "protocolVersion": "1.0", "sessionRoot": str(root), "settings": settings},
        )
        self.notify("initialized", {})

    def kill(self) -> None:
        """SIGKILL, then wait until the process is gone and every byte it wrote to stdout is read."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self._reader.join(10)
        assert not self._reader.is_alive(), "stdout did not close after SIGKILL"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.001)
        try:
            self._stdin.close()
        except OSError:
            pass
        self._stdout.close()

    def acknowledged(self, msg_id: int) -> dict[str, Any] | None:
        """The successful result of a request, if its answer reached us."""
        answer = self.responses.get(msg_id)
        return answer.get("result") if answer is not None and "result" in answer else None
