"""session/summarize answered by the client's own function (the ``client`` provider), compaction, autoCompact."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from session_sidecar_client import ProviderError, RpcError, SidecarClient, SummarizeParams, SummarizeResult

from .entries import turns
from .schema_check import check_result, problems, schema

SMALL_WINDOW = {"contextWindow": 4000, "reserveTokens": 1000, "keepRecentTokens": 300}


def settings(provider: str = "client", auto: bool = False) -> dict[str, Any]:
    return {"compaction": {**SMALL_WINDOW, "autoCompact": auto}, "providers": {"default": provider}}


async def test_compaction_asks_the_clients_summarize_function(command: list[str], sessions_root: Path):
    asked: list[SummarizeParams] = []

    async def summarize(params: SummarizeParams) -> SummarizeResult:
        asked.append(params)
        return {"text": "SUMMARY FROM MY OWN MODEL"}

    async with SidecarClient.spawn(
        command=command, session_root=sessions_root, settings=settings(), summarize=summarize
    ) as client:
        await client.create("/w", session_id="c")
        appended = await client.append("c", turns(6))
        progress: list[str] = []
        result = await client.compact("c", on_progress=lambda value: progress.append(value["kind"]))
        check_result("session/compact", result)
        assert result["summary"].startswith("SUMMARY FROM MY OWN MODEL")
        assert result["provider"] == "client" and result["tokensAfter"] < result["tokensBefore"]
        assert progress[0] == "begin" and progress[-1] == "end"
        assert len(asked) == 1
        assert not problems(asked[0], schema()["serverRequests"]["session/summarize"]["params"])
        assert "question 0" in asked[0]["prompt"] and asked[0]["systemPrompt"] and asked[0]["maxTokens"] > 0
        entries = (await client.get_entries("c", ids=[result["entryId"]]))["entries"]
        assert entries[0]["type"] == "compaction" and entries[0]["firstKeptEntryId"] == result["firstKeptEntryId"]
        assert result["firstKeptEntryId"] in [e["id"] for e in appended["entries"]]
        context = await client.build_context("c")
        assert "SUMMARY FROM MY OWN MODEL" in str(context["messages"][0])


async def test_a_plain_function_works_too_and_the_model_is_passed(command: list[str], sessions_root: Path):
    seen: list[Any] = []

    def summarize(params: SummarizeParams) -> SummarizeResult:  # not async
        seen.append(params.get("model"))
        return {"text": "plain"}

    async with SidecarClient.spawn(
        command=command, session_root=sessions_root, settings=settings(), summarize=summarize
    ) as client:
        await client.create("/w", session_id="c")
        await client.append("c", turns(6))
        result = await client.compact("c", model="my-small-model")
        assert result["summary"].startswith("plain") and result["model"] == "my-small-model"
        assert seen == ["my-small-model"]


async def test_a_summarize_function_that_raises_is_answered_as_an_error(command: list[str], sessions_root: Path):
    def summarize(params: SummarizeParams) -> SummarizeResult:
        raise ValueError("my model's quota is used up")

    async with SidecarClient.spawn(
        command=command, session_root=sessions_root, settings=settings(), summarize=summarize
    ) as client:
        await client.create("/w", session_id="c")
        await client.append("c", turns(6))
        before = await client.get_tree("c")
        with pytest.raises(ProviderError) as failed:
            await client.compact("c")
        assert failed.value.code == -33021 and "quota is used up" in failed.value.message
        assert failed.value.data["provider"] == "client"
        assert await client.get_tree("c") == before  # nothing written

        # An RpcError raised by the function goes back with its own code and message.
        async def refuse(params: SummarizeParams) -> SummarizeResult:
            raise RpcError(-31000, "the user said no", {"kind": "refused"})

        client.handlers["session/summarize"] = refuse
        with pytest.raises(ProviderError) as refused:
            await client.compact("c")
        assert "the user said no" in refused.value.message


async def test_without_a_summarize_function_the_client_provider_fails_cleanly(command: list[str], sessions_root: Path):
    async with SidecarClient.spawn(command=command, session_root=sessions_root, settings=settings()) as client:
        await client.create("/w", session_id="c")
        await client.append("c", turns(6))
        with pytest.raises(RpcError) as failed:
            await client.compact("c")
        assert failed.value.code == -33021 and "session/summarize" in failed.value.message
        assert (await client.list())["sessions"][0]["sessionId"] == "c"  # still serving


async def test_cancelling_a_running_compaction(command: list[str], sessions_root: Path):
    """The compaction is running (waiting for our summary) when its task is cancelled: -32800, nothing written."""
    asked = asyncio.Event()
    release = asyncio.Event()
    sent: list[Any] = []
    received: list[Any] = []

    handler_cancelled = asyncio.Event()

    async def summarize(params: SummarizeParams) -> SummarizeResult:
        asked.set()
        try:
            await release.wait()
        except asyncio.CancelledError:
            handler_cancelled.set()
            raise
        return {"text": "too late"}

    def trace(direction: str, message: Any) -> None:
        (sent if direction == "send" else received).append(message)

    async with SidecarClient.spawn(
        command=command, session_root=sessions_root, settings=settings(), summarize=summarize, trace=trace
    ) as client:
        await client.create("/w", session_id="c")
        await client.append("c", turns(6))
        before = await client.get_tree("c")
        task = asyncio.create_task(client.compact("c"))
        await asyncio.wait_for(asked.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        compact_id = next(m["id"] for m in sent if m.get("method") == "session/compact")
        assert {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": compact_id}} in sent
        for _ in range(200):
            if any(m.get("id") == compact_id for m in received):
                break
            await asyncio.sleep(0.02)
        answer = next(m for m in received if m.get("id") == compact_id)
        assert answer["error"]["code"] == -32800 and answer["error"]["data"]["kind"] == "requestCancelled"
        assert client._pending == {}
        # The server withdrew its session/summarize too: the function was cancelled, and -32800 went back.
        await asyncio.wait_for(handler_cancelled.wait(), 10)
        summarize_id = next(m["id"] for m in received if m.get("method") == "session/summarize")
        assert {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": summarize_id}} in received
        for _ in range(100):
            if any(m.get("id") == summarize_id and "error" in m for m in sent):
                break
            await asyncio.sleep(0.01)
        reply = next(m for m in sent if m.get("id") == summarize_id)
        assert reply["error"]["code"] == -32800
        assert await client.get_tree("c") == before  # nothing was written
        # The session takes new work at once.
        assert (await client.append("c", turns(1)))["entries"]


async def test_a_timeout_around_a_call_cancels_it(command: list[str], sessions_root: Path):
    async def summarize(params: SummarizeParams) -> SummarizeResult:
        await asyncio.sleep(30)
        return {"text": "never"}

    async with SidecarClient.spawn(
        command=command, session_root=sessions_root, settings=settings(), summarize=summarize
    ) as client:
        await client.create("/w", session_id="c")
        await client.append("c", turns(6))
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.5):
                await client.compact("c")
        assert (await client.get_tree("c"))["nodes"][-1]["type"] == "message"  # no compaction entry


async def test_branch_with_a_summary_uses_the_summarize_function(command: list[str], sessions_root: Path):
    async def summarize(params: SummarizeParams) -> SummarizeResult:
        return {"text": "WHAT THE ABANDONED BRANCH DID"}

    async with SidecarClient.spawn(
        command=command, session_root=sessions_root, settings=settings(), summarize=summarize
    ) as client:
        await client.create("/w", session_id="b")
        appended = await client.append("b", turns(3))
        first_answer = appended["entries"][1]["id"]
        branched = await client.branch("b", first_answer, summarize=True)
        check_result("session/branch", branched)
        assert branched["summaryEntryId"]
        entry = (await client.get_entries("b", ids=[branched["summaryEntryId"]]))["entries"][0]
        assert entry["type"] == "branch_summary" and "WHAT THE ABANDONED BRANCH DID" in entry["summary"]


async def test_auto_compact_calls_on_did_compact(command: list[str], sessions_root: Path):
    compacted: asyncio.Queue[Any] = asyncio.Queue()
    async with SidecarClient.spawn(
        command=command,
        session_root=sessions_root,
        settings=settings("offline", auto=True),
        on_did_compact=compacted.put_nowait,
    ) as client:
        await client.create("/w", session_id="a")
        appended = await client.append("a", turns(10))
        assert appended["shouldCompact"] is True
        note = await asyncio.wait_for(compacted.get(), 10)
        assert not problems(note, schema()["notifications"]["serverToClient"]["session/didCompact"])
        assert note["sessionId"] == "a" and note["result"]["provider"] == "offline"
        entries = (await client.get_entries("a", ids=[note["result"]["entryId"]]))["entries"]
        assert entries[0]["type"] == "compaction"
