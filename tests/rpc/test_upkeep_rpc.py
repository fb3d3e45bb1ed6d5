"""session/stats and session/prune through a real sidecar."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException
from store_mode import stored_root

from .harness import RpcTestClient, assistant, user


async def test_stats_and_a_dry_run_then_a_prune(client: RpcTestClient, sessions_root: Path):
    for number in range(3):
        sid = f"up-{number}"
        await client.call("session/create", {"cwd": "/work/up", "sessionId": sid})
        await client.call("session/append", {"sessionId": sid, "entries": [user(f"q{number}"), assistant("a")]})
    await client.call("session/setName", {"sessionId": "up-0", "name": "pinned by its name"})
    stats = await client.call("session/stats", {"largest": 1})
    assert stats["sessionCount"] == 3 and stats["folders"][0]["folder"] == "--work-up--"
    # The bytes of the pi files (on PostgreSQL: as export-root writes them).
    files = stored_root(sessions_root, sessions_root.parent / "stored").glob("--work-up--/*.jsonl")
    assert stats["liveBytes"] == sum(p.stat().st_size for p in files) > 0
    assert len(stats["largest"]) == 1 and stats["largest"][0]["area"] == "live"

    dry = await client.call("session/prune", {"keepPerCwd": 1, "dryRun": True})
    assert [s["sessionId"] for s in dry["selected"]] == ["up-1"] and dry["pinned"] == 1
    done = await client.call("session/prune", {"keepPerCwd": 1})
    assert [s["sessionId"] for s in done["selected"]] == ["up-1"] and done["movedBytes"] > 0
    listed = await client.call("session/list", {"cwd": "/work/up"})
    assert sorted(s["sessionId"] for s in listed["sessions"]) == ["up-0", "up-2"]
    with pytest.raises(JsonRpcException) as refused:
        await client.call("session/prune", {"maxTotal": "big"})
    assert refused.value.code == -32602 and "5GB" in str(refused.value)


async def test_a_prune_that_would_empty_the_store_waits_for_confirm(client: RpcTestClient, sessions_root: Path):
    """Over the protocol: a policy selecting every session is refused (field "confirm", nothing moved);
    the same with confirm: true moves them all to the trash, where they can be restored."""
    for number in range(2):
        sid = f"all-{number}"
        await client.call("session/create", {"cwd": "/work/all", "sessionId": sid})
        await client.call("session/append", {"sessionId": sid, "entries": [user("q"), assistant("a")]})
    listed = (await client.call("session/list", {"cwd": "/work/all"}))["sessions"]
    files = [Path(s["path"]) for s in listed]  # files below the root, or PostgreSQL places (pg:...)
    assert len(files) == 2
    with pytest.raises(JsonRpcException) as refused:
        await client.call("session/prune", {"keepPerCwd": 0})
    assert refused.value.code == -32602 and refused.value.data["field"] == "confirm"
    assert "every one of the 2 sessions" in refused.value.message and "confirm: true" in refused.value.message
    assert all(path.exists() for path in files)
    dry = await client.call("session/prune", {"keepPerCwd": 0, "dryRun": True})  # a dry run needs no confirm
    assert len(dry["selected"]) == 2 and all(path.exists() for path in files)
    done = await client.call("session/prune", {"keepPerCwd": 0, "confirm": True})
    assert sorted(s["sessionId"] for s in done["selected"]) == ["all-0", "all-1"]
    assert not any(path.exists() for path in files)
    await client.call("session/restore", {"sessionId": "all-0"})
    assert [s["sessionId"] for s in (await client.call("session/list", {"all": True}))["sessions"]] == ["all-0"]
