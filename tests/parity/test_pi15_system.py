"""pi 1.5's system messages in compactions, against pi 1.5.2's and pi 1.6.0's own code.

The system message a compaction records is every system message of the
context replayed into one (pi-ai's ``getCurrentSystemMessage``); ours
(``sidecar.context.system``) must give the same for any list, and a
``session/compact`` of ours must write it so that pi (1.5.2, 1.6.0) reads our file to
the same context: the system message first, then the summary.
"""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

from compaction.factory import PathBuilder
from session_builders import service
from store_mode import pi_file
from test_pi15_parity import assert_same, entry_ids, pi_version, run_pi  # noqa: F401 (pi_version: a fixture)
from test_pi_parity import our_view

from sidecar import wire
from sidecar.context.build import js_time
from sidecar.context.system import current_system_message

_TOOLS = ["read", "edit", "bash"]


def _tool(name: str, n: int) -> dict[str, Any]:
    return {"name": name, "description": f"{name} v{n}", "parameters": {"type": "object"}}


def _random_messages(rng: random.Random) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for n in range(rng.randint(0, 8)):
        if rng.random() < 0.3:
            messages.append({"role": "user", "content": f"u{n}", "timestamp": n})
            continue
        message: dict[str, Any] = {"role": "system"}
        message["content"] = rng.choice(
            [
                "",
                f"prompt {n}",
                [{"type": "text", "text": f"block {n}"}, {"type": "image", "data": "QQ==", "mimeType": "image/png"}],
                [],
            ]
        )
        if rng.random() < 0.5:
            message["sections"] = {rng.choice("abc"): rng.choice([None, f"s{n}"]) for _ in range(rng.randint(1, 3))}
        if rng.random() < 0.4:
            message["toolsAdded"] = [_tool(rng.choice(_TOOLS), n) for _ in range(rng.randint(1, 2))]
        if rng.random() < 0.3:
            message["toolsRemoved"] = [{"name": rng.choice(_TOOLS)}]
        stamp = rng.random()
        if stamp < 0.7:
            message["timestamp"] = 100 + n
        elif stamp < 0.85:
            message["timestamp"] = None
        messages.append(message)
    return messages


def test_the_current_system_message_is_pi_ais(pi_version):
    rng = random.Random(15)
    lists = [_random_messages(rng) for _ in range(300)]
    theirs = run_pi({"currentSystem": lists}, pi_version)["currentSystem"]
    assert sum(t is not None for t in theirs) > 200 and any(t and "toolsAdded" in t for t in theirs)
    for messages, pi in zip(lists, theirs):
        assert json.loads(json.dumps(current_system_message(messages))) == pi, messages


def _turns(svc, session_id: str, first: int, count: int) -> None:
    builder = PathBuilder()
    for number in range(first, first + count):
        builder.turn(
            f"request {number}: change module {number}",
            steps=2,
            output_chars=3000,
            tool="edit",
            path=f"src/m{number}.py",
        )
    objs = [{k: v for k, v in e.obj().items() if k not in ("id", "parentId", "timestamp")} for e in builder.entries]
    svc.append(wire.AppendParams(sessionId=session_id, entries=objs))


def _system(content: str, timestamp: int, **extra: Any) -> dict[str, Any]:
    return {"type": "message", "message": {"role": "system", "content": content, "timestamp": timestamp, **extra}}


def test_our_compaction_records_the_system_message_and_pi_reads_it_back(tmp_path: Path, pi_version: str):
    root = tmp_path / "sessions"
    svc = service(root)
    session_id = svc.create(wire.CreateParams(cwd="/work/sys")).sessionId
    svc.append(
        wire.AppendParams(sessionId=session_id, entries=[_system("You are terse.", 7, toolsAdded=[_tool("read", 1)])])
    )
    _turns(svc, session_id, 0, 3)
    svc.append(
        wire.AppendParams(
            sessionId=session_id,
            entries=[_system("Also: be exact.", 9, sections={"style": "plain"}, toolsAdded=[_tool("edit", 1)])],
        )
    )
    _turns(svc, session_id, 3, 3)
    before = svc.build_context(wire.BuildContextParams(sessionId=session_id)).messages
    first = asyncio.run(
        svc.compact(wire.CompactParams(sessionId=session_id, keepRecentTokens=2000, provider="offline"))
    )
    [entry] = svc.get_entries(wire.GetEntriesParams(sessionId=session_id, ids=[first.entryId])).entries
    expected = {**current_system_message(before), "timestamp": js_time(entry["timestamp"])}
    assert entry["systemMessage"] == expected
    assert entry["systemMessage"]["content"] == "You are terse.\n\nAlso: be exact."
    assert [t["name"] for t in entry["systemMessage"]["toolsAdded"]] == ["read", "edit"]
    after = svc.build_context(wire.BuildContextParams(sessionId=session_id)).messages
    assert [m["role"] for m in after[:2]] == ["system", "compactionSummary"]
    assert sum(m["role"] == "system" for m in after) == 1  # the kept ones are left out after a compaction
    # A second compaction summarizes what followed the first one's head (system message and summary).
    _turns(svc, session_id, 6, 3)
    second = asyncio.run(
        svc.compact(wire.CompactParams(sessionId=session_id, keepRecentTokens=2000, provider="offline"))
    )
    assert "request 0: change module 0" in second.summary  # carried from the first summary
    [again] = svc.get_entries(wire.GetEntriesParams(sessionId=session_id, ids=[second.entryId])).entries
    assert again["systemMessage"]["content"] == "You are terse.\n\nAlso: be exact."
    location = Path(svc.store.location(svc.session(session_id)))  # a file, or a PostgreSQL place
    svc.close_all()

    path = pi_file(location, tmp_path / "exported")  # the file pi reads (on PostgreSQL: export-root's)
    leaves = entry_ids(path)
    ours = our_view(tmp_path / "reader", location, leaves)
    [pi] = run_pi({"read": [{"path": str(path), "leaves": leaves}]}, pi_version)["results"]
    assert_same("compacted with a system message", ours, pi)
    assert [m["role"] for m in pi["contexts"]["@leaf"]["llm"][:2]] == ["system", "user"]
