"""In-memory sessions (session/create with persist: false) through a real sidecar: every method, no disk."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException
from store_mode import stored_state

from .harness import RpcTestClient, assistant, tool_call, tool_result, user

TURN = [
    user("read a.py"),
    assistant("reading", tool_call("c1", "read", path="a.py")),
    tool_result("c1", "x = 1\n" * 150),  # enough for a compaction to shrink
    assistant("a.py sets x"),
]


async def test_an_in_memory_session_works_and_never_touches_the_disk(client: RpcTestClient, sessions_root: Path):
    scratch = sessions_root.parent / "stored"
    before = stored_state(sessions_root, scratch)
    created = await client.call("session/create", {"cwd": "/work/sub", "sessionId": "mem-1", "persist": False})
    assert created["path"] == ""
    for _ in range(6):
        await client.call("session/append", {"sessionId": "mem-1", "entries": TURN})
    ids = [n["id"] for n in (await client.call("session/getTree", {"sessionId": "mem-1"}))["nodes"]]
    await client.call("session/setLabel", {"sessionId": "mem-1", "entryId": ids[3], "label": "first"})
    await client.call("session/setName", {"sessionId": "mem-1", "name": "subagent"})
    compacted = await client.call(
        "session/compact", {"sessionId": "mem-1", "provider": "offline", "keepRecentTokens": 30}
    )
    built = await client.call("session/buildContext", {"sessionId": "mem-1"})
    assert built["messages"][0]["role"] == "compactionSummary" and built["entryIds"][0] == compacted["entryId"]
    opened = await client.call("session/open", {"sessionId": "mem-1"})
    assert opened["persisted"] is False and opened["path"] == "" and opened["entryCount"] == 27
    await client.call("session/move", {"sessionId": "mem-1", "cwd": "/work/elsewhere"})
    assert stored_state(sessions_root, scratch) == before  # nothing written
    listed = await client.call("session/list", {"all": True})
    [info] = [s for s in listed["sessions"] if s["sessionId"] == "mem-1"]
    assert info["inMemory"] is True and info["path"] == "" and info["name"] == "subagent"
    assert info["cwd"] == "/work/elsewhere" and info["messageCount"] == 24
    assert [
        f for f in stored_state(sessions_root, scratch) if not f.startswith(".index/")
    ] == []  # only the listing's own index

    forked = await client.call("session/fork", {"sessionId": "mem-1", "entryId": ids[3]})
    assert forked["persisted"] is True and Path(forked["path"]).is_file()
    fork_ctx = await client.call("session/buildContext", {"sessionId": forked["sessionId"]})
    at_entry = await client.call("session/buildContext", {"sessionId": "mem-1", "leafId": ids[3]})
    assert fork_ctx["messages"] == at_entry["messages"]

    await client.call("session/close", {"sessionId": "mem-1"})
    listed = await client.call("session/list", {"all": True})
    assert [s["sessionId"] for s in listed["sessions"]] == [forked["sessionId"]]
    with pytest.raises(JsonRpcException) as gone:
        await client.call("session/open", {"sessionId": "mem-1"})
    assert gone.value.code == -33001  # gone with its close: it never had a file
