"""The Claude Agent SDK's own query loop, offline, writing through ``SidecarSessionStore`` and resuming
from it: the SDK runs the Claude Code CLI it bundles against the import tests' scripted model server
(tests/importers/harness/model_server.py), a turn with a shell tool call; then a second ``query`` resumes
the session in a fresh config folder (no local transcript: the SDK materializes it from the store) and
the model is sent the first turn again.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from session_sidecar_client import SidecarClient

pytest.importorskip("claude_agent_sdk", reason="the Claude Agent SDK (pip install 'session-sidecar[claude-agent-sdk]')")

from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query  # noqa: E402
from session_sidecar_client.adapters.claude_agent_sdk import SidecarSessionStore  # noqa: E402

from .paths import REPO  # noqa: E402

sys.path.insert(0, str(REPO / "tests" / "importers" / "harness"))
from model_server import serve  # noqa: E402


def _env(home: Path, port: int) -> dict[str, str]:
    for folder in ("tmp", ".claude", ".config"):
        (home / folder).mkdir(parents=True, exist_ok=True)
    return {
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "TMPDIR": str(home / "tmp"),
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
        "ANTHROPIC_API_KEY": "sk-ant-harness-dummy",
        "ANTHROPIC_AUTH_TOKEN": "",
        "HTTP_PROXY": "",
        "HTTPS_PROXY": "",
        "http_proxy": "",
        "https_proxy": "",
        "NO_PROXY": "127.0.0.1,localhost",
        "IS_SANDBOX": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


async def _run(prompt: str, options: ClaudeAgentOptions) -> ResultMessage:
    result = None
    async for message in query(prompt=prompt, options=options):
        if isinstance(message, ResultMessage):
            result = message
    assert result is not None and not result.is_error, result
    return result


def _prompts(request: dict[str, Any]) -> list[str]:
    texts = []
    for message in request.get("body", {}).get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else [{"type": "text", "text": content}]:
            if isinstance(block, dict) and block.get("type") == "text" and message.get("role") == "user":
                texts.append(block.get("text", ""))
    return texts


async def test_the_sdks_query_loop_writes_through_the_store_and_resumes_from_it(
    command: list[str], sessions_root: Path, tmp_path: Path
):
    server = serve(tmp_path / "server")
    port = server.server_address[1]
    project = tmp_path / "project"
    project.mkdir()
    client = await SidecarClient.spawn(command=command, session_root=sessions_root)
    try:
        store = SidecarSessionStore(client=client)

        def options(home: str, **extra: Any) -> ClaudeAgentOptions:
            return ClaudeAgentOptions(
                session_store=store,
                cwd=str(project),
                env=_env(tmp_path / home, port),
                permission_mode="bypassPermissions",
                model="claude-sonnet-4-5",
                **extra,
            )

        first = await _run("[[TOOL]] Create a note file.", options("home1"))
        session_id = first.session_id
        listed = await store.list_sessions(next(iter({s["projectKey"] for s in await _foreign(client)})))
        assert [s["session_id"] for s in listed] == [session_id]
        [found] = await _foreign(client)
        lines = await store.load({"project_key": found["projectKey"], "session_id": session_id})
        assert lines and any(line.get("type") == "assistant" for line in lines)
        context = await client.build_context(found["sessionId"])
        roles = [m["role"] for m in context["messages"]]
        assert roles[0] == "user" and "toolResult" in roles and roles[-1] == "assistant"

        # Resumed in a config folder that never saw the session: the transcript comes from the store.
        second = await _run("And now a second turn.", options("home2", resume=session_id))
        assert second.session_id == session_id
        requests = [json.loads(x) for x in (tmp_path / "server" / "requests.jsonl").read_text().splitlines()]
        last = next(r for r in reversed(requests) if "And now a second turn." in json.dumps(r))
        assert any("[[TOOL]] Create a note file." in text for text in _prompts(last)), "the model saw the first turn"
        after = await store.load({"project_key": found["projectKey"], "session_id": session_id})
        assert after[: len(lines)] == lines and len(after) > len(lines)
        resumed = await client.build_context(found["sessionId"])
        assert resumed["messages"][: len(context["messages"])] == context["messages"]
        assert any(m["role"] == "user" and "second turn" in json.dumps(m["content"]) for m in resumed["messages"])
    finally:
        server.shutdown()
        assert await client.close() == 0


async def _foreign(client: SidecarClient) -> list[dict[str, Any]]:
    """The foreign sessions of the root, with their project keys (from the headers)."""
    found = []
    for info in (await client.list(all=True))["sessions"]:
        opened = await client.open(session_id=info["sessionId"])
        foreign = opened["header"].get("foreign")
        if foreign:
            found.append({"sessionId": info["sessionId"], "projectKey": foreign["projectKey"]})
    return found
