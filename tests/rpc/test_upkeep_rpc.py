"""session/stats and session/prune through a real sidecar."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from .harness import RpcTestClient, assistant, user


async def test_stats_and_a_dry_run_then_a_prune(client: RpcTestClient, sessions_root: Path):
    for number in range(3):
        sid = f"up-{number}"
        await client.call("session/create", {"cwd": "/work/up", "sessionId": sid})
        await client.call("session/append", {"sessionId": sid, "entries": [user(f"q{number}"), assistant("a")]})
    await client.call("session/setName", {"sessionId": "up-0", "name": "pinned by its name"})
    stats = await client.call("session/stats", {"largest": 1})
    assert stats["sessionCount"] == 3 and stats["folders"][0]["folder"] == "--work-up--"
    assert stats["liveBytes"] == sum(p.stat().st_size for p in sessions_root.glob("--work-up--/*.jsonl"))
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
