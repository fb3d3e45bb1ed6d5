"""pi-style entries for the tests, and sessions written straight to disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}


def assistant(text: str, *calls: dict[str, Any]) -> dict[str, Any]:
    content = [{"type": "text", "text": text}, *calls]
    stop = "toolUse" if calls else "stop"
    return {
        "type": "message",
        "message": {"role": "assistant", "content": content, "provider": "test", "model": "test-1", "stopReason": stop},
    }


def tool_call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def tool_result(call_id: str, name: str, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "message": {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": [{"type": "text", "text": text}],
            "isError": False,
        },
    }


def turns(count: int, words: int = 150) -> list[dict[str, Any]]:
    """``count`` question/answer pairs, big enough to compact with a small context window."""
    entries: list[dict[str, Any]] = []
    for index in range(count):
        entries += [user(f"question {index} " + "word " * words), assistant(f"answer {index} " + "word " * words)]
    return entries


def write_many_sessions(root: Path, count: int, cwd: str = "/many") -> None:
    """``count`` small session files in one cwd folder: listing them all takes a while."""
    folder = root / ("--" + cwd.strip("/").replace("/", "-") + "--")
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        header = {
            "type": "session",
            "version": 3,
            "id": f"m{index}",
            "timestamp": "2025-01-01T00:00:00.000Z",
            "cwd": cwd,
        }
        body = {
            "type": "message",
            "id": "a1",
            "parentId": None,
            "timestamp": "2025-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": f"question {index}"},
        }
        (folder / f"2025-01-01T00-00-00-000Z_m{index}.jsonl").write_text(
            json.dumps(header) + "\n" + json.dumps(body) + "\n"
        )
