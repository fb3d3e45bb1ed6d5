"""Provider faults during compaction, through the real service and real files, on both HTTP providers.

For each fault (429, 529, 500, an error in the middle of the stream, no
answer within the timeout, a cancel while the model is being asked): the
error says what happened, the file is byte for byte unchanged, and the
session stays usable: a later append and a later compaction both succeed.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from providers.servers import (
    LoopbackServer,
    anthropic_error_body,
    anthropic_error_event,
    anthropic_events,
    openai_events,
    sse,
    status,
)

from sidecar import wire
from sidecar.errors import ProviderError, RequestCancelled
from sidecar.format.jsonl import parse_file

from .test_service import compact, filled_session, make_service

TIMEOUT = 0.5


def hang(seconds: float = 10.0):
    """Holds the request without a byte of answer, longer than the provider's timeout."""

    def respond(handler: Any) -> None:
        time.sleep(seconds)
        try:
            status(500, {"error": {"message": "too late"}})(handler)
        except OSError:
            pass  # the client gave up long ago

    return respond


def mid_stream(provider: str):
    if provider == "openai":
        events = openai_events(["half"])[:2] + [
            (None, {"error": {"message": "The server had an error", "type": "server_error"}})
        ]
    else:
        events = anthropic_events(["partial "])[:4] + [anthropic_error_event("overloaded_error", "Overloaded")]
    return sse(events)


def http_error(code: int, provider: str, kind: str, message: str):
    body = (
        anthropic_error_body(kind, message)
        if provider == "anthropic"
        else {"error": {"message": message, "type": kind}}
    )
    return status(code, body, {"retry-after-ms": "10", "retry-after": "0.01"})


FAULTS = {
    "429": (lambda p: http_error(429, p, "rate_limit_error", "rate limited"), ("429", "rate")),
    "529": (lambda p: http_error(529, p, "overloaded_error", "Overloaded"), ("529", "overloaded")),
    "500": (lambda p: http_error(500, p, "api_error", "internal"), ("500", "internal")),
    "mid-stream": (mid_stream, ("server had an error", "overloaded")),
    "timeout": (lambda p: hang(), ("timed out", "timeout")),
}


def service_for(root: Path, server: LoopbackServer):
    endpoint = {"apiKey": "k", "baseUrl": server.url}
    return make_service(
        root,
        providers={
            "default": "offline",
            "maxRetries": 0,
            "retryBaseDelay": 0.01,
            "timeout": TIMEOUT,
            "openai": endpoint,
            "anthropic": endpoint,
        },
    )


def still_usable(service: Any, session_id: str, path: Path, before: bytes) -> None:
    """The file as it was; then an append and a compaction (offline) go through."""
    assert path.read_bytes() == before
    service.append(
        wire.AppendParams(
            sessionId=session_id,
            entries=[
                {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": "go on"}]}},
                {"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "on it"}]}},
            ],
        )
    )
    result = compact(service, session_id, provider="offline")
    entries = parse_file(path.read_bytes()).items
    assert entries[-1].id == result.entryId and entries[-1].type == "compaction"  # type: ignore[union-attr]
    assert path.read_bytes().startswith(before)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_provider_fault_changes_nothing_and_the_session_goes_on(sessions_root: Path, provider: str, fault: str):
    make, says = FAULTS[fault]
    with LoopbackServer() as server:
        # A split turn asks twice at once, and the Anthropic SDK makes 3 attempts of its own: 6 answers.
        server.push(*(make(provider) for _ in range(6)))
        service = service_for(sessions_root, server)
        session_id, path = filled_session(service)
        before = path.read_bytes()
        started = time.monotonic()
        with pytest.raises(ProviderError) as caught:
            compact(service, session_id, provider=provider)
        message = caught.value.message.lower()
        assert any(word in message for word in says), caught.value.message
        if fault == "timeout":
            # Gave up at the timeout (each of the SDK's attempts), not when the server answered (after 10 s).
            assert time.monotonic() - started < 8
        still_usable(service, session_id, path, before)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_cancel_while_the_model_is_asked_changes_nothing_and_the_session_goes_on(sessions_root: Path, provider: str):
    with LoopbackServer() as server:
        server.push(hang(1.0), hang(1.0))
        service = make_service(
            sessions_root,
            providers={
                "default": "offline",
                "maxRetries": 0,
                "timeout": 30.0,
                "openai": {"apiKey": "k", "baseUrl": server.url},
                "anthropic": {"apiKey": "k", "baseUrl": server.url},
            },
        )
        session_id, path = filled_session(service)
        before = path.read_bytes()

        async def cancel_mid_request() -> None:
            task = asyncio.ensure_future(
                service.compact(wire.CompactParams(sessionId=session_id, provider=provider, keepRecentTokens=2000))
            )
            while not server.requests:
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises((asyncio.CancelledError, RequestCancelled)):
                await task

        asyncio.run(cancel_mid_request())
        still_usable(service, session_id, path, before)
