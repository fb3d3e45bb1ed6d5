"""The client provider (server -> client session/summarize) and the offline summarizer."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sidecar.config import ProvidersSettings
from sidecar.errors import ContextOverflow, InvalidParams, ProviderError, ProviderNotConfigured
from sidecar.providers import default_provider_name, make_provider
from sidecar.providers.base import SummaryRequest
from sidecar.providers.client import ClientProvider
from sidecar.providers.offline import OfflineProvider, summarize_offline

REQUEST = SummaryRequest(system_prompt="sys", prompt="prompt", max_tokens=100, model="m1")


async def test_client_provider_asks_session_summarize_and_returns_its_text():
    asked: list[tuple[str, dict[str, Any]]] = []

    async def ask(method: str, params: dict[str, Any]) -> Any:
        asked.append((method, params))
        return {"text": "client summary"}

    texts: list[str] = []
    response = await ClientProvider(ask).summarize(REQUEST, texts.append)
    assert asked == [
        ("session/summarize", {"systemPrompt": "sys", "prompt": "prompt", "maxTokens": 100, "model": "m1"})
    ]
    assert response.text == "client summary" and texts == ["client summary"] and response.model == "m1"


@pytest.mark.parametrize(
    "answer, error",
    [
        (RuntimeError("client has no model"), ProviderError),
        (RuntimeError("prompt is too long"), ContextOverflow),
        ({"summary": "wrong field"}, ProviderError),
    ],
)
async def test_client_provider_failures_are_provider_errors(answer, error):
    async def ask(method: str, params: dict[str, Any]) -> Any:
        if isinstance(answer, Exception):
            raise answer
        return answer

    with pytest.raises(error):
        await ClientProvider(ask).summarize(REQUEST, lambda _: None)


def test_default_provider_is_the_first_with_a_key_else_offline():
    settings = ProvidersSettings()
    assert default_provider_name(settings, {}) == "offline"
    assert default_provider_name(settings, {"OPENAI_API_KEY": "k"}) == "openai"
    assert default_provider_name(settings, {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}) == "anthropic"
    assert default_provider_name(ProvidersSettings(default="client"), {"ANTHROPIC_API_KEY": "k"}) == "client"


def test_naming_an_unconfigured_or_unknown_provider_fails_clearly():
    with pytest.raises(ProviderNotConfigured, match="ANTHROPIC_API_KEY"):
        make_provider("anthropic", ProvidersSettings(), {})
    with pytest.raises(ProviderNotConfigured, match="client"):
        make_provider("client", ProvidersSettings(), {})
    with pytest.raises(InvalidParams):
        make_provider("gemini", ProvidersSettings(), {})
    provider = make_provider("openai", ProvidersSettings(), {"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"})
    assert provider.base_url == "http://127.0.0.1:1/v1"  # type: ignore[attr-defined]


def _messages() -> list[dict[str, Any]]:
    def user(text: str) -> dict[str, Any]:
        return {"role": "user", "content": [{"type": "text", "text": text}]}

    def assistant(text: str, calls: list[tuple[str, str, dict[str, Any]]] = ()) -> dict[str, Any]:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [{"type": "toolCall", "id": i, "name": n, "arguments": a} for i, n, a in calls]
        return {"role": "assistant", "content": content}

    def result(call_id: str, text: str, error: bool = False, name: str = "bash") -> dict[str, Any]:
        return {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "isError": error,
            "content": [{"type": "text", "text": text}],
        }

    return [
        user("Add retry logic to src/net/client.py. Never change the public signature of fetch()."),
        assistant("Reading the file.", [("c1", "read", {"path": "src/net/client.py"})]),
        result("c1", "def fetch(url): ...", name="read"),
        assistant(
            "I'll use exponential backoff because the API rate-limits bursts.",
            [("c2", "edit", {"path": "src/net/client.py", "oldText": "a", "newText": "b"})],
        ),
        result("c2", "ok", name="edit"),
        assistant("", [("c3", "bash", {"command": "pytest tests/net"})]),
        result("c3", "FAILED tests/net/test_client.py::test_retry - AssertionError: expected 3 calls", error=True),
        assistant("The test fails. Next I will fix the retry counter, then run pytest again."),
    ]


def test_offline_summary_fills_every_section_from_the_conversation():
    text = summarize_offline(SummaryRequest("s", "p", 4000, messages=_messages()))
    for heading in (
        "## Goal",
        "## Constraints & Preferences",
        "## Progress",
        "### Done",
        "### In Progress",
        "### Blocked",
        "## Key Decisions",
        "## Next Steps",
        "## Critical Context",
    ):
        assert heading in text
    assert "Add retry logic to src/net/client.py" in text  # the request, verbatim
    assert "Never change the public signature of fetch()." in text.split("## Progress")[0]  # a constraint
    assert "Edited `src/net/client.py`" in text
    assert "AssertionError: expected 3 calls" in text.split("### Blocked")[1]  # the open error blocks
    assert "exponential backoff because" in text.split("## Key Decisions")[1]
    next_steps = text.split("## Next Steps")[1].split("## Critical Context")[0]
    assert "fix the retry counter" in next_steps


def test_offline_update_keeps_what_the_previous_summary_said_and_moves_work_to_done():
    first = summarize_offline(SummaryRequest("s", "p", 4000, messages=_messages()))
    later = [
        {"role": "user", "content": [{"type": "text", "text": "Also document the backoff in README.md"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "id": "d1", "name": "write", "arguments": {"path": "README.md", "content": "..."}}
            ],
        },
        {
            "role": "toolResult",
            "toolCallId": "d1",
            "toolName": "write",
            "isError": False,
            "content": [{"type": "text", "text": "written"}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Documented."}]},
    ]
    second = summarize_offline(SummaryRequest("s", "p", 4000, messages=later, previous_summary=first))
    assert "Add retry logic to src/net/client.py" in second.split("## Constraints")[0]
    assert "Also document the backoff in README.md" in second.split("## Constraints")[0]
    assert "Never change the public signature of fetch()." in second
    done = second.split("### Done")[1].split("### In Progress")[0]
    assert "Edited `src/net/client.py`" in done and "Wrote `README.md`" in done
    assert "exponential backoff" in second.split("## Key Decisions")[1]
    assert "AssertionError: expected 3 calls" in second  # an earlier blocker stays known


def test_offline_respects_its_output_budget():
    many = _messages() * 200
    text = summarize_offline(SummaryRequest("s", "p", 600, messages=many))
    assert len(text) <= 600 * 4 + 100


async def test_offline_streams_like_a_model():
    pieces: list[str] = []
    response = await OfflineProvider().summarize(SummaryRequest("s", "p", 4000, messages=_messages()), pieces.append)
    assert "".join(pieces) == response.text and response.model == "offline"
    await asyncio.sleep(0)


def test_offline_counts_an_answered_request_as_done_not_in_progress():
    answered = [
        {"role": "user", "content": [{"type": "text", "text": "Fix the empty-input bug in the parser."}]},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "toolCall",
                    "id": "e1",
                    "name": "edit",
                    "arguments": {"path": "src/parser.py", "oldText": "a", "newText": "b"},
                }
            ],
        },
        {
            "role": "toolResult",
            "toolCallId": "e1",
            "toolName": "edit",
            "isError": False,
            "content": [{"type": "text", "text": "ok"}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Fixed: parse('') now returns None."}]},
    ]
    text = summarize_offline(SummaryRequest("s", "p", 4000, messages=answered))
    done = text.split("### Done")[1].split("### In Progress")[0]
    in_progress = text.split("### In Progress")[1].split("### Blocked")[0]
    assert "Answered: Fix the empty-input bug in the parser. -> Fixed: parse('') now returns None." in done
    assert "Fix the empty-input bug" not in in_progress
    next_steps = text.split("## Next Steps")[1].split("## Critical Context")[0]
    assert "Wait for the user's next request" in next_steps and "Continue the work" not in next_steps


def test_offline_turn_prefix_keeps_the_constraints_the_user_gave_in_that_turn():
    prefix = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "Add a regression test. Keep the public API unchanged."}],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "toolCall",
                    "id": "w1",
                    "name": "write",
                    "arguments": {"path": "tests/test_parser.py", "content": "..."},
                }
            ],
        },
        {
            "role": "toolResult",
            "toolCallId": "w1",
            "toolName": "write",
            "isError": False,
            "content": [{"type": "text", "text": "written"}],
        },
    ]
    text = summarize_offline(SummaryRequest("s", "p", 2000, purpose="turnPrefix", messages=prefix))
    assert "Constraint: Keep the public API unchanged." in text.split("## Context for the Rest of the Turn")[1]
    assert "Wrote `tests/test_parser.py`" in text.split("## Early Progress")[1]
