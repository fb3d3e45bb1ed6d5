"""Summaries from the client itself, for agents that already own their model access.

The sidecar sends the server->client request ``session/summarize
{systemPrompt, prompt, maxTokens, model?}`` and expects ``{text}``. Which
transport carries it is the rpc layer's business: this provider only needs an
async "ask the client" callable. The answer arrives whole, so the text
callback gets it in one piece.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from ..errors import ContextOverflow, ProviderError, SidecarError
from .base import RetryCallback, SummaryRequest, SummaryResponse, TextCallback, looks_like_overflow

AskClient = Callable[[str, dict[str, object]], Awaitable[object]]
SUMMARIZE_METHOD = "session/summarize"


class ClientProvider:
    name = "client"

    def __init__(self, ask: AskClient, model: str | None = None) -> None:
        self._ask = ask
        self.default_model = model

    def model_for(self, requested: str | None) -> str:
        return requested or self.default_model or "client"

    async def summarize(
        self, request: SummaryRequest, on_text: TextCallback, on_retry: RetryCallback | None = None
    ) -> SummaryResponse:
        params: dict[str, object] = {
            "systemPrompt": request.system_prompt,
            "prompt": request.prompt,
            "maxTokens": request.max_tokens,
        }
        model = request.model or self.default_model
        if model:
            params["model"] = model
        try:
            answer = await self._ask(SUMMARIZE_METHOD, params)
        except (asyncio.CancelledError, SidecarError):
            raise
        except Exception as exc:  # the client answered with an error, or the transport broke
            message = str(exc) or type(exc).__name__
            if looks_like_overflow(message):
                raise ContextOverflow(
                    f"client: the summary request is too large: {message}", provider="client"
                ) from exc
            raise ProviderError(f"client: {SUMMARIZE_METHOD} failed: {message}", provider="client") from exc
        text = answer.get("text") if isinstance(answer, dict) else None
        if not isinstance(text, str) or not isinstance(answer, dict):  # (a text is found in a dict only)
            raise ProviderError(
                f'client: {SUMMARIZE_METHOD} must answer {{"text": string}}, got {type(answer).__name__}',
                provider="client",
            )
        on_text(text)
        return SummaryResponse(
            text=text, model=model or (said if isinstance(said := answer.get("model"), str) else "client")
        )
