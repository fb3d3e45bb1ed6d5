"""End-to-end through the client on a real sidecar: a conversation, typed errors, progress, cancellation."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from session_sidecar_client import (
    METHODS,
    UNSET,
    EntryNotFoundError,
    InvalidParamsError,
    InvalidSessionIdError,
    MethodNotFoundError,
    RpcError,
    SessionExistsError,
    SessionNotFoundError,
    SidecarClient,
)

from .entries import assistant, tool_call, tool_result, user, write_many_sessions
from .schema_check import check_result

CONVERSATION = [
    user("The parser test fails on empty input. Can you fix it?"),
    assistant("Let me look at the parser.", tool_call("call_1", "read", path="src/parser.py")),
    tool_result("call_1", "read", "def parse(text):\n    return text.split(',')[0]\n"),
    assistant(
        "Now the fix.", tool_call("call_2", "edit", path="src/parser.py", old="[0]", new="[0] if text else None")
    ),
    tool_result("call_2", "edit", "Applied 1 edit."),
    assistant("Fixed: parse('') now returns None."),
]


async def test_a_conversation_with_tool_calls_then_context_branch_fork_list(client: SidecarClient, sessions_root: Path):
    assert client.initialize_result is not None
    check_result("initialize", client.initialize_result)
    assert client.initialize_result["sessionRoot"] == str(sessions_root)
    assert set(client.methods) == set(METHODS)  # the server offers exactly what the schema (and so this client) knows

    created = await client.create("/work/app", name="fix the parser")
    check_result("session/create", created)
    session_id = created["sessionId"]
    assert created["header"]["cwd"] == "/work/app"

    appended = await client.append(session_id, CONVERSATION)
    check_result("session/append", appended)
    ids = [entry["id"] for entry in appended["entries"]]
    assert len(ids) == 6 and appended["leafId"] == ids[-1]
    assert [e["parentId"] for e in appended["entries"][1:]] == ids[:-1]
    assert appended["contextTokens"] > 0 and appended["shouldCompact"] is False
    assert Path(created["path"]).exists()  # written with the first assistant message

    llm = await client.build_context(session_id, format="llm")
    check_result("session/buildContext", llm)
    assert [m["role"] for m in llm["messages"]] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "toolResult",
        "assistant",
    ]
    calls = [
        block
        for m in llm["messages"]
        if m["role"] == "assistant"
        for block in m["content"]
        if block["type"] == "toolCall"
    ]
    assert [(c["id"], c["name"], c["arguments"]) for c in calls] == [
        ("call_1", "read", {"path": "src/parser.py"}),
        ("call_2", "edit", {"path": "src/parser.py", "old": "[0]", "new": "[0] if text else None"}),
    ]
    assert llm["entryIds"] == ids and llm["leafId"] == ids[-1]
    partial = await client.build_context(session_id, leaf_id=ids[1])
    assert partial["entryIds"] == ids[:2]
    empty = await client.build_context(session_id, leaf_id=None)  # null leaf: nothing, unlike an absent one
    assert empty["messages"] == [] and empty["entryIds"] == []

    label = await client.set_label(session_id, ids[1], "first look")
    check_result("session/setLabel", label)
    branched = await client.branch(session_id, ids[1])
    check_result("session/branch", branched)
    assert branched["leafId"] == ids[1]
    retry = await client.append(
        session_id, [tool_result("call_1", "read", "def parse(text): ..."), assistant("Alternative: raise ValueError.")]
    )
    assert retry["entries"][0]["parentId"] == ids[1]

    tree = await client.get_tree(session_id)
    check_result("session/getTree", tree)
    children = [node["id"] for node in tree["nodes"] if node["parentId"] == ids[1]]
    assert children == [ids[2], retry["entries"][0]["id"]]
    assert {node["id"]: node.get("label") for node in tree["nodes"]}[ids[1]] == "first look"
    assert tree["leafId"] == retry["leafId"]

    got = await client.get_entries(session_id, ids=[ids[0], retry["leafId"]])
    check_result("session/getEntries", got)
    assert [e["id"] for e in got["entries"]] == [ids[0], retry["leafId"]]
    assert got["entries"][1]["message"]["content"][0]["text"] == "Alternative: raise ValueError."

    fork = await client.fork(session_id, entry_id=retry["leafId"])
    check_result("session/fork", fork)
    assert fork["sessionId"] != session_id and fork["persisted"] and Path(fork["path"]).exists()
    forked = await client.build_context(fork["sessionId"])
    assert [m["role"] for m in forked["messages"]] == ["user", "assistant", "toolResult", "assistant"]

    named = await client.set_name(session_id, "parser fix")
    check_result("session/setName", named)
    flushed = await client.flush(session_id)
    check_result("session/flush", flushed)
    assert flushed["persisted"] is True

    listing = await client.list(all=True)
    check_result("session/list", listing)
    by_id = {info["sessionId"]: info for info in listing["sessions"]}
    assert set(by_id) == {session_id, fork["sessionId"]}
    assert by_id[session_id]["name"] == "parser fix" and by_id[session_id]["cwd"] == "/work/app"
    assert by_id[fork["sessionId"]]["parentSession"] == session_id
    assert (await client.list(cwd="/elsewhere"))["sessions"] == []

    assert await client.close_session(session_id) is None
    reopened = await client.open(session_id=session_id)
    check_result("session/open", reopened)
    assert reopened["entryCount"] == len(tree["nodes"]) + 1  # and the setName entry
    assert reopened["leafId"] == named["entryId"]
    recent = await client.continue_recent("/work/app")
    check_result("session/continueRecent", recent)
    assert recent is not None and recent["sessionId"] in by_id
    assert await client.continue_recent("/nowhere") is None


async def test_archive_delete_restore(client: SidecarClient):
    created = await client.create("/w", session_id="keep-me")
    await client.append("keep-me", [user("hi"), assistant("hello")])
    archived = await client.archive("keep-me")
    check_result("session/archive", archived)
    assert archived["archived"] is True and "/.archive/" in archived["path"]
    assert [s["sessionId"] for s in (await client.list(all=True))["sessions"]] == []
    assert [s["sessionId"] for s in (await client.list(all=True, include_archived=True))["sessions"]] == ["keep-me"]
    unarchived = await client.unarchive("keep-me")
    check_result("session/unarchive", unarchived)
    assert unarchived["path"] == created["path"]
    deleted = await client.delete("keep-me")
    check_result("session/delete", deleted)
    assert deleted["trashPath"] and Path(deleted["trashPath"]).exists() and not Path(created["path"]).exists()
    restored = await client.restore("keep-me")
    check_result("session/restore", restored)
    assert Path(restored["path"]).exists()


async def test_parent_id_absent_null_and_given_are_three_different_things(client: SidecarClient):
    await client.create("/w", session_id="roots")
    first = await client.append("roots", [user("one"), assistant("two")])
    below_leaf = await client.append("roots", [user("three")], parent_id=UNSET)
    assert below_leaf["entries"][0]["parentId"] == first["leafId"]
    new_root = await client.append("roots", [user("a new root")], parent_id=None)
    assert new_root["entries"][0]["parentId"] is None
    under_first = await client.append("roots", [user("under the first")], parent_id=first["entries"][0]["id"])
    assert under_first["entries"][0]["parentId"] == first["entries"][0]["id"]


async def test_server_errors_are_typed_and_carry_code_and_data(client: SidecarClient):
    with pytest.raises(SessionNotFoundError) as missing:
        await client.get_tree("ghost")
    assert missing.value.code == -33001 and missing.value.kind == "sessionNotFound"
    assert missing.value.data["sessionId"] == "ghost" and "ghost" in missing.value.message

    with pytest.raises(InvalidSessionIdError) as bad_id:
        await client.create("/w", session_id="../escape")
    assert bad_id.value.code == -33002 and bad_id.value.data["sessionId"] == "../escape"

    await client.create("/w", session_id="dup")
    with pytest.raises(SessionExistsError):
        await client.create("/w", session_id="dup")
    with pytest.raises(EntryNotFoundError) as no_entry:
        await client.branch("dup", "nope")
    assert no_entry.value.code == -33003 and no_entry.value.data.get("entryId") == "nope"

    with pytest.raises(InvalidParamsError) as bad_params:
        await client.request("session/create", {"cwd": "/w", "colour": "blue"})
    assert bad_params.value.code == -32602 and bad_params.value.data["field"] == "colour"
    with pytest.raises(MethodNotFoundError) as unknown:
        await client.request("session/teleport", {})
    assert unknown.value.data == {"kind": "methodNotFound", "method": "session/teleport"}
    assert isinstance(unknown.value, RpcError) and unknown.value.to_dict()["code"] == -32601

    # Errors do not disturb the connection.
    assert (await client.list())["sessions"] == []


async def test_progress_arrives_per_call_before_the_result(client: SidecarClient, sessions_root: Path):
    write_many_sessions(sessions_root, 300)
    seen: list[dict[str, Any]] = []
    other: list[dict[str, Any]] = []

    def on_progress(value: dict[str, Any]) -> None:
        seen.append(value)

    first, second = await asyncio.gather(
        client.list(all=True, on_progress=on_progress),
        client.request("session/list", {"all": True, "limit": 5}, on_progress=other.append),
    )
    assert len(first["sessions"]) == 50 and len(second["sessions"]) == 5
    for values in (seen, other):  # each call got its own begin ... end
        assert values[0]["kind"] == "begin" and values[0]["title"] == "session/list" and values[-1]["kind"] == "end"
        reports = [v for v in values if v["kind"] == "report"]
        assert reports and [v["percentage"] for v in reports] == sorted(v["percentage"] for v in reports)
        assert "of 300 sessions" in reports[-1]["message"]
    # No token, no progress: the call without a callback sends no workDoneToken.
    quiet: list[Any] = []
    client.on_notification = lambda method, params: quiet.append(method)
    await client.list(all=True)
    assert quiet == []


async def test_an_async_progress_callback_is_awaited_as_a_task(client: SidecarClient):
    seen: list[str] = []

    async def on_progress(value: dict[str, Any]) -> None:
        await asyncio.sleep(0)
        seen.append(value["kind"])

    await client.create("/w", session_id="p", on_progress=on_progress)
    for _ in range(10):
        await asyncio.sleep(0.01)
        if len(seen) == 2:
            break
    assert seen == ["begin", "end"]


async def test_concurrent_calls_on_many_sessions_get_their_own_answers(client: SidecarClient):
    ids = [f"s{index}" for index in range(20)]
    await asyncio.gather(*(client.create("/w", session_id=sid) for sid in ids))
    results = await asyncio.gather(
        *(client.append(sid, [user(f"hello {sid}"), assistant(f"reply {sid}")]) for sid in ids)
    )
    contexts = await asyncio.gather(*(client.build_context(sid) for sid in ids))
    for sid, appended, context in zip(ids, results, contexts):
        assert context["entryIds"] == [e["id"] for e in appended["entries"]]
        assert context["messages"][0]["content"][0]["text"] == f"hello {sid}"


async def test_a_session_file_written_through_the_client_is_pi_jsonl(client: SidecarClient):
    created = await client.create("/w", session_id="file")
    await client.append("file", CONVERSATION)
    await client.flush("file")
    lines = [json.loads(line) for line in Path(created["path"]).read_text().splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["version"] == 3 and lines[0]["id"] == "file"
    assert [line["message"]["role"] for line in lines[1:] if line["type"] == "message"] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "toolResult",
        "assistant",
    ]
