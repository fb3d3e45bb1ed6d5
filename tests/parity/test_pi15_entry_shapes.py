"""pi 1.5.2 (its own SessionManager, under Node 22) writes a session holding every entry type and
message role it defines; the sidecar opens that file as it is, and session/append takes every entry
pi wrote as it stands: the shapes append checks (sidecar/wire/entries.py) are the ones pi writes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from session_builders import service
from test_pi15_parity import run_pi15

from sidecar import wire

USAGE = {
    "input": 120,
    "output": 30,
    "cacheRead": 5,
    "cacheWrite": 0,
    "totalTokens": 155,
    "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0, "total": 0.3},
}
IMAGE = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}


def every_shape_ops() -> list[list]:
    """pi_session.mjs write ops: each message role with each content block, then each entry type."""
    assistant = {
        "role": "assistant",
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-test",
        "usage": USAGE,
        "timestamp": 2,
    }
    return [
        ["message", {"role": "user", "content": "read a.py", "timestamp": 1}],
        [
            "message",
            {
                **assistant,
                "stopReason": "toolUse",
                "content": [
                    {"type": "thinking", "thinking": "plan", "thinkingSignature": "sig"},
                    {"type": "thinking", "thinking": "", "thinkingSignature": "opaque", "redacted": True},
                    {"type": "text", "text": "Reading.", "textSignature": "msg_1"},
                    {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "a.py"}},
                ],
            },
        ],
        [
            "message",
            {
                "role": "toolResult",
                "toolCallId": "call_1",
                "toolName": "read",
                "content": [{"type": "text", "text": "body"}, IMAGE],
                "details": {"n": 1},
                "isError": False,
                "timestamp": 3,
            },
        ],
        ["message", {"role": "user", "content": [{"type": "text", "text": "and this"}, IMAGE], "timestamp": 4}],
        [
            "message",
            {
                "role": "bashExecution",
                "command": "ls",
                "output": "a.py",
                "exitCode": 0,
                "cancelled": False,
                "truncated": False,
                "timestamp": 5,
            },
        ],
        [
            "message",
            {
                "role": "bashExecution",
                "command": "sleep",
                "output": "",
                "exitCode": None,
                "cancelled": True,
                "truncated": False,
                "excludeFromContext": True,
                "timestamp": 6,
            },
        ],
        ["message", {"role": "custom", "customType": "ext", "content": "note", "display": True, "timestamp": 7}],
        ["message", {"role": "system", "content": "You are terse.", "timestamp": 8}],
        ["message", {**assistant, "stopReason": "error", "errorMessage": "overloaded", "content": []}],
        ["thinking", "high"],
        ["model", "openai", "gpt-5"],
        ["usage", "summary", "openai", "gpt-5", USAGE],
        ["custom", "my-agent", {"state": [1, 2]}],
        ["custom_message", "ext", [{"type": "text", "text": "in"}], False, {"d": 1}],
        ["session_info", "shapes"],
        ["label", 0, "start"],
        ["context_edit", 0, {"content": "edited"}],
        ["compaction", "all so far", 1, 900],
        ["message", {**assistant, "stopReason": "stop", "content": [{"type": "text", "text": "Done."}]}],
        ["branch_summary", 0, "an abandoned path"],
        ["message", {"role": "user", "content": "again", "timestamp": 9}],
    ]


def test_a_pi_written_file_of_every_shape_opens_and_its_entries_are_taken_by_append(tmp_path: Path):
    written = run_pi15({"write": [{"dir": str(tmp_path / "pi"), "cwd": "/work/shapes", "ops": every_shape_ops()}]})
    [made] = written["written"]
    assert made["persisted"] and made["errors"] == [], made
    lines = [json.loads(line) for line in Path(made["path"]).read_text(encoding="utf-8").splitlines() if line]
    entries = lines[1:]
    types = {e["type"] for e in entries}
    assert types >= {
        "message",
        "thinking_level_change",
        "model_change",
        "usage",
        "custom",
        "custom_message",
        "session_info",
        "label",
        "context_edit",
        "compaction",
        "branch_summary",
    }, types
    roles = {e["message"]["role"] for e in entries if e["type"] == "message"}
    assert roles == {"user", "assistant", "toolResult", "bashExecution", "custom", "system"}

    svc = service(tmp_path / "root")
    # pi's file opens as it is.
    placed = tmp_path / "root" / "--work-shapes--" / Path(made["path"]).name
    placed.parent.mkdir(parents=True)
    shutil.copyfile(made["path"], placed)
    opened = svc.open(wire.OpenParams(path=str(placed)))
    assert opened.entryCount == len(entries) and opened.parseErrors == 0
    assert svc.get_entries(wire.GetEntriesParams(sessionId=opened.sessionId)).entries == entries
    assert svc.build_context(wire.BuildContextParams(sessionId=opened.sessionId)).messages

    # Every entry pi wrote passes append's check, and is stored as pi wrote it.
    again = svc.create(wire.CreateParams(cwd="/work/shapes")).sessionId
    svc.append(wire.AppendParams(sessionId=again, entries=json.loads(json.dumps(entries))))
    assert svc.get_entries(wire.GetEntriesParams(sessionId=again)).entries == entries
