"""Summaries from any OpenAI-compatible chat-completions endpoint, streamed over httpx.

OpenAI, OpenRouter, vLLM, llama.cpp, Ollama and most gateways speak this
wire format: ``POST {base}/chat/completions`` with ``stream: true`` answers
Server-Sent Events of ``chat.completion.chunk`` objects, ending in
``data: [DONE]``. There is no SDK in between, so every retry is ours:
429/5xx (honouring retry-after), an error object inside the stream, a cut
connection and a stream that stops before its end.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

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

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4.1-mini"
_RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
_TRANSIENT_ERROR_TYPES = frozenset({"server_error", "overloaded_error", "rate_limit_error", "service_unavailable"})


class OpenAIProvider:
    name = "openai"

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None = None,
        model: str | None = None,
        policy: RetryPolicy = RetryPolicy(),
        timeout: float = 600.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.default_model = model or DEFAULT_MODEL
        self.policy = policy
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(
            headers=headers, timeout=httpx.Timeout(timeout, connect=30.0), transport=transport
        )

    def model_for(self, requested: str | None) -> str:
        return requested or self.default_model

    async def close(self) -> None:
        await self._client.aclose()

    async def summarize(
        self, request: SummaryRequest, on_text: TextCallback, on_retry: RetryCallback | None = None
    ) -> SummaryResponse:
        model = self.model_for(request.model)
        body = {
            "model": model,
            "messages": [
                {"role": "system", "content": request.system_prompt},
                {"role": "user", "content": request.prompt},
            ],
            "max_tokens": request.max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        }

        async def attempt() -> SummaryResponse:
            return await self._stream_once(model, body, on_text)

        return await with_retries(self.name, attempt, self.policy, on_retry)

    async def _stream_once(self, model: str, body: dict[str, object], on_text: TextCallback) -> SummaryResponse:
        parts: list[str] = []
        finished = False
        finish_reason = None
        usage: dict[str, Any] = {}  # (JSON as the stream sent it)
        served_model = model
        try:
            async with self._client.stream("POST", f"{self.base_url}/chat/completions", json=body) as response:
                if response.status_code != 200:
                    await response.aread()
                    raise _status_error(response)
                async for line in response.aiter_lines():
                    if not line.startswith("data:"):
                        continue  # comments (": keep-alive"), event names, blank separators
                    data = line[5:].strip()
                    if data == "[DONE]":
                        finished = True
                        break
                    chunk = _decode_chunk(data)
                    if isinstance(chunk.get("error"), dict):
                        raise _stream_error(chunk["error"])
                    served_model = chunk.get("model") or served_model
                    if isinstance(chunk.get("usage"), dict):
                        usage = chunk["usage"]
                    for choice in chunk.get("choices") or []:
                        delta = choice.get("delta") or {}
                        text = delta.get("content")
                        if isinstance(text, str) and text:
                            parts.append(text)
                            on_text(text)
                        if choice.get("finish_reason"):
                            finish_reason = choice["finish_reason"]
        except httpx.TransportError as exc:
            raise Retryable(f"the connection failed ({type(exc).__name__}: {exc})") from exc
        if not finished and finish_reason is None:
            raise Retryable("the stream ended before [DONE] (the response was cut short)")
        return SummaryResponse(
            text="".join(parts),
            model=served_model,
            input_tokens=usage.get("prompt_tokens"),
            output_tokens=usage.get("completion_tokens"),
            stop_reason=finish_reason,
        )


def _decode_chunk(data: str) -> dict[str, Any]:
    try:
        chunk = json.loads(data)
    except json.JSONDecodeError as exc:
        raise Retryable(f"the stream carried a malformed event: {data[:200]!r}") from exc
    return chunk if isinstance(chunk, dict) else {}


def _error_fields(payload: object) -> tuple[str | None, str]:
    if isinstance(payload, dict):
        error = payload.get("error", payload)
        if isinstance(error, dict):
            return error.get("type") or error.get("code"), str(error.get("message") or error)
        return None, str(error)
    return None, str(payload)


def _status_error(response: httpx.Response) -> Exception:
    try:
        payload: object = response.json()
    except ValueError:
        payload = response.text[:500]
    error_type, message = _error_fields(payload)
    status = response.status_code
    if status in _RETRY_STATUSES:
        return Retryable(f"HTTP {status}: {message}", retry_after=parse_retry_after(response.headers), status=status)
    if status in (400, 413) and looks_like_overflow(message):
        return ContextOverflow(
            f"openai: the summary request is too large for the model: {message}", provider="openai", status=status
        )
    if status in (401, 403):
        return ProviderError(
            f"openai: the API key was refused ({status}): {message}; set OPENAI_API_KEY or providers.openai.apiKey",
            provider="openai",
            status=status,
        )
    return ProviderError(
        f"openai: HTTP {status} ({error_type or 'error'}): {message}", provider="openai", status=status
    )


def _stream_error(error: dict[str, Any]) -> Exception:
    error_type, message = _error_fields({"error": error})
    if error_type in _TRANSIENT_ERROR_TYPES:
        return Retryable(f"{error_type} mid-stream: {message}")
    if looks_like_overflow(message):
        return ContextOverflow(f"openai: the summary request is too large for the model: {message}", provider="openai")
    return ProviderError(
        f"openai: {error_type or 'error'} mid-stream: {message}", provider="openai", errorType=error_type
    )
