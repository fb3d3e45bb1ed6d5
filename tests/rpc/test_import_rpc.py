"""session/import end to end on pytest-lsp's client (the full cases with the real CLIs: tests/importers/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from .harness import RpcTestClient


def _transcript(path: Path) -> Path:
    lines = [
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "sessionId": "cc-1",
            "cwd": "/work/p",
            "timestamp": "2026-01-02T03:04:05.000Z",
            "message": {"role": "user", "content": "hello"},
        },
        {"type": "api-request-blob", "message": {"role": "user", "content": "hello"}},
        {
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "sessionId": "cc-1",
            "cwd": "/work/p",
            "timestamp": "2026-01-02T03:04:06.000Z",
            "message": {
                "id": "m1",
                "role": "assistant",
                "model": "claude-x",
                "content": [{"type": "text", "text": "hi"}],
            },
        },
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


async def test_import_then_open_then_import_again(client: RpcTestClient, tmp_path: Path):
    source = _transcript(tmp_path / "cc-1.jsonl")
    first = (await client.call("session/import", {"tool": "claude-code", "paths": [str(source)]}))["sessions"][0]
    assert first["created"] is True and first["originalId"] == "cc-1" and first["entries"] == 3
    counts = {c["kind"]: c for c in first["counts"]}
    assert counts["api-request-blob"]["skipped"] == 1 and counts["assistant"]["mapped"] == 1
    opened = await client.call("session/open", {"sessionId": first["sessionId"]})
    assert opened["header"]["importedFrom"] == {"tool": "claude-code", "id": "cc-1", "path": str(source)}
    context = await client.call("session/buildContext", {"sessionId": first["sessionId"]})
    assert [(m["role"], m.get("model")) for m in context["messages"]] == [("user", None), ("assistant", "claude-x")]
    again = (await client.call("session/import", {"tool": "claude-code", "paths": [str(source)]}))["sessions"][0]
    assert again["created"] is False and again["path"] == first["path"]


async def test_import_of_a_missing_path_names_it(client: RpcTestClient, tmp_path: Path):
    with pytest.raises(JsonRpcException) as refused:
        await client.call("session/import", {"tool": "codex", "paths": [str(tmp_path / "nope")]})
    assert refused.value.code == -33060 and "nope" in str(refused.value)
