"""A real sidecar subprocess spoken to synchronously (the crash harness's Child over a plain Popen)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from rpc.crash_harness import Child

USER = {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": "change the files"}]}}
ASSISTANT = {"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "done"}]}}


class Sidecar:
    def __init__(self, root: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "sidecar", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.child = Child(self.process.pid, os.dup(self.process.stdin.fileno()), os.dup(self.process.stdout.fileno()))
        self.process.stdin.close()
        self.process.stdout.close()
        self.child.initialize(root)

    def call(self, method: str, **params: Any) -> Any:
        return self.child.call(method, params, timeout=120)

    def error(self, method: str, **params: Any) -> dict[str, Any]:
        answer = self.child.wait_for(self.child.send(method, params), 120)
        assert "error" in answer, (method, answer)
        return answer["error"]

    def append(self, session_id: str, *entries: dict[str, Any]) -> str:
        return self.call("session/append", sessionId=session_id, entries=list(entries))["entries"][-1]["id"]

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()  # reaped here, so the harness does not wait for a zombie to go
        self.child.kill()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.call("shutdown")
            self.child.notify("exit")
            self.process.wait(30)
