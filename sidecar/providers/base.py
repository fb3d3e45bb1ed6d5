"""The one small interface every summarizer implements.

A provider turns a ``SummaryRequest`` into text, streaming the text as it
arrives to a callback (which may raise to stop it: that is how cancellation
reaches the middle of a stream) and honouring asyncio cancellation. It knows
nothing of sessions; the compaction engine knows nothing of HTTP.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol

from ..errors import ProviderError

Purpose = Literal["history", "turnPrefix", "branch"]
TextCallback = Callable[[str], None]
RetryCallback = Callable[[str, float], None]


@dataclass(slots=True)
class SummaryRequest:
    system_prompt: str
    prompt: str
    max_tokens: int
    model: str | None = None
    purpose: Purpose = "history"
    # The structured source of ``prompt``, for summarizers that work without a
    # model (offline). Models read ``prompt`` only.
    messages: list[dict[str, object]] = field(default_factory=list)
    previous_summary: str | None = None
    custom_instructions: str | None = None
    # The user's messages go into the compaction verbatim beside the summary (its carry-over):
    # a summarizer without a model then names each request in one line instead of copying it.
    user_messages_carried: bool = False


@dataclass(slots=True)
class SummaryResponse:
    text: str
    model: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    stop_reason: str | None = None


class Provider(Protocol):
    name: str

    def model_for(self, requested: str | None) -> str:
        """The model a request will use (the requested one, else the provider's default)."""
        ...

    async def summarize(
        self, request: SummaryRequest, on_text: TextCallback, on_retry: RetryCallback | None = None
    ) -> SummaryResponse: ...


@dataclass(slots=True, frozen=True)
class RetryPolicy:
    # Attempts after the first, for failures the vendor SDK does not retry itself.
    max_retries: int = 3
    base_delay: float = 1.0
    max_delay: float = 30.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_delay)
        backoff = min(self.base_delay * (2**attempt), self.max_delay)
        return backoff * (0.75 + 0.25 * random.random())


class Retryable(Exception):
    """A failure worth another attempt (mid-stream overload, cut connection, truncated stream)."""

    def __init__(self, message: str, retry_after: float | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.status = status


async def with_retries(
    provider: str,
    attempt: Callable[[], Awaitable[SummaryResponse]],
    policy: RetryPolicy,
    on_retry: RetryCallback | None,
) -> SummaryResponse:
    """Run ``attempt`` until it succeeds or ``policy`` is spent; then a clear ``ProviderError``."""
    failures: list[str] = []
    for number in range(policy.max_retries + 1):
        try:
            return await attempt()
        except Retryable as exc:
            failures.append(str(exc))
            if number == policy.max_retries:
                raise ProviderError(
                    f"{provider}: the summary request failed {len(failures)} times; last error: {exc}",
                    provider=provider,
                    status=exc.status,
                    attempts=len(failures),
                    retryable=True,
                ) from exc
            wait = policy.delay(number, exc.retry_after)
            if on_retry is not None:
                on_retry(str(exc), wait)
            await asyncio.sleep(wait)
    raise AssertionError("unreachable")


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (seconds); None when absent or unreadable."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            continue
    return None


_OVERFLOW_HINTS = (
    "prompt is too long",
    "context length",
    "context_length_exceeded",
    "maximum context",
    "too many tokens",
    "exceeds the context window",
    "input is too long",
)


def looks_like_overflow(message: str) -> bool:
    lowered = message.lower()
    return any(hint in lowered for hint in _OVERFLOW_HINTS)
