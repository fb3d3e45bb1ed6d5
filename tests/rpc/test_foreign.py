"""session/appendForeign, loadForeign, listForeign, deleteForeign on a real sidecar: Claude Code's
transcript lines kept verbatim and mapped as session/import maps the same transcript.

The transcript is the importer's committed fixture (Claude Code 2.1 run offline, a subagent
included), appended a turn at a time as the Claude Agent SDK mirrors it, half of it by a sidecar
that is then closed and the rest by another (the mapping's state comes back from the stored lines).
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import Any

from .harness import RawServer, RpcTestClient

FIXTURE = Path(__file__).resolve().parents[1] / "importers" / "fixtures" / "claude-code.tar.xz"
KEY = {"format": "claude-code", "projectKey": "-tmp-project"}


def transcript(tmp: Path) -> tuple[str, list[dict[str, Any]], str, list[dict[str, Any]], Path]:
    """(session id, its lines, the subagent's subpath, its lines as the SDK mirrors them, the file)."""
    with tarfile.open(FIXTURE) as archive:
        archive.extractall(tmp, filter="data")
    path = next((tmp / ".claude" / "projects").glob("*/*.jsonl"))
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    agent = next(path.with_suffix("").glob("subagents/agent-*.jsonl"))
    meta = json.loads(agent.with_suffix("").with_suffix(".meta.json").read_text())
    sub = [{**meta, "type": "agent_metadata"}] + [json.loads(x) for x in agent.read_text().splitlines() if x.strip()]
    return path.stem, lines, f"subagents/{agent.stem}", sub, path


def turns(lines: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The lines cut before each prompt (a user line whose content is text; a compaction's summary line
    goes with its boundary, as Claude Code writes them together): the SDK flushes once a turn."""
    batches: list[list[dict[str, Any]]] = [[]]
    for line in lines:
        content = (line.get("message") or {}).get("content") if line.get("type") == "user" else None
        if isinstance(content, str) and batches[-1] and not line.get("isCompactSummary"):
            batches.append([])
        batches[-1].append(line)
    return batches


async def call(server: RawServer, method: str, params: dict[str, Any] | None) -> Any:
    answer = await server.request(method, params)
    assert "result" in answer, answer
    return answer["result"]


def context_messages(result: dict[str, Any]) -> list[dict[str, Any]]:
    return result["messages"]


async def test_a_claude_code_transcript_appended_turn_by_turn_is_the_imported_session(tmp_path: Path):
    session, lines, subpath, sub_lines, path = transcript(tmp_path / "src")
    batches = turns(lines)
    assert len(batches) >= 2, "the fixture holds at least two prompts"
    half = len(batches) // 2
    root = tmp_path / "sessions"
    key = {**KEY, "foreignSessionId": session}
    first = await RawServer.start()
    try:
        await first.initialize(root)
        for batch in batches[:half]:
            answer = await call(first, "session/appendForeign", {**key, "lines": batch})
            assert answer["appended"] == len(batch) and answer["skipped"] == 0
        sid = answer["sessionId"]
        await call(first, "shutdown", None)  # (a clean exit: PostgreSQL's lease on the session is given back)
        first.send({"jsonrpc": "2.0", "method": "exit"})
        assert await first.wait() == 0
    finally:
        await first.stop()
    server = await RawServer.start()
    try:
        await server.initialize(root)
        # The subagent's lines arrive while its call runs, before the main transcript's next turn.
        added = await call(server, "session/appendForeign", {**key, "subpath": subpath, "lines": sub_lines})
        assert added == {"sessionId": sid, "appended": len(sub_lines), "skipped": 0, "created": False}
        for batch in batches[half:]:
            await call(server, "session/appendForeign", {**key, "lines": batch})
        # Every line with a uuid again: all skipped (the uuid is the idempotency key), nothing written.
        with_uuid = [line for line in lines if line.get("uuid")]
        again = await call(server, "session/appendForeign", {**key, "lines": with_uuid})
        assert (again["appended"], again["skipped"]) == (0, len(with_uuid))

        loaded = await call(server, "session/loadForeign", key)
        assert loaded["lines"] == lines and loaded["sessionId"] == sid
        assert loaded["subpaths"] == [subpath] and loaded["mtime"] > 1e12
        assert (await call(server, "session/loadForeign", {**key, "subpath": subpath}))["lines"] == sub_lines

        # A real session: every parent there, listed with its first prompt, the importer's context.
        entries = (await call(server, "session/getEntries", {"sessionId": sid}))["entries"]
        ids = {e["id"] for e in entries}
        assert all(e["parentId"] is None or e["parentId"] in ids for e in entries)
        listed = (await call(server, "session/list", {"all": True}))["sessions"]
        assert [s["sessionId"] for s in listed] == [sid]
        first_prompt = listed[0]["firstMessage"]
        assert first_prompt and any(
            line.get("type") == "user" and (line.get("message") or {}).get("content") == first_prompt for line in lines
        )
        ours = await call(server, "session/buildContext", {"sessionId": sid})
        imported = await call(server, "session/import", {"tool": "claude-code", "paths": [str(path)]})
        theirs = await call(server, "session/buildContext", {"sessionId": imported["sessions"][0]["sessionId"]})
        assert context_messages(ours) == context_messages(theirs)
        assert len(context_messages(ours)) >= 3  # (a compaction's summary, then the turns after it)
        assert any(e["type"] == "message" and e["message"]["role"] == "toolResult" for e in entries)
        # The subagent is a branch under the Agent call, off the main path.
        head = next(e for e in entries if e.get("customType") == "claude-code.subagent")
        caller = next(e for e in entries if e["id"] == head["parentId"])
        assert caller["type"] == "message" and caller["message"]["role"] == "assistant"
        assert any(
            b["type"] == "toolCall" and b["id"] == head["data"]["toolUseId"] for b in caller["message"]["content"]
        )
        assert head["id"] not in ours["entryIds"]

        # Listing by project, fork, export, search.
        found = (await call(server, "session/listForeign", KEY))["sessions"]
        assert [(s["foreignSessionId"], s["sessionId"], s["subpaths"]) for s in found] == [(session, sid, [subpath])]
        assert (await call(server, "session/listForeign", {**KEY, "projectKey": "elsewhere"}))["sessions"] == []
        forked = await call(server, "session/fork", {"sessionId": sid})
        assert context_messages(await call(server, "session/buildContext", {"sessionId": forked["sessionId"]})) == (
            context_messages(ours)
        )
        exported = await call(server, "session/export", {"sessionId": sid, "format": "markdown"})
        assert first_prompt.split()[0] in exported["text"]
        searched = (await call(server, "session/list", {"all": True, "query": first_prompt.split()[0]}))["sessions"]
        assert sid in [s["sessionId"] for s in searched]
    finally:
        await server.stop()


async def test_lines_of_any_shape_come_back_deep_equal_and_deletes_erase_nothing(client: RpcTestClient):
    key = {**KEY, "foreignSessionId": "sess"}
    odd = [
        {"type": "x", "uuid": "b", "n": 1, "nested": {"a": [1, 2.5, None, True, "é\u2028", "cut \ud83d"]}},
        {"type": "x", "n": 2},  # no uuid: kept every time
        {"type": "summary", "summary": "a title", "leafUuid": "b"},
    ]
    made = await client.call("session/appendForeign", {**key, "lines": odd})
    assert made["created"] is True and made["appended"] == 3
    again = await client.call("session/appendForeign", {**key, "lines": odd[:2]})
    assert (again["appended"], again["skipped"]) == (1, 1)
    assert (await client.call("session/loadForeign", key))["lines"] == [*odd, odd[1]]
    assert (await client.call("session/loadForeign", {**key, "foreignSessionId": "never"}))["lines"] is None
    sub = {**key, "subpath": "subagents/agent-1"}
    await client.call("session/appendForeign", {**sub, "lines": [{"type": "x", "uuid": "s"}]})
    # The same uuid in another transcript of the session is another line.
    await client.call(
        "session/appendForeign", {**sub, "subpath": "subagents/agent-2", "lines": [{"type": "x", "uuid": "b"}]}
    )
    deleted = await client.call("session/deleteForeign", sub)
    assert deleted["sessionId"] == made["sessionId"]
    assert (await client.call("session/loadForeign", sub))["lines"] is None
    assert (await client.call("session/loadForeign", key))["subpaths"] == ["subagents/agent-2"]
    entries = (await client.call("session/getEntries", {"sessionId": made["sessionId"]}))["entries"]
    assert any(e.get("customType") == "claude-code.deleted" for e in entries)
    assert sum(e.get("customType") == "claude-code.line" for e in entries) == 6  # nothing erased
    # The leaf stays on the main path after a subagent's lines.
    context = await client.call("session/buildContext", {"sessionId": made["sessionId"]})
    path_ids = set(context["entryIds"])
    assert not any(e["id"] in path_ids for e in entries if (e.get("data") or {}).get("subpath"))
    whole = await client.call("session/deleteForeign", key)
    assert whole["sessionId"] == made["sessionId"]
    assert (await client.call("session/loadForeign", key))["lines"] is None
    assert (await client.call("session/listForeign", KEY))["sessions"] == []
    assert (await client.call("session/deleteForeign", key))["sessionId"] is None


async def test_bad_foreign_params_get_clear_errors(raw: RawServer):
    for params, field in [
        ({**KEY, "foreignSessionId": "", "lines": []}, "foreignSessionId"),
        ({**KEY, "foreignSessionId": "s", "subpath": "", "lines": []}, "subpath"),
        ({**KEY, "foreignSessionId": "s", "cwd": "relative", "lines": []}, "cwd"),
    ]:
        answer = await raw.request("session/appendForeign", params)
        assert answer["error"]["code"] == -32602 and field in answer["error"]["message"], answer
    answer = await raw.request(
        "session/appendForeign", {**KEY, "format": "codex", "foreignSessionId": "s", "lines": []}
    )
    assert answer["error"]["code"] == -32602


async def test_a_transcript_appended_a_line_at_a_time_still_maps_as_the_importer_maps_it(tmp_path: Path):
    # The SDK's "eager" flush: an API message's lines (one content block each) and a compaction's
    # boundary and summary come in separate batches; each is written again whole where it continues.
    session, lines, _, _, path = transcript(tmp_path / "src")
    root = tmp_path / "sessions"
    key = {**KEY, "foreignSessionId": session}
    server = await RawServer.start()
    try:
        await server.initialize(root)
        for number, line in enumerate(lines):
            if number == len(lines) // 2:  # half way: a fresh sidecar rebuilds the mapping from the stored lines
                await call(server, "shutdown", None)
                server.send({"jsonrpc": "2.0", "method": "exit"})
                assert await server.wait() == 0
                server = await RawServer.start()
                await server.initialize(root)
            answer = await call(server, "session/appendForeign", {**key, "lines": [line]})
        sid = answer["sessionId"]
        assert (await call(server, "session/loadForeign", key))["lines"] == lines
        ours = await call(server, "session/buildContext", {"sessionId": sid})
        imported = await call(server, "session/import", {"tool": "claude-code", "paths": [str(path)]})
        theirs = await call(server, "session/buildContext", {"sessionId": imported["sessions"][0]["sessionId"]})
        assert context_messages(ours) == context_messages(theirs)
        entries = (await call(server, "session/getEntries", {"sessionId": sid}))["entries"]
        ids = {e["id"] for e in entries}
        assert all(e["parentId"] is None or e["parentId"] in ids for e in entries)
        # Every earlier partial message is still in the tree, on a branch of its own.
        assistants = [e for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant"]
        assert len(assistants) > len([m for m in context_messages(ours) if m["role"] == "assistant"])
    finally:
        await server.stop()


def test_a_foreign_key_names_a_valid_session_id_of_its_project():
    from sidecar.store import valid_session_id
    from sidecar.wire import foreign_prefix, foreign_session_id

    prefix = foreign_prefix("claude-code", "proj")
    for foreign, direct in [("sess", True), ("d6fe3246-aed2-4ee2-be25-e9679672e292", True), ("x-", False), ("-x", True),
                            ("a/b", False), ("x" * 60, False), ("é", False), ("", False)]:  # fmt: skip
        made = foreign_session_id("claude-code", "proj", foreign)
        assert valid_session_id(made) and made.startswith(prefix)
        assert (made == f"{prefix}-{foreign}") is direct
    assert foreign_session_id("claude-code", "other", "sess") != foreign_session_id("claude-code", "proj", "sess")


def test_a_foreign_call_runs_in_the_turn_of_the_session_it_names():
    import msgspec

    from sidecar import wire
    from sidecar.rpc.dispatch import queue_key

    params = msgspec.convert({**KEY, "foreignSessionId": "sess", "lines": []}, wire.AppendForeignParams)
    assert queue_key(params) == wire.foreign_session_id("claude-code", KEY["projectKey"], "sess")
    assert queue_key(msgspec.convert(KEY, wire.ListForeignParams)) is None
