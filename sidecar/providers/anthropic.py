"""Summaries from Anthropic's Messages API, streamed through the official SDK.

The SDK retries 429/5xx answers before a stream starts (honouring
retry-after). What it leaves to us happens after the 200: an ``error`` event
in the stream (``overloaded_error``), a connection cut mid-stream, and a
stream that just ends without ``message_stop``. Those get bounded retries of
the whole request with backoff; anything else becomes a clear error at once.
"""

from __future__ import annotations

import anthropic
import httpx2

from ..errors import ContextOverflow, ProviderError
from .base import (
    Retryable,
    RetryCallback,
    RetryPolicy,
    SummaryRequest,
    SummaryResponse,
    TextCallback,
    looks_like_overflow,
    parse_retry_after,
    with_retries,
)

# A current Sonnet: claude-sonnet-4-5 reaches end of life on 2026-11-30 (the SDK warns).
DEFAULT_MODEL = "claude-sonnet-5-5"
# Error types Anthropic documents as transient when they arrive inside a stream.
_TRANSIENT_STREAM_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})


class AnthropicProvider:
    name = "anthropic"

    def __init__(
        self,
        api_key: str,
        base_url: str | None = None,
        model: str | None = None,
        policy: RetryPolicy = RetryPolicy(),
        sdk_max_retries: int = 2,
        timeout: float = 600.0,
    ) -> None:
        self.default_model = model or DEFAULT_MODEL
        self.policy = policy
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, max_retries=sdk_max_retries, timeout=timeout
        )

    def model_for(self, requested: str | None) -> str:
        return requested or self.default_model

    async def summarize(
        self, request: SummaryRequest, on_text: TextCallback, on_retry: RetryCallback | None = None
    ) -> SummaryResponse:
        model = self.model_for(request.model)

        async def attempt() -> SummaryResponse:
            return await self._stream_once(model, request, on_text)

        return await with_retries(self.name, attempt, self.policy, on_retry)

    async def close(self) -> None:
        await self._client.close()

    async def _stream_once(self, model: str, request: SummaryRequest, on_text: TextCallback) -> SummaryResponse:
        parts: list[str] = []
        stopped = False
        snapshot: object = None
        try:
            async with self._client.messages.stream(
                model=model,
                max_tokens=request.max_tokens,
                system=request.system_prompt,
                messages=[{"role": "user", "content": request.prompt}],
            ) as stream:
                async for event in stream:
                    if event.type == "text":
                        parts.append(event.text)
                        on_text(event.text)
                    elif event.type == "message_stop":
                        stopped = True
                snapshot = stream.current_message_snapshot
        except anthropic.APIStatusError as exc:
            raise _classify_status_error(exc) from exc
        except (anthropic.APIConnectionError, httpx2.TransportError) as exc:
            raise Retryable(f"the connection failed mid-stream ({type(exc).__name__}: {exc})") from exc
        if not stopped:
            raise Retryable("the stream ended without message_stop (the response was cut short)")
        usage = getattr(snapshot, "usage", None)
        return SummaryResponse(
            text="".join(parts),
            model=getattr(snapshot, "model", None) or model,
            input_tokens=getattr(usage, "input_tokens", None),
            output_tokens=getattr(usage, "output_tokens", None),
            stop_reason=getattr(snapshot, "stop_reason", None),
        )


def _error_body(exc: anthropic.APIStatusError) -> tuple[str | None, str]:
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        error = body["error"]
        return error.get("type"), str(error.get("message") or exc.message)
    return None, str(exc.message)


def _classify_status_error(exc: anthropic.APIStatusError) -> Exception:
    error_type, message = _error_body(exc)
    status = exc.status_code
    if status == 200:
        # An ``error`` event after the stream began: the SDK does not retry these.
        if error_type in _TRANSIENT_STREAM_ERRORS:
            return Retryable(
                f"{error_type} mid-stream: {message}", status=529 if error_type == "overloaded_error" else None
            )
        return ProviderError(
            f"anthropic: {error_type or 'error'} mid-stream: {message}", provider="anthropic", errorType=error_type
        )
    if status == 400 and looks_like_overflow(message):
        return ContextOverflow(
            f"anthropic: the summary request is too large for the model: {message}", provider="anthropic", status=status
        )
    if status in (401, 403):
        return ProviderError(
            f"anthropic: the API key was refused ({status}): {message}; set ANTHROPIC_API_KEY or providers.anthropic.apiKey",
            provider="anthropic",
            status=status,
        )
    retry_after = parse_retry_after(exc.response.headers) if exc.response is not None else None
    return ProviderError(
        f"anthropic: HTTP {status} ({error_type or 'error'}): {message}",
        provider="anthropic",
        status=status,
        errorType=error_type,
        retryAfter=retry_after,
    )
