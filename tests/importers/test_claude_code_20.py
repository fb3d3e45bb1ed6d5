"""Claude Code 2.0's subagents, as the real 2.0.77 CLI writes them: beside the transcript.

2.1 keeps a subagent in ``<session>/subagents/agent-<id>.jsonl`` with a ``.meta.json`` naming its
tool call; 2.0 wrote ``agent-<id>.jsonl`` into the project folder every session of the project
shares, tied to its call only by the call's result (``toolUseResult.agentId``), beside the
cache-warming "Warmup" agents it started with each session. The import read only 2.1's place, so a
2.0 session's subagents were dropped. The CLI runs offline against the scripted model server
(harness/clis.py: a tool turn, then a resumed turn that starts a subagent).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import clis
import pytest
from model_server import SUB_COMMAND

from .importing import call
from .test_real_clis import SUB_PROMPT, main_path, texts


@pytest.fixture(scope="module")
def made() -> Any:
    work = Path(tempfile.mkdtemp(prefix="claude-20-"))
    yield clis.run_claude_20(work)
    shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="module")
def imported(made, tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("claude-20-imports")

    async def job(client: Any) -> dict:
        first = await client.request("session/import", {"tool": "claude-code", "paths": [str(made["path"])]})
        session_id = first["sessions"][0]["sessionId"]
        opened = await client.request("session/open", {"sessionId": session_id})
        entries = (await client.request("session/getEntries", {"sessionId": session_id}))["entries"]
        return {"first": first, "opened": opened, "entries": entries}

    return call(root, job)


def test_the_cli_wrote_its_subagent_beside_the_transcript(made):
    """What the test stands on: 2.0's layout, with warm-up agents beside the one the Task call started."""
    assert made["subagents"] == []
    beside = {path.name: [json.loads(line) for line in path.read_text().splitlines()] for path in made["beside"]}
    started = [name for name, lines in beside.items() if any(SUB_PROMPT in json.dumps(line) for line in lines)]
    assert len(started) == 1
    assert len(beside) > 1  # the warm-up agents


def test_the_subagent_is_a_branch_under_the_task_call_and_warmups_are_left_out(made, imported):
    entries, leaf = imported["entries"], imported["opened"]["leafId"]
    by_id = {e["id"]: e for e in entries}
    on_path = {e["id"] for e in main_path(entries, leaf)}
    (sub_prompt,) = [
        e
        for e in entries
        if e["type"] == "message" and e["message"]["role"] == "user" and SUB_PROMPT in texts(e["message"])
    ]
    assert sub_prompt["id"] not in on_path
    ancestor = sub_prompt
    while ancestor["id"] not in on_path:
        ancestor = by_id[ancestor["parentId"]]
    assert [b["name"] for b in ancestor["message"]["content"] if b["type"] == "toolCall"] == ["Task"]
    branch = [e for e in entries if e["id"] not in on_path]
    assert any(
        SUB_COMMAND in json.dumps(b["arguments"])
        for e in branch
        if e["type"] == "message" and e["message"]["role"] == "assistant"
        for b in e["message"]["content"]
        if b["type"] == "toolCall"
    )
    assert any(
        "from-the-subagent" in texts(e["message"])
        for e in branch
        if e["type"] == "message" and e["message"]["role"] == "toolResult"
    )
    assert not any(e["type"] == "message" and texts(e["message"]) == "Warmup" for e in entries)
    (session,) = imported["first"]["sessions"]
    assert [Path(p).name for p in session["subagents"]] == [
        p.name for p in made["beside"] if SUB_PROMPT in p.read_text()
    ]
    # Every parent is there: the branch hangs in the tree, not beside it.
    assert all(e["parentId"] is None or e["parentId"] in by_id for e in entries)
