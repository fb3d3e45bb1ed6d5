"""session/append checks entries against pi's shapes (sidecar/wire/entries.py) on a real sidecar:
what pi would misread is refused with -32602 naming the field, nothing of the call written, the
server serving on; every shape pi defines goes in and comes back out as it was sent."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from store_mode import ON_POSTGRES

from .harness import RawServer
from .test_append_run import _one_at_a_time, _pipelined

USAGE = {
    "input": 812,
    "output": 40,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 852,
    "cost": {"input": 0.0024, "output": 0.0006, "cacheRead": 0, "cacheWrite": 0, "total": 0.003},
}


def user(text: str = "read main.py") -> dict[str, Any]:
    return {"type": "message", "message": {"role": "user", "content": text, "timestamp": 1767261600000}}


def assistant_with_call(**extra: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading it."},
                {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "main.py"}},
            ],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "usage": USAGE,
            "stopReason": "toolUse",
            "timestamp": 1767261601000,
            **extra,
        },
    }


def tool_result(**replace: Any) -> dict[str, Any]:
    message = {
        "role": "toolResult",
        "toolCallId": "call_1",
        "toolName": "read",
        "content": [{"type": "text", "text": "print('hi')\n"}],
        "isError": False,
        "timestamp": 1767261601500,
    }
    message.update(replace)
    return {"type": "message", "message": {key: value for key, value in message.items() if value is not None}}


# (what is appended after a valid user message, the field the error names, words its message holds)
REFUSED = {
    "openai_tool_calls": (
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": ""}],
                "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{}"}}],
            },
        },
        "entries[1].message.tool_calls",
        ["toolCall"],
    ),
    "role_tool": (
        {"type": "message", "message": {"role": "tool", "tool_call_id": "call_1", "content": "out"}},
        "entries[1].message.role",
        ["toolResult", "toolCallId"],
    ),
    "tool_result_without_its_call_id": (tool_result(toolCallId=None), "entries[1].message.toolCallId", ["required"]),
    "tool_result_with_text_content": (tool_result(content="out"), "entries[1].message.content", ["array"]),
    "unknown_content_block": (
        {"type": "message", "message": {"role": "user", "content": [{"type": "txt", "text": "hi"}]}},
        "entries[1].message.content[0].type",
        ["'txt'", "text", "image"],
    ),
    "anthropic_tool_use_block": (
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "x"},
                    {"type": "tool_use", "id": "t", "name": "read", "input": {}},
                ],
            },
        },
        "entries[1].message.content[1].type",
        ["'tool_use'", "toolCall"],
    ),
    "thinking_in_a_user_message": (
        {"type": "message", "message": {"role": "user", "content": [{"type": "thinking", "thinking": "t"}]}},
        "entries[1].message.content[0].type",
        ["'thinking'"],
    ),
    "arguments_as_a_string": (
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "content": [{"type": "toolCall", "id": "c", "name": "read", "arguments": '{"path": "a"}'}],
            },
        },
        "entries[1].message.content[0].arguments",
        ["object"],
    ),
    "unknown_role": (
        {"type": "message", "message": {"role": "mystery", "content": "x"}},
        "entries[1].message.role",
        ["'mystery'", "user"],
    ),
    "a_compaction_summary_message": (
        {"type": "message", "message": {"role": "compactionSummary", "summary": "s", "tokensBefore": 1}},
        "entries[1].message.role",
        ["compaction entry"],
    ),
    "unknown_entry_type": ({"type": "bogus", "data": 1}, "entries[1].type", ["'bogus'", "custom"]),
    "oh_my_pis_entry_under_pis_compatibility": (
        {"type": "ttsr_injection", "injectedRules": ["r"]},
        "entries[1].type",
        ["oh-my-pi"],
    ),
    "usage_of_the_wrong_type": (assistant_with_call(usage={"input": "812"}), "entries[1].message.usage.input", ["int"]),
}


async def _seeded(raw: RawServer, session_id: str) -> list[dict[str, Any]]:
    await raw.request("session/create", {"cwd": "/w", "sessionId": session_id})
    answer = await raw.request(
        "session/append", {"sessionId": session_id, "entries": [user("hi"), assistant_with_call()]}
    )
    assert "result" in answer, answer
    return await _entries(raw, session_id)


async def _entries(raw: RawServer, session_id: str) -> list[dict[str, Any]]:
    answer = await raw.request("session/getEntries", {"sessionId": session_id})
    return answer["result"]["entries"]


@pytest.mark.parametrize("case", sorted(REFUSED))
async def test_a_shape_pi_would_misread_is_refused_naming_the_field_and_nothing_is_written(raw: RawServer, case: str):
    bad, field, words = REFUSED[case]
    before = await _seeded(raw, "s")
    answer = await raw.request("session/append", {"sessionId": "s", "entries": [user("first, valid"), bad]})
    error = answer["error"]
    assert error["code"] == -32602 and error["data"]["kind"] == "invalidParams", error
    assert error["data"]["field"] == field and error["data"]["index"] == 1, error
    assert error["data"]["expected"] and error["data"]["expected"] in error["message"]
    assert error["message"].startswith(field) and all(word in error["message"] for word in words), error["message"]
    assert await _entries(raw, "s") == before  # nothing of the call, not even its valid first entry
    # The server goes on, and the session takes the shape pi reads.
    fixed = await raw.request("session/append", {"sessionId": "s", "entries": [assistant_with_call(), tool_result()]})
    assert len(fixed["result"]["entries"]) == 2


def every_shape() -> list[dict[str, Any]]:
    """One entry of each type pi defines, and a message entry of each role, each content block in place."""
    image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    return [
        {"type": "message", "id": "u1", "message": {"role": "user", "content": "plain text", "timestamp": 1}},
        {
            "type": "message",
            "id": "u2",
            "message": {"role": "user", "content": [{"type": "text", "text": "look"}, image], "timestamp": 2},
        },
        {
            "type": "message",
            "id": "a1",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "plan", "thinkingSignature": "sig"},
                    {"type": "thinking", "thinking": "", "thinkingSignature": "opaque", "redacted": True},
                    {"type": "text", "text": "Reading.", "textSignature": "msg_1"},
                    {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "a.py"}},
                    image,
                ],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
                "usage": USAGE,
                "stopReason": "toolUse",
                "responseId": "r1",
                "timestamp": 3,
                "aFieldFromANewerPi": {"kept": True},
            },
        },
        {
            "type": "message",
            "id": "t1",
            "message": {
                "role": "toolResult",
                "toolCallId": "call_1",
                "toolName": "read",
                "content": [{"type": "text", "text": "body"}, image],
                "details": {"lines": 1},
                "isError": False,
                "timestamp": 4,
            },
        },
        {
            "type": "message",
            "id": "b1",
            "message": {
                "role": "bashExecution",
                "command": "ls",
                "output": "a.py",
                "exitCode": 0,
                "cancelled": False,
                "truncated": False,
                "timestamp": 5,
            },
        },
        {
            "type": "message",
            "id": "c1",
            "message": {
                "role": "custom",
                "customType": "ext",
                "content": "note",
                "display": True,
                "details": {"x": 1},
                "timestamp": 6,
            },
        },
        {"type": "message", "id": "s1", "message": {"role": "system", "content": "You are terse.", "timestamp": 7}},
        {"type": "thinking_level_change", "id": "e1", "thinkingLevel": "high"},
        {"type": "model_change", "id": "e2", "provider": "openai", "modelId": "gpt-5"},
        {"type": "custom", "id": "e3", "customType": "my-agent", "data": {"state": [1, 2]}},
        {
            "type": "custom_message",
            "id": "e4",
            "customType": "ext",
            "content": [{"type": "text", "text": "in"}],
            "display": False,
            "details": None,
        },
        {"type": "label", "id": "e5", "targetId": "u1", "label": "start"},
        {"type": "session_info", "id": "e6", "name": "shapes"},
        {"type": "usage", "id": "e7", "kind": "summary", "provider": "openai", "model": "gpt-5", "usage": USAGE},
        {"type": "context_edit", "id": "e8", "targetId": "u2", "replacement": {"content": "edited"}},
        {"type": "branch_summary", "id": "e9", "fromId": "u1", "summary": "an abandoned path"},
        {
            "type": "compaction",
            "id": "e10",
            "summary": "all so far",
            "firstKeptEntryId": "u1",
            "tokensBefore": 900,
            "details": {"readFiles": ["a.py"]},
            "usage": USAGE,
        },
        {
            "type": "message",
            "id": "a2",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "Done."}],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
                "usage": USAGE,
                "stopReason": "stop",
                "timestamp": 8,
            },
        },
    ]


async def test_every_shape_pi_defines_is_taken_and_read_back_as_sent(raw: RawServer):
    sent = every_shape()
    await raw.request("session/create", {"cwd": "/w", "sessionId": "all"})
    answer = await raw.request("session/append", {"sessionId": "all", "entries": copy.deepcopy(sent)})
    assert "result" in answer, answer
    entries = await _entries(raw, "all")
    assert [e["id"] for e in entries] == [e["id"] for e in sent]
    for got, given in zip(entries, sent):
        assert {key: value for key, value in got.items() if key not in ("parentId", "timestamp")} == given
    context = (await raw.request("session/buildContext", {"sessionId": "all"}))["result"]
    roles = [m["role"] for m in context["messages"]]
    # The compaction's summary first, then from u1 on (the context edit's text for u2), the entries' messages.
    assert roles[0] == "compactionSummary" and "toolResult" in roles and "bashExecution" in roles
    assert "branchSummary" in roles and roles[-1] == "assistant"
    [result] = [m for m in context["messages"] if m["role"] == "toolResult"]
    assert result["toolCallId"] == "call_1" and result["content"][0] == {"type": "text", "text": "body"}
    [called] = [m for m in context["messages"] if m["role"] == "assistant" and m["stopReason"] == "toolUse"]
    assert called["aFieldFromANewerPi"] == {"kept": True}
    # (The model is the last assistant's, after the model_change, as pi takes it.)
    assert context["thinkingLevel"] == "high" and context["model"] == {
        "provider": "anthropic",
        "modelId": "claude-sonnet-4-5",
    }


async def test_oh_my_pis_shapes_are_taken_under_its_compatibility(sessions_root: Path):
    server = await RawServer.start()
    try:
        answer = await server.initialize(sessions_root, settings={"store": {"compat": "omp"}})
        assert "result" in answer, answer
        await server.request("session/create", {"cwd": "/w", "sessionId": "omp"})
        omp = [
            user("hi"),
            {
                "type": "message",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "redactedThinking", "data": "opaque"}, {"type": "text", "text": "ok"}],
                    "stopReason": "stop",
                },
            },
            {"type": "message", "message": {"role": "developer", "content": "be brief"}},
            {"type": "ttsr_injection", "injectedRules": ["rule-a"]},
            {"type": "mode_change", "mode": "plan", "data": {"planFile": "/tmp/p.md"}},
            {"type": "model_change", "model": "anthropic/claude-sonnet-4-5", "role": "default"},
        ]
        answer = await server.request("session/append", {"sessionId": "omp", "entries": omp})
        assert len(answer["result"]["entries"]) == len(omp), answer
        refused = await server.request("session/append", {"sessionId": "omp", "entries": [{"type": "bogus"}]})
        assert refused["error"]["data"]["field"] == "entries[0].type"
    finally:
        await server.stop()


@pytest.mark.skipif(ON_POSTGRES, reason="runs are the file store's; PostgreSQL appends one call at a time")
async def test_a_refused_shape_in_a_pipelined_run_fails_its_own_call_alone(tmp_path: Path):
    def good(entry_id: str) -> dict[str, Any]:
        return {
            "sessionId": "s",
            "entries": [
                {
                    "type": "message",
                    "id": entry_id,
                    "timestamp": "2026-01-01T00:00:00.000Z",
                    "message": {"role": "user", "content": entry_id},
                }
            ],
        }

    calls = [
        good("g1"),
        {"sessionId": "s", "entries": [REFUSED["openai_tool_calls"][0]]},
        good("g2"),
        {"sessionId": "s", "entries": [{"type": "custom", "customType": "x"}, REFUSED["unknown_entry_type"][0]]},
        good("g3"),
        {"sessionId": "s", "entries": [REFUSED["tool_result_without_its_call_id"][0]]},
        good("g4"),
    ]
    alone, _, alone_h = await _one_at_a_time(tmp_path / "alone", calls)
    run, _, run_h = await _pipelined(tmp_path / "run", calls)
    assert run == alone
    failed = {i: a["error"]["data"]["field"] for i, a in run.items() if "error" in a}
    # (ids: initialize, create, the first append, then the calls from 4)
    assert failed == {5: "entries[0].message.tool_calls", 7: "entries[1].type", 9: "entries[0].message.toolCallId"}
    written = (await run_h.file("s")).decode()
    assert written == (await alone_h.file("s")).decode()
    assert [g for g in ("g1", "g2", "g3", "g4") if f'"id":"{g}"' in written] == ["g1", "g2", "g3", "g4"]
    assert '"customType":"x"' not in written and "tool_calls" not in written
