"""Provider-native compaction over stdio: the provider's own compaction item recorded beside the text
summary, and given back by buildContext only to that provider and model.

The items come from the real wire: Anthropic's compaction block as the anthropic SDK parses a
``stop_reason: "compaction"`` answer of a loopback server, and the OpenAI Responses compaction item
of a ``/responses/compact`` answer. What buildContext gives back goes to the loopback servers again,
and they must receive the item byte for byte where each provider expects it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import httpx
from providers.servers import LoopbackServer, status

from .harness import RawServer, assistant, tool_call, tool_result, user

SESSION = "n"
CLAUDE = "claude-sonnet-4-6"
GPT = "gpt-5.1-codex"


def turns(count: int) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for number in range(count):
        call = f"c{number}"
        entries += [
            user(f"step {number}: port module {number}"),
            assistant("on it", tool_call(call, "read", path=f"m{number}.ts")),
            tool_result(call, f"module {number} " + "y" * 1200),
            assistant(f"done {number}"),
        ]
    return entries


async def start(sessions_root: Path) -> RawServer:
    server = await RawServer.start()
    answer = await server.initialize(sessions_root, settings={"providers": {"default": "offline"}})
    assert "result" in answer, answer
    await server.request("session/create", {"cwd": "/w", "sessionId": SESSION})
    await server.request("session/append", {"sessionId": SESSION, "entries": turns(8)})
    return server


async def llm(server: RawServer, **target: Any) -> dict[str, Any]:
    return await server.request("session/buildContext", {"sessionId": SESSION, "format": "llm", **target})


def anthropic_compaction_answer() -> dict[str, Any]:
    """A Messages answer that stopped for an on-demand compaction (compact_20260112)."""
    return {
        "id": "msg_c",
        "type": "message",
        "role": "assistant",
        "model": CLAUDE,
        "stop_reason": "compaction",
        "stop_sequence": None,
        "usage": {"input_tokens": 9000, "output_tokens": 400},
        "content": [
            {
                "type": "compaction",
                "content": "Ported modules 0-5; module 6 is next.",
                "encrypted_content": "Zm9vYmFyLW9wYXF1ZQ==",
                "signature": "sig-1",
            }
        ],
    }


def anthropic_text_answer() -> dict[str, Any]:
    return {
        "id": "msg_t",
        "type": "message",
        "role": "assistant",
        "model": CLAUDE,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 2},
        "content": [{"type": "text", "text": "ok"}],
    }


def anthropic_request(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """pi-style llm messages as a client sends them to Anthropic (text only, enough for this session)."""
    out = []
    for message in messages:
        if message["role"] == "providerCompaction":
            out.append({"role": "assistant", "content": [message["item"]]})
        elif message["role"] == "toolResult":
            out.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": message["toolCallId"],
                            "content": message["content"][0]["text"],
                        }
                    ],
                }
            )
        elif message["role"] == "assistant":
            blocks = [
                {"type": "text", "text": b["text"]}
                if b["type"] == "text"
                else {"type": "tool_use", "id": b["id"], "name": b["name"], "input": b["arguments"]}
                for b in message["content"]
            ]
            out.append({"role": "assistant", "content": blocks})
        else:
            out.append({"role": "user", "content": [{"type": "text", "text": b["text"]} for b in message["content"]]})
    return out


async def test_anthropic_compaction_block_goes_back_only_to_the_model_that_wrote_it(sessions_root: Path):
    server = await start(sessions_root)
    try:
        with LoopbackServer() as api:
            client = anthropic.AsyncAnthropic(api_key="k", base_url=api.url, max_retries=0)
            api.push(status(200, anthropic_compaction_answer()))
            answer = await client.beta.messages.create(
                model=CLAUDE,
                max_tokens=1024,
                betas=["compact-2026-01-12"],
                messages=[{"role": "user", "content": "port the modules"}],
                context_management={"edits": [{"type": "compact_20260112"}]},  # type: ignore[list-item]
            )
            block = answer.content[0]
            assert block.type == "compaction"
            item = block.model_dump(exclude_none=True)
            compact = await server.request(
                "session/compact",
                {
                    "sessionId": SESSION,
                    "keepRecentTokens": 800,
                    "native": {"provider": "anthropic", "model": CLAUDE, "item": item},
                },
            )
            assert "result" in compact, compact
            entry = await server.request(
                "session/getEntries", {"sessionId": SESSION, "ids": [compact["result"]["entryId"]]}
            )
            recorded = entry["result"]["entries"][0]
            assert recorded["native"] == {"provider": "anthropic", "model": CLAUDE, "item": item}
            assert recorded["summary"] == compact["result"]["summary"]  # the text summary is there too

            ours = (await llm(server, targetProvider="anthropic", targetModel=CLAUDE))["result"]["messages"]
            assert ours[0] == {
                "role": "providerCompaction",
                "provider": "anthropic",
                "model": CLAUDE,
                "item": item,
                "timestamp": ours[0]["timestamp"],
            }
            assert not any("compacted into the following summary" in json.dumps(m) for m in ours)
            plain = (await llm(server))["result"]["messages"]
            assert ours[1:] == plain[1:] and plain[0]["role"] == "user"
            assert plain[0]["content"][0]["text"].startswith("The conversation history before this point was compacted")
            # Another model of the same provider, or another provider, gets the text.
            for provider, model in (("anthropic", "claude-haiku-4-5"), ("openai", CLAUDE)):
                other = (await llm(server, targetProvider=provider, targetModel=model))["result"]["messages"]
                assert other == plain
            # The agent format is unchanged: the summary, as pi shows it.
            agent = (await server.request("session/buildContext", {"sessionId": SESSION}))["result"]["messages"]
            assert agent[0]["role"] == "compactionSummary"

            # The next request carries the block verbatim as the first assistant content, as Anthropic asks.
            api.push(status(200, anthropic_text_answer()))
            request = anthropic_request(ours) + [{"role": "user", "content": "go on"}]
            await client.beta.messages.create(
                model=CLAUDE, max_tokens=64, betas=["compact-2026-01-12"], messages=request
            )
            sent = api.requests[-1]["body"]["messages"]
            assert sent[0] == {"role": "assistant", "content": [item]}
            await client.close()
    finally:
        await server.stop()


async def test_openai_compaction_item_recorded_by_a_client_append(sessions_root: Path):
    """A client that compacted with /responses/compact itself appends the compaction entry, item included."""
    server = await start(sessions_root)
    try:
        with LoopbackServer() as api:
            item = {"id": "cmp_1", "type": "compaction", "encrypted_content": "gAAAAB-opaque"}
            api.push(
                status(
                    200,
                    {
                        "id": "resp_c",
                        "object": "response.compaction",
                        "created_at": 1,
                        "model": GPT,
                        "output": [item],
                        "usage": {"input_tokens": 5000, "output_tokens": 300, "total_tokens": 5300},
                    },
                )
            )
            async with httpx.AsyncClient(base_url=api.url) as http:
                compacted = (await http.post("/v1/responses/compact", json={"model": GPT, "input": "..."})).json()
                native = next(o for o in compacted["output"] if o["type"] == "compaction")
                entries = (await server.request("session/getTree", {"sessionId": SESSION}))["result"]
                leaf = entries["leafId"]
                context = (await server.request("session/buildContext", {"sessionId": SESSION}))["result"]
                kept = context["entryIds"][-4]
                appended = await server.request(
                    "session/append",
                    {
                        "sessionId": SESSION,
                        "entries": [
                            {
                                "type": "compaction",
                                "summary": "Ported modules 0-6.",
                                "firstKeptEntryId": kept,
                                "tokensBefore": 5000,
                                "native": {"provider": "openai", "model": GPT, "item": native},
                            }
                        ],
                    },
                )
                assert "result" in appended and appended["result"]["entries"][0]["parentId"] == leaf
                ours = (await llm(server, targetProvider="openai", targetModel=GPT))["result"]["messages"]
                assert ours[0]["role"] == "providerCompaction" and ours[0]["item"] == item
                # Sent back as an input item, before the kept messages: what the Responses API expects.
                api.push(status(200, {"id": "resp_2", "object": "response", "output": []}))
                body = {"model": GPT, "input": [ours[0]["item"], {"role": "user", "content": "go on"}]}
                await http.post("/v1/responses", json=body)
                assert api.requests[-1]["body"]["input"][0] == item
                assert (await llm(server, targetProvider="anthropic", targetModel=CLAUDE))["result"]["messages"][0][
                    "role"
                ] == "user"
    finally:
        await server.stop()


async def test_bad_native_and_target_params_are_clear_errors(sessions_root: Path):
    server = await start(sessions_root)
    try:
        alone = await llm(server, targetProvider="anthropic")
        assert alone["error"]["code"] == -32602 and "targetModel" in alone["error"]["message"]
        agent = await server.request(
            "session/buildContext", {"sessionId": SESSION, "targetProvider": "a", "targetModel": "m"}
        )
        assert agent["error"]["code"] == -32602 and "llm" in agent["error"]["message"]
        before = (await server.request("session/getTree", {"sessionId": SESSION}))["result"]["leafId"]
        bad = await server.request(
            "session/append",
            {
                "sessionId": SESSION,
                "entries": [
                    {
                        "type": "compaction",
                        "summary": "s",
                        "firstKeptEntryId": before,
                        "tokensBefore": 1,
                        "native": {"provider": "openai", "item": "not an object"},
                    }
                ],
            },
        )
        assert "error" in bad and "native" in bad["error"]["message"]
        after = (await server.request("session/getTree", {"sessionId": SESSION}))["result"]["leafId"]
        assert after == before  # nothing written
        compact = await server.request(
            "session/compact", {"sessionId": SESSION, "native": {"provider": "openai", "model": GPT}}
        )
        assert compact["error"]["code"] == -32602 and "item" in compact["error"]["message"]
    finally:
        await server.stop()
