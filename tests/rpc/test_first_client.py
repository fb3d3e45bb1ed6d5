"""PROTOCOL.md's "Your first client", replayed verbatim against a real sidecar subprocess.

Each fenced block of that section holds messages: ``->`` what the client sends (written to the
sidecar's stdin as the section's own bytes, in LSP framing), ``<-`` what it gets back, in order.
Answers are matched with protocol/vectors' rules (tests/rpc/vectors.py): placeholders for what
differs from run to run, everything else exactly. The section is what an agent author copies,
so it must be what the sidecar does.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from .harness import REPO_ROOT, RawServer
from .vectors import Mismatch, match

PROTOCOL = REPO_ROOT / "protocol" / "PROTOCOL.md"
# The section shows what a first client gets with no provider configured: the offline summarizer.
NO_PROVIDER = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_BASE_URL",
    "SESSION_SIDECAR_CONFIG",
    "SESSION_SIDECAR_CONTEXT_WINDOW",
    "SESSION_SIDECAR_AUTO_COMPACT",
)


def section(title: str) -> str:
    text = PROTOCOL.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def messages(block: str) -> list[tuple[str, str]]:
    """(arrow, JSON text) for each message of a block; a message runs until the next arrow."""
    found: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith(("-> ", "<- ")):
            found.append((line[:2], [line[3:]]))
        elif line.strip():
            assert found, f"a line before any message: {line!r}"
            found[-1][1].append(line)
    return [(arrow, "\n".join(lines)) for arrow, lines in found]


def transcript() -> list[tuple[str, str]]:
    blocks = re.findall(r"^```\n(.*?)^```$", section("Your first client"), re.S | re.M)
    return [message for block in blocks for message in messages(block)]


def test_the_section_shows_a_whole_tool_using_turn():
    sent = [json.loads(text) for arrow, text in transcript() if arrow == "->"]
    methods = [message["method"] for message in sent]
    assert methods == [
        "initialize",
        "initialized",
        "session/create",
        "session/append",
        "session/append",
        "session/append",
        "session/append",
        "session/buildContext",
        "session/compact",
        "session/fork",
        "session/list",
        "shutdown",
        "exit",
    ]
    entries = [
        entry["message"]
        for message in sent
        if message["method"] == "session/append"
        for entry in message["params"]["entries"]
    ]
    call = next(block for block in entries[1]["content"] if block["type"] == "toolCall")
    assert entries[2]["role"] == "toolResult" and entries[2]["toolCallId"] == call["id"]
    # Every message carries what pi's types require of it (pi-ai's UserMessage, AssistantMessage, ToolResultMessage).
    required = {
        "user": {"role", "content", "timestamp"},
        "assistant": {"role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp"},
        "toolResult": {"role", "toolCallId", "toolName", "content", "isError", "timestamp"},
    }
    for message in entries:
        assert required[message["role"]] <= set(message), message
    compact = next(message for message in sent if message["method"] == "session/compact")
    assert compact["params"]["workDoneToken"]


async def test_the_section_replayed_verbatim_gets_the_answers_it_shows(tmp_path: Path):
    root = tmp_path / "sessions"
    env = {name: value for name, value in os.environ.items() if name not in NO_PROVIDER}
    server = await RawServer.start("--root", str(root), env=env)
    names: dict[str, Any] = {"root": str(root)}
    try:
        for number, (arrow, text) in enumerate(transcript()):
            if arrow == "->":
                body = text.encode()
                server.send_raw(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))
                continue
            actual = await server.receive()
            try:
                match(json.loads(text), actual, names)
            except Mismatch as error:
                raise AssertionError(
                    f"message {number} of the section: {error}\nexpected {text}\ngot {actual}"
                ) from None
        assert await server.wait() == 0
    finally:
        await server.stop()
    # What the section says was written is on disk: the session, then its fork.
    files = sorted(path.name.split("_", 1)[1] for path in root.glob("--home-me-project--/*.jsonl"))
    assert files == sorted(["first-client.jsonl", f"{names['fork']}.jsonl"])
