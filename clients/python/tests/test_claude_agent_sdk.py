"""The Claude Agent SDK's sessions kept in a real sidecar (adapters/claude_agent_sdk): the SDK's own
conformance suite against ``SidecarSessionStore``, a real Claude Code transcript round-tripped
deep-equal a turn at a time (its subagent's too), and the session it makes a real sidecar session:
listed with its first prompt, its context the importer's, forked, resumed by a fresh sidecar.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from session_sidecar_client import SidecarClient

pytest.importorskip("claude_agent_sdk", reason="the Claude Agent SDK (pip install 'session-sidecar[claude-agent-sdk]')")

from claude_agent_sdk import InMemorySessionStore  # noqa: E402
from claude_agent_sdk.testing import run_session_store_conformance  # noqa: E402
from session_sidecar_client.adapters.claude_agent_sdk import SidecarSessionStore  # noqa: E402

from .paths import REPO  # noqa: E402

FIXTURE = REPO / "tests" / "importers" / "fixtures" / "claude-code.tar.xz"


async def test_the_sdks_conformance_suite_passes_against_the_sidecar(command: list[str], tmp_path: Path):
    clients: list[SidecarClient] = []

    async def fresh() -> SidecarSessionStore:
        # Each contract on its own sidecar and root, as the suite asks (isolation).
        root = tmp_path / f"root{len(clients)}"
        root.mkdir()
        client = await SidecarClient.spawn(command=command, session_root=root)
        clients.append(client)
        return SidecarSessionStore(client=client)

    try:
        await run_session_store_conformance(fresh)
    finally:
        for client in clients:
            assert await client.close() == 0
    assert len(clients) >= 14  # every optional contract ran: each implemented method was found


async def test_the_reference_store_passes_the_same_suite():
    # (the figure beside ours: bench/claude_store.py)
    await run_session_store_conformance(InMemorySessionStore)


def _transcript(tmp: Path) -> tuple[str, list[dict[str, Any]], str, list[dict[str, Any]]]:
    with tarfile.open(FIXTURE) as archive:
        archive.extractall(tmp, filter="data")
    path = next((tmp / ".claude" / "projects").glob("*/*.jsonl"))
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    agent = next(path.with_suffix("").glob("subagents/agent-*.jsonl"))
    meta = json.loads(agent.with_suffix("").with_suffix(".meta.json").read_text())
    sub = [{**meta, "type": "agent_metadata"}] + [json.loads(x) for x in agent.read_text().splitlines() if x.strip()]
    return path.stem, lines, f"subagents/{agent.stem}", sub


def _turns(lines: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    batches: list[list[dict[str, Any]]] = [[]]
    for line in lines:
        content = (line.get("message") or {}).get("content") if line.get("type") == "user" else None
        if isinstance(content, str) and batches[-1] and not line.get("isCompactSummary"):
            batches.append([])
        batches[-1].append(line)
    return batches


@pytest.fixture
async def spawned(command: list[str], sessions_root: Path) -> AsyncIterator[SidecarClient]:
    client = await SidecarClient.spawn(command=command, session_root=sessions_root)
    yield client
    assert await client.close() == 0


async def test_a_real_transcript_round_trips_and_is_a_real_session(
    spawned: SidecarClient, command: list[str], sessions_root: Path, tmp_path: Path
):
    session_id, lines, subpath, sub_lines = _transcript(tmp_path / "src")
    store = SidecarSessionStore(client=spawned)
    key: Any = {"project_key": "proj", "session_id": session_id}
    reference = InMemorySessionStore()
    for batch in _turns(lines):
        await store.append(key, batch)
        await reference.append(key, batch)
    await store.append({**key, "subpath": subpath}, sub_lines)
    await reference.append({**key, "subpath": subpath}, sub_lines)
    assert await store.load(key) == lines == await reference.load(key)
    assert await store.load({**key, "subpath": subpath}) == sub_lines
    assert await store.list_subkeys(key) == [subpath] == await reference.list_subkeys(key)
    ours = await store.list_session_summaries("proj")
    theirs = await reference.list_session_summaries("proj")
    assert [s["data"] for s in ours] == [s["data"] for s in theirs]  # the SDK's own fold, kept verbatim
    assert [s["session_id"] for s in await store.list_sessions("proj")] == [session_id]

    listed = await spawned.list(all=True)
    [info] = listed["sessions"]
    assert info["firstMessage"] and any((x.get("message") or {}).get("content") == info["firstMessage"] for x in lines)
    context = await spawned.build_context(info["sessionId"])
    assert [m["role"] for m in context["messages"]][:1] == ["compactionSummary"]
    assert any(m["role"] == "assistant" for m in context["messages"])
    forked = await spawned.fork(info["sessionId"])
    assert (await spawned.build_context(forked["sessionId"]))["messages"] == context["messages"]

    # Another process resumes it: the same lines, and the next turn's lines still map onto it.
    await spawned.request("session/close", {"sessionId": info["sessionId"]})  # (its lock is this sidecar's)
    other = await SidecarClient.spawn(command=command, session_root=sessions_root)
    try:
        again = SidecarSessionStore(client=other)
        assert await again.load(key) == lines
        last = next(x for x in reversed(lines) if x.get("uuid"))
        follow_up = {
            "type": "user",
            "uuid": "follow-up-1",
            "parentUuid": last["uuid"],
            "timestamp": "2030-01-01T00:00:00.000Z",
            "sessionId": session_id,
            "message": {"role": "user", "content": "and one more thing"},
        }
        await again.append(key, [follow_up])
        assert await again.load(key) == [*lines, follow_up]
        resumed = await other.build_context(info["sessionId"])
        assert resumed["messages"][:-1] == context["messages"]
        assert resumed["messages"][-1]["role"] == "user" and resumed["messages"][-1]["content"] == "and one more thing"
    finally:
        assert await other.close() == 0


async def test_the_store_spawns_its_own_sidecar_on_a_root(command: list[str], tmp_path: Path):
    async with SidecarSessionStore(tmp_path / "root", command=command) as store:
        await store.append({"project_key": "p", "session_id": "s"}, [{"type": "x", "uuid": "u"}])
        assert await store.load({"project_key": "p", "session_id": "s"}) == [{"type": "x", "uuid": "u"}]
    with pytest.raises(ValueError):
        SidecarSessionStore(tmp_path, client=object())  # type: ignore[arg-type]  # both given: refused


def test_the_adapter_works_without_the_sdk(command: list[str], tmp_path: Path):
    # The SDK made unimportable: the store still keeps and loads lines; it keeps no summaries then.
    code = (
        "import asyncio, json, sys; sys.modules['claude_agent_sdk'] = None\n"
        "from session_sidecar_client.adapters.claude_agent_sdk import SidecarSessionStore\n"
        "async def main():\n"
        f"    async with SidecarSessionStore({str(tmp_path / 'root')!r}, command={command!r}) as store:\n"
        "        key = {'project_key': 'p', 'session_id': 's'}\n"
        "        await store.append(key, [{'type': 'x', 'uuid': 'u'}])\n"
        "        print(json.dumps([await store.load(key), await store.list_session_summaries('p')]))\n"
        "asyncio.run(main())\n"
    )
    client_dir = REPO / "clients" / "python"
    done = subprocess.run([sys.executable, "-c", code], cwd=client_dir, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [[{"type": "x", "uuid": "u"}], []]
