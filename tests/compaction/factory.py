"""Build sessions for tests: realistic message shapes, deterministic ids."""

from __future__ import annotations

from typing import Any

from sidecar.format.jsonl import Entry
from sidecar.work import Work


class PathBuilder:
    """A linear root -> leaf path of entries, as ``SessionTree.path`` returns it."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self._next = 0
        self._call = 0

    def _id(self) -> str:
        self._next += 1
        return f"e{self._next:05d}"

    def add(self, obj: dict[str, Any]) -> Entry:
        parent = self.entries[-1].id if self.entries else None
        full = {
            "type": obj["type"],
            "id": obj.get("id") or self._id(),
            "parentId": parent,
            "timestamp": f"2025-01-01T00:00:{len(self.entries) % 60:02d}.000Z",
        }
        full.update({k: v for k, v in obj.items() if k not in full})
        entry = Entry.from_obj(full)
        self.entries.append(entry)
        return entry

    def user(self, text: str) -> Entry:
        return self.add(
            {
                "type": "message",
                "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1},
            }
        )

    def assistant(
        self, text: str = "", calls: list[tuple[str, dict[str, Any]]] = (), usage: int | None = None
    ) -> tuple[Entry, list[str]]:
        content: list[dict[str, Any]] = []
        if text:
            content.append({"type": "text", "text": text})
        ids = []
        for name, args in calls:
            self._call += 1
            call_id = f"call_{self._call}"
            ids.append(call_id)
            content.append({"type": "toolCall", "id": call_id, "name": name, "arguments": args})
        message: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "provider": "anthropic",
            "model": "claude-x",
            "stopReason": "toolUse" if calls else "stop",
            "timestamp": 2,
        }
        if usage is not None:
            message["usage"] = {"input": usage, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": usage}
        return self.add({"type": "message", "message": message}), ids

    def result(self, call_id: str, text: str, name: str = "bash", error: bool = False) -> Entry:
        return self.add(
            {
                "type": "message",
                "message": {
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": name,
                    "content": [{"type": "text", "text": text}],
                    "isError": error,
                    "timestamp": 3,
                },
            }
        )

    def turn(
        self, request: str, steps: int = 1, output_chars: int = 400, tool: str = "bash", path: str | None = None
    ) -> None:
        """A user request, then ``steps`` tool round trips, then a closing assistant text."""
        self.user(request)
        for step in range(steps):
            args = {"path": path} if path else {"command": f"echo step {step}"}
            _, ids = self.assistant(f"Working on it, step {step}.", [(tool, args)])
            self.result(ids[0], ("output line\n" * (output_chars // 12 + 1))[:output_chars], name=tool)
        self.assistant(f"Finished: {request[:40]}")


class RecordingWork(Work):
    """Keeps every report; cancels itself when a report's message starts with ``cancel_at``."""

    def __init__(self, cancel_at: str | None = None) -> None:
        self.reports: list[tuple[str | None, int | None]] = []
        self.cancel_at = cancel_at
        self._cancelled = False

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        self._cancelled = True

    def report(self, message: str | None = None, percentage: int | None = None) -> None:
        self.reports.append((message, percentage))
        if self.cancel_at is not None and message is not None and message.startswith(self.cancel_at):
            self._cancelled = True
