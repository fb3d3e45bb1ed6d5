"""compaction.clearToolResults over stdio: old tool outputs cleared in batches at append time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sidecar.context.pruned import PRUNE_CUSTOM_TYPE

from .harness import RawServer, assistant, tool_call, tool_result, user

# ~1,000 tokens per output: the trigger is passed after a few turns, and a batch needs 3 cleared outputs.
OUTPUT_CHARS = 4000
CLEARING = {"enabled": True, "triggerTokens": 5000, "keepToolResults": 2, "minimumTokens": 2500}


async def start(sessions_root: Path, clearing: dict[str, Any] | None = None, sid: str = "t") -> RawServer:
    server = await RawServer.start()
    settings = {"compaction": {"clearToolResults": clearing or CLEARING}}
    answer = await server.initialize(sessions_root, settings=settings)
    assert "result" in answer, answer
    await server.request("session/create", {"cwd": "/w", "sessionId": sid})
    return server


def turn(number: int, error: bool = False) -> list[dict[str, Any]]:
    call = f"call_{number}"
    result = tool_result(call, f"output {number} " + "x" * OUTPUT_CHARS)
    if error:
        result["message"]["isError"] = True
    return [
        user(f"step {number}"),
        assistant(f"running {number}", tool_call(call, "bash", command=f"make {number}")),
        result,
    ]


async def append(server: RawServer, entries: list[dict[str, Any]], sid: str = "t") -> dict[str, Any]:
    answer = await server.request("session/append", {"sessionId": sid, "entries": entries})
    assert "result" in answer, answer
    return answer["result"]


async def llm_context(server: RawServer, sid: str = "t") -> list[dict[str, Any]]:
    answer = await server.request("session/buildContext", {"sessionId": sid, "format": "llm"})
    return answer["result"]["messages"]


def tool_texts(messages: list[dict[str, Any]]) -> list[str]:
    return [m["content"][0]["text"] for m in messages if m["role"] == "toolResult"]


async def test_outputs_are_cleared_in_batches_and_kept_in_the_file(sessions_root: Path):
    server = await start(sessions_root)
    try:
        results = [await append(server, turn(n)) for n in range(1, 5)]
        # 4 outputs, ~4,000 tokens: under the trigger, nothing cleared.
        assert all(r.get("clearedToolResults") is None for r in results)
        passing = await append(server, turn(5))
        cleared = passing["clearedToolResults"]
        # Past the trigger: every output but the newest 2, in one entry, which is the new leaf.
        result_ids = [e["id"] for r in results + [passing] for e in r["entries"]][2::3]
        assert cleared["toolResultIds"] == result_ids[:3]
        assert cleared["tokensFreed"] > 2500 and passing["leafId"] == cleared["entryId"]
        assert passing["contextTokens"] < cleared["contextTokensBefore"] - 2500
        texts = tool_texts(await llm_context(server))
        assert all(t.startswith("[Old tool output pruned") for t in texts[:3])
        assert texts[3].startswith("output 4 ") and texts[4].startswith("output 5 ")
        # The next turns free only one output each: below minimumTokens, so the prefix stays (cache kept).
        for n in (6, 7):
            assert (await append(server, turn(n))).get("clearedToolResults") is None
        # The third one makes a batch of 3 outputs again: cleared together.
        third = (await append(server, turn(8)))["clearedToolResults"]
        assert len(third["toolResultIds"]) == 3
        texts = tool_texts(await llm_context(server))
        assert [t.startswith("[Old tool output pruned") for t in texts] == [True] * 6 + [False] * 2
        # The file keeps every output in full, and the clearing is a custom entry pi ignores.
        entries = await server.request(
            "session/getEntries", {"sessionId": "t", "ids": [result_ids[0], third["entryId"]]}
        )
        kept, record = entries["result"]["entries"]
        assert kept["message"]["content"][0]["text"].startswith("output 1 x")
        assert record["type"] == "custom" and record["customType"] == PRUNE_CUSTOM_TYPE
        assert (
            record["data"]["reason"] == "clearToolResults" and record["data"]["toolResultIds"] == third["toolResultIds"]
        )
    finally:
        await server.stop()


async def test_errors_keep_their_output_and_off_means_never(sessions_root: Path):
    server = await start(sessions_root)
    try:
        await append(server, turn(1, error=True))
        for n in range(2, 7):
            await append(server, turn(n))
        texts = tool_texts(await llm_context(server))
        assert texts[0].startswith("output 1 ")  # the failed call's output stays
        assert any(t.startswith("[Old tool output pruned") for t in texts[1:])
    finally:
        await server.stop()
    # Another sidecar and session (another id: on PostgreSQL both sidecars share one database).
    other = sessions_root / "off"
    other.mkdir()
    server = await start(other, {"enabled": False, "triggerTokens": 10}, sid="off")
    try:
        results = [await append(server, turn(n), sid="off") for n in range(1, 8)]
        assert all(r.get("clearedToolResults") is None for r in results)
        assert not any(
            t.startswith("[Old tool output pruned") for t in tool_texts(await llm_context(server, sid="off"))
        )
    finally:
        await server.stop()


async def test_clearing_follows_the_tree_through_labels_names_and_compactions(sessions_root: Path):
    server = await start(sessions_root)
    try:
        first = [await append(server, turn(n)) for n in range(1, 4)]
        early = first[-1]["entries"][-1]["id"]
        await server.request("session/setLabel", {"sessionId": "t", "entryId": early, "label": "before"})
        await server.request("session/setName", {"sessionId": "t", "name": "clearing"})
        await append(server, [{"type": "custom", "customType": "other.state", "data": {"x": 1}}])
        compact = await server.request("session/compact", {"sessionId": "t", "keepRecentTokens": 1500})
        assert "result" in compact, compact
        # After the compaction only the kept outputs and new ones are in the context; clear those.
        for n in range(4, 9):
            result = await append(server, turn(n))
            if result.get("clearedToolResults"):
                break
        cleared = result["clearedToolResults"]
        assert cleared is not None
        messages = await llm_context(server)
        texts = tool_texts(messages)
        assert texts[-2:] == [t for t in texts[-2:] if t.startswith("output ")]
        # Every parent is an entry that is there, and a branch from the labelled entry has no clearing.
        tree = (await server.request("session/getTree", {"sessionId": "t"}))["result"]
        ids: set[str] = set()

        def walk(nodes: list[dict[str, Any]]) -> None:
            for node in nodes:
                ids.add(node["entry"]["id"] if "entry" in node else node["id"])
                walk(node.get("children", []))

        walk(tree.get("roots") or tree.get("nodes") or [])
        assert cleared["entryId"] in ids
        branch = await server.request("session/buildContext", {"sessionId": "t", "leafId": early, "format": "llm"})
        assert all(t.startswith("output ") for t in tool_texts(branch["result"]["messages"]))
    finally:
        await server.stop()
