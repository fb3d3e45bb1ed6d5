"""The anthropic provider against a loopback server speaking the Messages streaming format."""

from __future__ import annotations

import time

import pytest

from sidecar.errors import ContextOverflow, ProviderError
from sidecar.providers.anthropic import AnthropicProvider
from sidecar.providers.base import RetryPolicy, SummaryRequest

from .servers import (
    LoopbackServer,
    anthropic_error_body,
    anthropic_error_event,
    anthropic_events,
    sse,
    status,
)

FAST = RetryPolicy(max_retries=2, base_delay=0.01, max_delay=0.05)
REQUEST = SummaryRequest(
    system_prompt="You summarize.", prompt="<conversation>x</conversation>", max_tokens=500, model="claude-test"
)


@pytest.fixture
def server():
    with LoopbackServer() as running:
        yield running


def provider(server: LoopbackServer, retries: int = 2) -> AnthropicProvider:
    return AnthropicProvider("sk-test", server.url, policy=RetryPolicy(retries, 0.01, 0.05), sdk_max_retries=2)


async def test_streams_text_deltas_and_reports_usage(server):
    server.push(sse(anthropic_events(["## Goal\n", "- fix ", "the bug"])))
    deltas: list[str] = []
    response = await provider(server).summarize(REQUEST, deltas.append)
    assert deltas == ["## Goal\n", "- fix ", "the bug"]
    assert response.text == "## Goal\n- fix the bug"
    assert (response.model, response.input_tokens, response.output_tokens, response.stop_reason) == (
        "claude-test",
        321,
        42,
        "end_turn",
    )
    sent = server.requests[0]
    assert sent["path"] == "/v1/messages"
    # The SDK decides the header (x-api-key or a bearer token); the key must be in one of them.
    assert "sk-test" in (sent["headers"].get("x-api-key", "") + sent["headers"].get("authorization", ""))
    assert sent["body"]["system"] == "You summarize."
    assert sent["body"]["max_tokens"] == 500 and sent["body"]["stream"] is True
    assert sent["body"]["messages"] == [{"role": "user", "content": "<conversation>x</conversation>"}]


async def test_429_and_529_before_the_stream_are_retried_by_the_sdk_honouring_retry_after(server):
    server.push(
        status(429, anthropic_error_body("rate_limit_error", "slow down"), {"retry-after": "0.05"}),
        status(529, anthropic_error_body("overloaded_error", "Overloaded"), {"retry-after-ms": "20"}),
        sse(anthropic_events(["ok"])),
    )
    started = time.monotonic()
    response = await provider(server).summarize(REQUEST, lambda _: None)
    assert response.text == "ok"
    assert len(server.requests) == 3
    assert time.monotonic() - started >= 0.07  # both waits were honoured


async def test_overloaded_error_event_mid_stream_restarts_the_request(server):
    events = anthropic_events(["partial "])
    server.push(sse(events[:4] + [anthropic_error_event()]), sse(anthropic_events(["complete"])))
    retries: list[str] = []
    response = await provider(server).summarize(REQUEST, lambda _: None, lambda reason, delay: retries.append(reason))
    assert response.text == "complete"  # the partial text of the failed attempt is not part of the result
    assert len(retries) == 1 and "overloaded_error" in retries[0]


async def test_a_cut_connection_is_retried(server):
    server.push(sse(anthropic_events(["a", "b", "c"]), cut_after=4), sse(anthropic_events(["whole"])))
    response = await provider(server).summarize(REQUEST, lambda _: None)
    assert response.text == "whole"
    assert len(server.requests) == 2


async def test_a_stream_without_message_stop_is_retried_then_fails_clearly(server):
    for _ in range(3):
        server.push(sse(anthropic_events(["cut short"], stop=False)))
    with pytest.raises(ProviderError) as caught:
        await provider(server, retries=2).summarize(REQUEST, lambda _: None)
    assert "3 times" in caught.value.message and "message_stop" in caught.value.message
    assert caught.value.data["provider"] == "anthropic"
    assert len(server.requests) == 3


async def test_persistent_500_fails_after_the_sdk_retries(server):
    for _ in range(3):
        server.push(status(500, anthropic_error_body("api_error", "boom"), {"retry-after-ms": "1"}))
    with pytest.raises(ProviderError) as caught:
        await provider(server).summarize(REQUEST, lambda _: None)
    assert caught.value.data["status"] == 500 and "boom" in caught.value.message
    assert len(server.requests) == 3  # the first try and the SDK's two retries; no retries of ours on top


async def test_a_refused_key_is_not_retried(server):
    server.push(status(401, anthropic_error_body("authentication_error", "invalid x-api-key")))
    with pytest.raises(ProviderError) as caught:
        await provider(server).summarize(REQUEST, lambda _: None)
    assert "ANTHROPIC_API_KEY" in caught.value.message
    assert len(server.requests) == 1


async def test_prompt_too_long_is_a_context_overflow(server):
    server.push(
        status(400, anthropic_error_body("invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum"))
    )
    with pytest.raises(ContextOverflow):
        await provider(server).summarize(REQUEST, lambda _: None)


async def test_a_raising_text_callback_stops_the_stream_without_retry(server):
    server.push(sse(anthropic_events(["one", "two"])))

    class Stop(Exception):
        pass

    def on_text(delta: str) -> None:
        raise Stop()

    with pytest.raises(Stop):
        await provider(server).summarize(REQUEST, on_text)
    assert len(server.requests) == 1
