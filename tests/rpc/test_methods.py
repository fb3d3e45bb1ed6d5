"""Every method of the contract, end to end: pytest-lsp's client, a real sidecar, real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from sidecar import wire

from .harness import RpcTestClient, assistant, tool_call, tool_result, user

CONVERSATION = [
    user("list the files"),
    assistant("looking", tool_call("c1", "ls", path=".")),
    tool_result("c1", "a.py b.py"),
    assistant("there are two files"),
]


async def create_with_conversation(client: RpcTestClient, session_id: str = "s1") -> tuple[dict, list[str]]:
    created = await client.call("session/create", {"cwd": "/work/project", "sessionId": session_id})
    appended = await client.call("session/append", {"sessionId": session_id, "entries": CONVERSATION})
    return created, [e["id"] for e in appended["entries"]]


def lines(path: str) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


async def test_a_second_initialize_is_refused(client: RpcTestClient):
    with pytest.raises(JsonRpcException) as refused:
        await client.call("initialize", {})
    assert refused.value.code == -32600


async def test_create_append_build_context_and_file(client: RpcTestClient):
    created, ids = await create_with_conversation(client)
    assert created["sessionId"] == "s1"
    assert created["header"]["cwd"] == "/work/project"
    written = lines(created["path"])
    assert written[0]["type"] == "session" and written[0]["id"] == "s1"
    assert [e["id"] for e in written[1:]] == ids
    assert [e["parentId"] for e in written[1:]] == [None, *ids[:-1]]

    agent = await client.call("session/buildContext", {"sessionId": "s1"})
    assert [m["role"] for m in agent["messages"]] == ["user", "assistant", "toolResult", "assistant"]
    assert agent["leafId"] == ids[-1] and agent["entryIds"] == ids
    assert agent["estimatedTokens"] > 0
    llm = await client.call("session/buildContext", {"sessionId": "s1", "format": "llm", "leafId": ids[1]})
    assert [m["role"] for m in llm["messages"]] == ["user", "assistant"]
    empty = await client.call("session/buildContext", {"sessionId": "s1", "leafId": None})
    assert empty["messages"] == []


async def test_append_reports_tokens_and_should_compact_from_settings(client: RpcTestClient):
    await client.call("session/create", {"cwd": "/w", "sessionId": "tok"})
    result = await client.call("session/append", {"sessionId": "tok", "entries": [user("x" * 4000)]})
    assert result["contextTokens"] >= 1000
    assert result["shouldCompact"] is False  # no context window known


async def test_branch_tree_entries_labels_and_names(client: RpcTestClient):
    created, ids = await create_with_conversation(client)
    assert (await client.call("session/branch", {"sessionId": "s1", "entryId": ids[1]}))["leafId"] == ids[1]
    alternative = await client.call("session/append", {"sessionId": "s1", "entries": [tool_result("c1", "c.py")]})
    assert alternative["entries"][0]["parentId"] == ids[1]
    label = await client.call("session/setLabel", {"sessionId": "s1", "entryId": ids[0], "label": "start"})
    name = await client.call("session/setName", {"sessionId": "s1", "name": "  listing  "})
    assert name["name"] == "listing"

    tree = await client.call("session/getTree", {"sessionId": "s1"})
    nodes = {n["id"]: n for n in tree["nodes"]}
    assert nodes[ids[0]]["label"] == "start" and nodes[ids[0]]["role"] == "user"
    children_of_1 = [n["id"] for n in tree["nodes"] if n["parentId"] == ids[1]]
    assert children_of_1 == [ids[2], alternative["entries"][0]["id"]]
    assert tree["leafId"] == name["entryId"]

    some = await client.call("session/getEntries", {"sessionId": "s1", "ids": [ids[0], label["entryId"]]})
    assert [e["type"] for e in some["entries"]] == ["message", "label"]
    everything = await client.call("session/getEntries", {"sessionId": "s1"})
    assert len(everything["entries"]) == len(ids) + 3
    reset = await client.call("session/branch", {"sessionId": "s1", "entryId": None})
    assert reset["leafId"] is None


async def test_open_by_id_and_path_after_close_and_flush(client: RpcTestClient):
    created, ids = await create_with_conversation(client)
    assert (await client.call("session/flush", {"sessionId": "s1"}))["persisted"] is True
    assert await client.call("session/close", {"sessionId": "s1"}) is None
    by_id = await client.call("session/open", {"sessionId": "s1"})
    assert by_id["entryCount"] == len(ids) and by_id["leafId"] == ids[-1] and by_id["parseErrors"] == 0
    await client.call("session/close", {"sessionId": "s1"})
    by_path = await client.call("session/open", {"path": created["path"]})
    assert by_path["sessionId"] == "s1" and by_path["persisted"] is True


async def test_continue_recent_picks_the_newest_session_of_a_cwd(client: RpcTestClient):
    assert await client.call("session/continueRecent", {"cwd": "/nowhere"}) is None
    await create_with_conversation(client, "older")
    await create_with_conversation(client, "newer")
    recent = await client.call("session/continueRecent", {"cwd": "/work/project"})
    assert recent["sessionId"] == "newer"


async def test_fork_copies_the_path_into_a_new_file(client: RpcTestClient):
    created, ids = await create_with_conversation(client)
    fork = await client.call("session/fork", {"sessionId": "s1", "entryId": ids[1]})
    assert fork["sessionId"] != "s1" and fork["persisted"] is True
    copied = lines(fork["path"])
    assert copied[0]["parentSession"] == "s1"
    assert [e["id"] for e in copied[1:]] == ids[:2]
    with pytest.raises(JsonRpcException) as tool_fork:
        await client.call("session/fork", {"sessionId": "s1", "entryId": ids[2]})
    assert tool_fork.value.code == -32602


async def test_list_pages_and_filters(client: RpcTestClient):
    for index in range(3):
        await create_with_conversation(client, f"l{index}")
    first = await client.call("session/list", {"all": True, "limit": 2})
    assert len(first["sessions"]) == 2 and first["nextCursor"]
    rest = await client.call("session/list", {"all": True, "limit": 2, "cursor": first["nextCursor"]})
    seen = [s["sessionId"] for s in first["sessions"] + rest["sessions"]]
    assert sorted(seen) == ["l0", "l1", "l2"] and rest["nextCursor"] is None
    assert first["sessions"][0]["messageCount"] == 4
    by_cwd = await client.call("session/list", {"cwd": "/other"})
    assert by_cwd["sessions"] == []


async def test_archive_unarchive_delete_restore(client: RpcTestClient, sessions_root: Path):
    created, _ = await create_with_conversation(client)
    archived = await client.call("session/archive", {"sessionId": "s1"})
    assert archived["archived"] is True and ".archive" in archived["path"] and not Path(created["path"]).exists()
    listed = await client.call("session/list", {"all": True, "includeArchived": True})
    assert [(s["sessionId"], s["archived"]) for s in listed["sessions"]] == [("s1", True)]
    back = await client.call("session/unarchive", {"sessionId": "s1"})
    assert back["path"] == created["path"] and Path(created["path"]).exists()
    deleted = await client.call("session/delete", {"sessionId": "s1"})
    assert ".trash" in deleted["trashPath"] and Path(deleted["trashPath"]).exists()
    restored = await client.call("session/restore", {"sessionId": "s1"})
    assert restored["path"] == created["path"]
    assert (await client.call("session/open", {"sessionId": "s1"}))["entryCount"] == 4


def test_every_method_of_the_contract_is_tested_end_to_end():
    # Here, or in the end-to-end file of its own capability (history, move, compaction...; live sessions: tests/live).
    here = Path(__file__).parent
    source = "".join(path.read_text() for path in [*here.glob("test_*.py"), *(here.parent / "live").glob("test_*.py")])
    missing = [m for m in wire.METHODS if f'"{m}"' not in source]
    assert missing == []


# -- snapshots and rewind (the full cases: tests/snapshots/) ------------------------------------


async def test_snapshot_diff_rewind(client: RpcTestClient, tmp_path: Path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.txt").write_text("one\n")
    await client.call("session/create", {"cwd": str(project), "sessionId": "snap"})
    first = (await client.call("session/append", {"sessionId": "snap", "entries": [user("edit")]}))["entries"][0]["id"]
    taken = await client.call("session/snapshot", {"sessionId": "snap"})
    (project / "a.txt").write_text("two\n")
    await client.call("session/append", {"sessionId": "snap", "entries": [assistant("edited")]})
    diff = await client.call("session/diff", {"sessionId": "snap", "from": first, "to": "worktree", "patch": True})
    assert [f["path"] for f in diff["files"]] == ["a.txt"] and "+two" in diff["patch"]
    assert diff["fromTree"] == taken["tree"]
    rewound = await client.call("session/rewind", {"sessionId": "snap", "entryId": first, "files": True, "force": True})
    assert rewound["restored"] == ["a.txt"] and rewound["leafId"] == first
    assert (project / "a.txt").read_text() == "one\n"
    with pytest.raises(JsonRpcException) as refused:
        await client.call("session/rewind", {"sessionId": "snap", "entryId": "nope", "files": True})
    assert refused.value.code == -33003


# -- export (the full cases: tests/export/) ---------------------------------------------------------


async def test_export(client: RpcTestClient, tmp_path: Path):
    await client.call("session/create", {"cwd": str(tmp_path), "sessionId": "exp"})
    await client.call(
        "session/append", {"sessionId": "exp", "entries": [user("my key is AKIAQ3EGRTWX5ZKLM7PB"), assistant("noted")]}
    )
    result = await client.call("session/export", {"sessionId": "exp", "format": "json"})
    doc = json.loads(result["text"])
    assert [e["role"] for e in doc["entries"]] == ["user", "assistant"]
    assert "[REDACTED:aws-access-key:1]" in result["text"] and "AKIAQ3EGRTWX5ZKLM7PB" not in result["text"]
    assert result["redaction"] == {"applied": True, "total": 1, "kinds": [{"kind": "aws-access-key", "count": 1}]}
