"""``session/compact`` and branch summaries: the options a call asks for, the result it answers with."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from .. import wire
from ..config import CompactionSettings
from ..errors import InvalidParams

if TYPE_CHECKING:
    from ..compaction.coordinator import CompactionRecord
    from ..compaction.run import CompactionOptions


def options(params: wire.CompactParams | wire.BranchParams, settings: CompactionSettings) -> CompactionOptions:
    """The call's own values where it gives them, the settings' otherwise."""
    # Imported on first use: making a service does not load the compaction engine.
    from ..compaction.run import CompactionOptions

    reserve = getattr(params, "reserveTokens", None)
    keep = getattr(params, "keepRecentTokens", None)
    return CompactionOptions(
        keep_recent_tokens=keep if keep is not None else settings.keepRecentTokens,
        reserve_tokens=reserve if reserve is not None else settings.reserveTokens,
        context_window=settings.contextWindow,
        custom_instructions=params.customInstructions,
        model=params.model,
        prune=settings.prune,
        native=msgspec.to_builtins(native) if (native := getattr(params, "native", None)) is not None else None,
    )


def check(params: wire.CompactParams) -> None:
    for name, value in (("reserveTokens", params.reserveTokens), ("keepRecentTokens", params.keepRecentTokens)):
        if value is not None and value < 0:
            raise InvalidParams(f"{name} must not be negative", field=name)


def should_compact(tokens: int, settings: CompactionSettings) -> bool:
    if not settings.enabled or settings.contextWindow is None:
        return False
    return tokens > settings.contextWindow - settings.reserveTokens


def result(record: CompactionRecord) -> wire.CompactResult:
    outcome = record.outcome
    return wire.CompactResult(
        entryId=record.entry_id,
        summary=outcome.summary,
        firstKeptEntryId=outcome.first_kept_entry_id,
        tokensBefore=outcome.tokens_before,
        tokensAfter=outcome.tokens_after,
        details=wire.CompactDetails(
            readFiles=outcome.read_files,
            modifiedFiles=outcome.modified_files,
            fallback=msgspec.convert(outcome.fallback, wire.CompactFallback) if outcome.fallback else None,
        ),
        provider=outcome.provider,
        model=outcome.model,
        durationMs=record.duration_ms,
        fellBack=record.default_fallback is not None or outcome.fallback is not None,
        fellBackReason=record.default_fallback or (outcome.fallback or {}).get("reason"),  # type: ignore[arg-type]  # the engine names its reasons as plain strings, the wire's Literal three
    )
