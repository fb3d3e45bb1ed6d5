"""Summarizing providers and the choice between them.

Keys and endpoints come from settings, else from the variables the vendors'
own SDKs read. A call may name its provider; otherwise the configured
default, else the first of anthropic and openai that has a key, else offline
(which needs nothing and always works).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..errors import InvalidParams, ProviderNotConfigured

if TYPE_CHECKING:
    from ..config import ProvidersSettings
    from .base import Provider
    from .client import AskClient

PROVIDER_NAMES = ("anthropic", "openai", "client", "offline")


def available() -> list[str]:
    """Every provider this build can use (whether configured or not)."""
    return list(PROVIDER_NAMES)


def _endpoint(settings: ProvidersSettings, name: str, environ: Mapping[str, str]) -> tuple[str | None, str | None]:
    configured = getattr(settings, name)
    prefix = name.upper()
    key = configured.apiKey or environ.get(f"{prefix}_API_KEY") or None
    base_url = configured.baseUrl or environ.get(f"{prefix}_BASE_URL") or None
    return key, base_url


def default_provider_name(settings: ProvidersSettings, environ: Mapping[str, str] | None = None) -> str:
    environ = os.environ if environ is None else environ
    if settings.default:
        return settings.default
    for name in ("anthropic", "openai"):
        if _endpoint(settings, name, environ)[0]:
            return name
    return "offline"


def make_provider(
    name: str | None,
    settings: ProvidersSettings,
    environ: Mapping[str, str] | None = None,
    ask_client: AskClient | None = None,
) -> Provider:
    """The provider ``name`` (or the default one), configured; a clear error when it cannot be."""
    # Here, not at the top: initialize lists the providers' names (available) and loads none of them.
    from .base import RetryPolicy

    environ = os.environ if environ is None else environ
    chosen = name or default_provider_name(settings, environ)
    policy = RetryPolicy(max_retries=settings.maxRetries, base_delay=settings.retryBaseDelay)
    if chosen == "offline":
        from .offline import OfflineProvider

        return OfflineProvider()
    if chosen == "client":
        if ask_client is None:
            raise ProviderNotConfigured(
                "provider 'client' needs a connected client to answer session/summarize; none is attached",
                provider="client",
            )
        from .client import ClientProvider

        return ClientProvider(ask_client, settings.clientModel)
    if chosen == "anthropic":
        key, base_url = _endpoint(settings, "anthropic", environ)
        if not key:
            raise ProviderNotConfigured(
                "provider 'anthropic' has no API key: set ANTHROPIC_API_KEY or providers.anthropic.apiKey",
                provider="anthropic",
            )
        from .anthropic import AnthropicProvider

        return AnthropicProvider(key, base_url, settings.anthropic.model, policy, timeout=settings.timeout)
    if chosen == "openai":
        key, base_url = _endpoint(settings, "openai", environ)
        if not key and not base_url:
            raise ProviderNotConfigured(
                "provider 'openai' has no API key or endpoint: set OPENAI_API_KEY / OPENAI_BASE_URL "
                "or providers.openai.apiKey / baseUrl",
                provider="openai",
            )
        from .openai import OpenAIProvider

        return OpenAIProvider(key, base_url, settings.openai.model, policy, timeout=settings.timeout)
    raise InvalidParams(f"unknown provider {chosen!r}; choose one of {', '.join(PROVIDER_NAMES)}", provider=chosen)
