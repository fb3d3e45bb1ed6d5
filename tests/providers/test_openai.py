"""The OpenAI-compatible provider against a loopback chat-completions server."""

from __future__ import annotations

import time

import pytest

from sidecar.errors import ContextOverflow, ProviderError
from sidecar.providers.base import RetryPolicy, SummaryRequest
from sidecar.providers.openai import OpenAIProvider

from .servers import LoopbackServer, openai_events, sse, status

REQUEST = SummaryRequest(system_prompt="You summarize.", prompt="<conversation>y</conversation>", max_tokens=300)


@pytest.fixture
def server():
    with LoopbackServer() as running:
        yield running


def provider(server: LoopbackServer, retries: int = 2, key: str | None = "sk-oa") -> OpenAIProvider:
    return OpenAIProvider(key, server.url + "/v1", "gpt-test", RetryPolicy(retries, 0.01, max_delay=1.0))


async def test_streams_deltas_and_usage_and_sends_the_chat_completions_body(server):
    server.push(sse(openai_events(["## Goal", "\n- ship it"])))
    deltas: list[str] = []
    response = await provider(server).summarize(REQUEST, deltas.append)
    assert deltas == ["## Goal", "\n- ship it"]
    assert (response.text, response.model, response.input_tokens, response.output_tokens, response.stop_reason) == (
        "## Goal\n- ship it",
        "gpt-test",
        123,
        45,
        "stop",
    )
    sent = server.requests[0]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["headers"]["authorization"] == "Bearer sk-oa"
    body = sent["body"]
    assert body["model"] == "gpt-test" and body["stream"] is True and body["max_tokens"] == 300
    assert body["messages"] == [
        {"role": "system", "content": "You summarize."},
        {"role": "user", "content": "<conversation>y</conversation>"},
    ]


async def test_429_with_retry_after_then_success(server):
    server.push(
        status(429, {"error": {"message": "rate limited", "type": "rate_limit_error"}}, {"retry-after": "0.1"}),
        sse(openai_events(["fine"])),
    )
    started = time.monotonic()
    response = await provider(server).summarize(REQUEST, lambda _: None)
    assert response.text == "fine"
    assert time.monotonic() - started >= 0.1
    assert len(server.requests) == 2


async def test_500_and_529_are_retried_then_fail_with_a_clear_error(server):
    server.push(
        status(500, {"error": {"message": "internal"}}),
        status(529, {"error": {"message": "overloaded"}}),
        status(503, {"error": {"message": "unavailable"}}),
    )
    with pytest.raises(ProviderError) as caught:
        await provider(server, retries=2).summarize(REQUEST, lambda _: None)
    assert "3 times" in caught.value.message and "503" in caught.value.message
    assert caught.value.data["status"] == 503
    assert len(server.requests) == 3


async def test_an_error_object_mid_stream_is_retried(server):
    events = openai_events(["half"])[:2] + [
        (None, {"error": {"message": "The server had an error", "type": "server_error"}})
    ]
    server.push(sse(events), sse(openai_events(["again"])))
    response = await provider(server).summarize(REQUEST, lambda _: None)
    assert response.text == "again"


async def test_a_cut_connection_and_a_stream_ending_early_are_retried(server):
    server.push(
        sse(openai_events(["a", "b"]), cut_after=2),
        sse(openai_events(["c"], done=False, finish=False)),
        sse(openai_events(["done right"])),
    )
    retries: list[str] = []
    response = await provider(server).summarize(REQUEST, lambda _: None, lambda r, d: retries.append(r))
    assert response.text == "done right"
    assert len(retries) == 2 and "[DONE]" in retries[1]


async def test_a_refused_key_and_a_bad_request_are_not_retried(server):
    server.push(status(401, {"error": {"message": "Incorrect API key"}}))
    with pytest.raises(ProviderError) as caught:
        await provider(server).summarize(REQUEST, lambda _: None)
    assert "OPENAI_API_KEY" in caught.value.message and len(server.requests) == 1


async def test_context_length_exceeded_is_a_context_overflow(server):
    server.push(
        status(
            400,
            {
                "error": {
                    "message": "This model's maximum context length is 8192 tokens",
                    "code": "context_length_exceeded",
                }
            },
        )
    )
    with pytest.raises(ContextOverflow):
        await provider(server).summarize(REQUEST, lambda _: None)


async def test_no_key_sends_no_authorization_for_local_servers(server):
    server.push(sse(openai_events(["local"])))
    await provider(server, key=None).summarize(REQUEST, lambda _: None)
    assert "authorization" not in server.requests[0]["headers"]
