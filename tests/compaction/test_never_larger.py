"""A compaction never leaves the context larger; asking again at a compaction is refused with a reason;
autoCompact does not retry a refusal on every append; a fallback of the default provider is reported.

Through the real service and real files (the rpc end of it is tests/rpc/test_compact_contract.py).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from sidecar import wire
from sidecar.compaction.coordinator import AUTO_RETRY_GROWTH
from sidecar.config import Settings, apply_overrides
from sidecar.errors import CompactionNotSmaller, NothingToCompact, ProviderNotConfigured
from sidecar.service import SessionService

from .test_service import compact, filled_session, make_service

NO_KEYS = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", "ANTHROPIC_BASE_URL": ""}


def message(role: str, text: str) -> dict[str, Any]:
    body: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1}
    if role == "assistant":
        body.update(
            api="anthropic-messages",
            provider="anthropic",
            model="claude-x",
            stopReason="stop",
            usage={
                "input": 0,
                "output": 0,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 0,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
        )
    return {"type": "message", "message": body}


def small_session(service: SessionService, turns: int = 2) -> tuple[str, Path]:
    created = service.create(wire.CreateParams(cwd="/work/small"))
    entries = []
    for number in range(turns):
        entries += [message("user", f"question {number}"), message("assistant", f"answer {number}")]
    service.append(wire.AppendParams(sessionId=created.sessionId, entries=entries))
    return created.sessionId, Path(created.path)


def test_a_compaction_that_would_grow_the_context_is_refused_and_writes_nothing(sessions_root):
    service = make_service(sessions_root)
    session_id, path = small_session(service)
    before = path.read_bytes()
    context = service.build_context(wire.BuildContextParams(sessionId=session_id))
    with pytest.raises(CompactionNotSmaller) as refused:
        compact(service, session_id, keepRecentTokens=1)
    sizes = refused.value.data
    assert refused.value.code == -33025 and sizes["kind"] == "compactionNotSmaller"
    assert sizes["summaryTokens"] >= sizes["replacedTokens"] > 0
    assert sizes["tokensBefore"] == context.estimatedTokens
    assert "keepRecentTokens" in refused.value.message  # says what to do
    assert path.read_bytes() == before
    assert service.build_context(wire.BuildContextParams(sessionId=session_id)).messages == context.messages


def test_every_written_compaction_shrinks_the_context(sessions_root):
    service = make_service(sessions_root)
    session_id, _ = filled_session(service)
    for keep in (4000, 1000):
        result = compact(service, session_id, keepRecentTokens=keep)
        assert result.tokensAfter < result.tokensBefore
        service.append(
            wire.AppendParams(
                sessionId=session_id, entries=[message("user", "go on " * 400), message("assistant", "done " * 400)]
            )
        )


def test_compacting_again_at_a_compaction_is_refused_naming_it(sessions_root):
    service = make_service(sessions_root)
    session_id, path = filled_session(service)
    first = compact(service, session_id)
    written = path.read_bytes()
    # Straight after, in this process (which wrote it), and in another one (which only reads the file):
    # the same answer, never the old result passed off as a new compaction.
    with pytest.raises(NothingToCompact) as again:
        compact(service, session_id)
    service.close_all()
    with pytest.raises(NothingToCompact) as elsewhere:
        compact(make_service(sessions_root), session_id)
    for refused in (again.value, elsewhere.value):
        assert refused.data["reason"] == "leafIsCompaction" and refused.data["entryId"] == first.entryId
        assert first.entryId in refused.message
    assert path.read_bytes() == written


def test_auto_compact_remembers_a_refusal_until_the_context_has_grown(sessions_root):
    service = make_service(
        sessions_root,
        compaction={"autoCompact": True, "contextWindow": 300, "reserveTokens": 200, "keepRecentTokens": 1},
    )
    asked: list[int] = []
    service.compactor.on_should_compact = lambda session_id, tokens: asked.append(tokens)
    session_id, path = small_session(service, turns=20)  # past the line (100 tokens), yet too small to shrink
    assert len(asked) == 1
    with pytest.raises(CompactionNotSmaller):
        asyncio.run(service.auto_compact(session_id))
    refused_at = service.compactor.auto_refused_until(session_id)
    assert refused_at is not None and refused_at >= asked[0] + AUTO_RETRY_GROWTH
    written = path.read_bytes()
    # Many appends past the line, each growing the context a little: not one more request.
    for number in range(30):
        answer = service.append(wire.AppendParams(sessionId=session_id, entries=[message("user", f"more {number}")]))
        assert answer.shouldCompact
    assert len(asked) == 1 and path.read_bytes().startswith(written)
    # Once the context has grown past the refusal's mark, autoCompact is asked for again.
    grown = service.append(
        wire.AppendParams(sessionId=session_id, entries=[message("user", "x" * 4 * AUTO_RETRY_GROWTH * 2)])
    )
    assert grown.contextTokens >= refused_at and len(asked) == 2


def test_auto_compact_remembers_nothing_to_compact_too(sessions_root):
    service = make_service(
        sessions_root,
        compaction={"autoCompact": True, "contextWindow": 300, "reserveTokens": 200, "keepRecentTokens": 100_000},
    )
    asked: list[int] = []
    service.compactor.on_should_compact = lambda session_id, tokens: asked.append(tokens)
    session_id, _ = small_session(service, turns=20)
    with pytest.raises(NothingToCompact):
        asyncio.run(service.auto_compact(session_id))
    for number in range(10):
        service.append(wire.AppendParams(sessionId=session_id, entries=[message("user", f"more {number}")]))
    assert len(asked) == 1


def test_the_default_provider_falling_back_to_offline_is_reported(sessions_root, monkeypatch):
    for name, value in NO_KEYS.items():
        monkeypatch.setenv(name, value)
    settings = apply_overrides(Settings(), {"providers": {"maxRetries": 0}}, "test")
    service = SessionService(sessions_root, settings)
    session_id, _ = filled_session(service)
    result = compact(service, session_id)
    assert (result.provider, result.fellBack, result.fellBackReason) == ("offline", True, "noProviderConfigured")


def test_a_named_provider_never_falls_back_silently(sessions_root, monkeypatch):
    for name, value in NO_KEYS.items():
        monkeypatch.setenv(name, value)
    service = make_service(sessions_root)  # providers.default "offline": chosen, not a fallback
    session_id, path = filled_session(service)
    chosen = compact(service, session_id)
    assert (chosen.provider, chosen.fellBack, chosen.fellBackReason) == ("offline", False, None)
    service.append(wire.AppendParams(sessionId=session_id, entries=[message("user", "more " * 2000)]))
    written = path.read_bytes()
    # Named by the call without a key: an error, not the offline summary.
    with pytest.raises(ProviderNotConfigured):
        compact(service, session_id, provider="anthropic")
    assert path.read_bytes() == written
