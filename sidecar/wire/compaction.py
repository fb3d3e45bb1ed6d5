"""Compaction and its notifications; the client summarizing for us."""

from __future__ import annotations

from typing import Any, Literal

from .base import _Params, _Result
from .fidelity import NativeCompaction


class CompactParams(_Params):
    sessionId: str
    # Compact the path to this entry instead of the leaf; the compaction entry is appended below it.
    leafId: str | None = None
    customInstructions: str | None = None
    # "anthropic", "openai", "client", "offline". Absent: providers.default, else the first of anthropic
    # and openai with a key, else offline (the result says fellBack, "noProviderConfigured").
    provider: str | None = None
    model: str | None = None
    reserveTokens: int | None = None
    keepRecentTokens: int | None = None
    # The provider's own compaction item for the same span, recorded beside the text summary.
    native: NativeCompaction | None = None


class CompactFallback(_Result):
    """The provider's summary was empty or garbage; the offline summarizer wrote these summaries instead."""

    provider: str  # the provider that was asked
    model: str
    reason: Literal["empty", "garbage"]
    summaries: list[Literal["history", "turnPrefix", "branch"]]
    usedProvider: str  # "offline"


class CompactDetails(_Result):
    readFiles: list[str]
    modifiedFiles: list[str]
    fallback: CompactFallback | None = None


class CompactResult(_Result):
    entryId: str  # the compaction entry (a prune entry, when one was needed, is written just before it)
    summary: str
    firstKeptEntryId: str
    tokensBefore: int
    tokensAfter: int
    details: CompactDetails
    provider: str  # the provider that was run: the one named (call, then settings), else the default's pick
    model: str
    durationMs: int
    # Always sent. True when the summary is not the work of the provider the call or the settings named:
    # none was named and none has a key, so the offline summarizer wrote it (fellBackReason
    # "noProviderConfigured"), or the provider's answer was empty or garbage and the offline summary of
    # the same messages replaced it ("empty", "garbage"; details.fallback says which summaries).
    # A provider named by the call or by providers.default never falls back: it answers or is an error.
    fellBack: bool
    fellBackReason: Literal["noProviderConfigured", "empty", "garbage"] | None = None


class DidCompactParams(_Result):
    """Notification ``session/didCompact``: the sidecar compacted a session by itself (autoCompact)."""

    sessionId: str
    # What the autoCompact run answered (absent in a subscriber's notification).
    result: CompactResult | None = None
    # A subscriber's: its position in the session's events, and the compaction entry
    # (which the didAppend just before carried whole).
    cursor: str | None = None
    entryId: str | None = None
    firstKeptEntryId: str | None = None


class DidAppendParams(_Result):
    """Notification ``session/didAppend``: entries reached a watched session's file.

    ``external`` true: another program wrote them (they are in the session now,
    and its leaf is ``leafId``). Sent to clients that opened the session with ``watch``.
    """

    sessionId: str
    entries: list[dict[str, Any]]
    leafId: str | None
    external: bool
    # Sent to a subscriber (session/subscribe): its position in the session's events.
    cursor: str | None = None


class DidReloadParams(_Result):
    """Notification ``session/didReload``: a watched session's file was read again whole
    (another program rewrote, cut or replaced it); what the client holds may be stale."""

    sessionId: str
    # "rewritten", "truncated", "replaced", "interleaved" (see ExternalChange.reloaded), or
    # "header" (only the header line, rewritten in place).
    reason: str
    leafId: str | None
    entryCount: int


class SummarizeParams(_Result):
    """Server -> client request ``session/summarize`` (the ``client`` provider); answered by ``SummarizeResult``."""

    systemPrompt: str
    prompt: str
    maxTokens: int
    model: str | None = None


class SummarizeResult(_Result):
    text: str
