"""metadata.json: kept in step with session.jsonl after every append, and rebuilt from it.

``lastMessageAt`` is the timestamp of the newest message record (the creation
time while there is none), ``messageCount`` counts message records (a
compaction is not a message), ``model`` is the last model an assistant
message or a model change named, ``metrics`` sums the assistant messages'
usage. What only metadata.json knows (name, source, cronJobId,
systemPromptOverride) cannot be rebuilt: a rebuilt file says ``interactive``.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from .codec import Translation
from .records import MessageRecord, Record, SessionMetadata, SessionMetrics


def new_metadata(
    session_id: str,
    created_at: str,
    model: str = "",
    source: str = "interactive",
    cron_job_id: str | None = None,
    name: str | None = None,
) -> SessionMetadata:
    return SessionMetadata(
        id=session_id,
        name=name or None,
        createdAt=created_at,
        lastMessageAt=created_at,
        model=model,
        messageCount=0,
        source=source,  # type: ignore[arg-type]  # source is one of the record's literals (checked by the caller)
        cronJobId=cron_job_id,
    )


def _count(usage: Mapping[str, object], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def add_usage(metrics: SessionMetrics | None, usage: Mapping[str, object]) -> SessionMetrics:
    metrics = msgspec.structs.replace(metrics) if metrics is not None else SessionMetrics()
    parts = [_count(usage, k) for k in ("input", "output", "cacheRead", "cacheWrite")]
    metrics.inputTokens += parts[0]
    metrics.outputTokens += parts[1]
    metrics.cacheReadTokens += parts[2]
    metrics.cacheWriteTokens += parts[3]
    metrics.totalTokens += _count(usage, "totalTokens") or sum(parts)
    metrics.assistantMessages += 1
    return metrics


def fold(metadata: SessionMetadata, translations: list[Translation]) -> SessionMetadata:
    """``metadata`` after a batch: a new value (the old one stays as it was until the write succeeds)."""
    updated = msgspec.structs.replace(metadata)
    for t in translations:
        if isinstance(t.record, MessageRecord):
            updated.messageCount += 1
            updated.lastMessageAt = t.record.timestamp or updated.lastMessageAt
        if t.model:
            updated.model = t.model
        if t.usage is not None:
            updated.metrics = add_usage(updated.metrics, t.usage)
        if t.name is not None:
            updated.name = t.name or None
    return updated


def rebuild(session_id: str, records: list[Record], created_at: str) -> SessionMetadata:
    """metadata.json from the records alone (it was missing or damaged)."""
    first = records[0].timestamp if records else created_at
    metadata = new_metadata(session_id, first)
    for record in records:
        if isinstance(record, MessageRecord):
            metadata.messageCount += 1
            metadata.lastMessageAt = record.timestamp
    return metadata
