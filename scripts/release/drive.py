"""Drive an installed session-sidecar end to end over stdio, as an extension would.

    python3 scripts/release/drive.py --expect-version 0.1.0 -- COMMAND [ARGS...]

Standard library only (it runs with any Python 3.11, outside the sidecar's
environment), speaking LSP framing by hand: initialize (checks serverInfo and
protocolVersion), initialized, session/create, session/append of a conversation
with a tool call, session/buildContext, session/list, shutdown, exit. Checks
the session file on disk and the exit code; prints one line per step.

    python3 scripts/release/drive.py --time-initialize 10 -- COMMAND

spawns COMMAND that many times and prints the time from spawn to the
initialize answer for the first and the rest (warm). With --evict DIR the
files below DIR are first dropped from the page cache (fsync, then
posix_fadvise DONTNEED), so the first start reads them from disk: a cold start.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


class Sidecar:
    def __init__(self, command: list[str], root: Path) -> None:
        self.process = subprocess.Popen([*command, "--root", str(root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        length = None
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise SystemExit(f"the sidecar closed its output (exit code {self.process.wait()})")
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode().partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        assert length is not None, "a frame without Content-Length"
        return json.loads(self.process.stdout.read(length))

    def call(self, method: str, params: Any) -> Any:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            message = self.read()
            if message.get("id") == self.next_id and "method" not in message:
                break
        if "error" in message:
            raise SystemExit(f"{method} failed: {message['error']}")
        return message["result"]

    def close(self) -> int:
        assert self.call("shutdown", None) is None
        self.send({"jsonrpc": "2.0", "method": "exit"})
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=30)


def conversation() -> list[dict[str, Any]]:
    return [
        {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": "what does main.py export?"}]}},
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "content": [{"type": "toolCall", "id": "call-1", "name": "read", "arguments": {"path": "main.py"}}],
                "stopReason": "toolUse",
            },
        },
        {
            "type": "message",
            "message": {"role": "toolResult", "toolCallId": "call-1", "toolName": "read", "content": [{"type": "text", "text": "def main(): ..."}], "isError": False},
        },
        {"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "One function, main."}], "stopReason": "stop"}},
    ]


def step(text: str) -> None:
    print(f"  ok  {text}", flush=True)


def drive(command: list[str], expect_version: str | None) -> None:
    with tempfile.TemporaryDirectory(prefix="sidecar-release-") as scratch:
        root = Path(scratch) / "sessions"
        sidecar = Sidecar(command, root)
        info = sidecar.call("initialize", {"clientInfo": {"name": "release-check"}, "protocolVersion": "1.0"})
        assert info["serverInfo"]["name"] == "session-sidecar", info["serverInfo"]
        if expect_version is not None:
            assert info["serverInfo"]["version"] == expect_version, f"serverInfo.version {info['serverInfo']['version']} != {expect_version}"
        assert info["protocolVersion"].split(".")[0] == "1", info["protocolVersion"]
        sidecar.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        step(f"initialize: {info['serverInfo']['name']} {info['serverInfo']['version']}, protocol {info['protocolVersion']}")

        created = sidecar.call("session/create", {"cwd": "/work/release-check", "name": "release check"})
        appended = sidecar.call("session/append", {"sessionId": created["sessionId"], "entries": conversation()})
        assert len(appended["entries"]) == 4 and appended["leafId"] == appended["entries"][-1]["id"]
        step(f"create + append: session {created['sessionId']}, leaf {appended['leafId']}")

        context = sidecar.call("session/buildContext", {"sessionId": created["sessionId"], "format": "llm"})
        roles = [m["role"] for m in context["messages"]]
        assert roles == ["user", "assistant", "toolResult", "assistant"], roles
        step(f"buildContext: {' -> '.join(roles)}, ~{context['estimatedTokens']} tokens")

        listed = sidecar.call("session/list", {"cwd": "/work/release-check"})
        assert [s["sessionId"] for s in listed["sessions"]] == [created["sessionId"]], listed
        code = sidecar.close()
        assert code == 0, f"exit code {code}"
        lines = Path(created["path"]).read_text().splitlines()
        types = [json.loads(line)["type"] for line in lines]
        assert types == ["session", "session_info", "message", "message", "message", "message"], types
        step(f"list, shutdown (exit 0); the file holds {len(lines)} lines: {', '.join(types)}")


def evict(folder: Path) -> int:
    """Drop the files below ``folder`` from the page cache (only theirs); how many."""
    count = 0
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                count += 1
            finally:
                os.close(fd)
    return count


def time_initialize(command: list[str], runs: int, cold: Path | None = None) -> None:
    if cold is not None:
        print(f"  dropped {evict(cold)} files below {cold} from the page cache")
    times = []
    with tempfile.TemporaryDirectory(prefix="sidecar-release-") as scratch:
        for _ in range(runs):
            start = time.perf_counter()
            sidecar = Sidecar(command, Path(scratch) / "sessions")
            sidecar.call("initialize", {"protocolVersion": "1.0"})
            times.append((time.perf_counter() - start) * 1000)
            sidecar.close()
    warm = times[1:]
    print(f"  spawn -> initialize answered: first{' (cold)' if cold else ''} {times[0]:.0f} ms; next {len(warm)}: median {statistics.median(warm):.0f} ms, "
          f"min {min(warm):.0f}, max {max(warm):.0f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--expect-version")
    parser.add_argument("--time-initialize", type=int, default=0, metavar="N")
    parser.add_argument("--evict", type=Path, metavar="DIR", help="with --time-initialize: a cold first start")
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    if args.time_initialize:
        time_initialize(args.command, max(args.time_initialize, 2), args.evict)
    else:
        drive(args.command, args.expect_version)


if __name__ == "__main__":
    main()
