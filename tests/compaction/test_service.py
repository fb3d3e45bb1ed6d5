"""session/compact and session/branch {summarize} through the real service and real files."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from providers.servers import LoopbackServer, status

from sidecar import wire
from sidecar.config import Settings, apply_overrides
from sidecar.errors import NothingToCompact, ProviderError, RequestCancelled
from sidecar.service import SessionService

from .factory import PathBuilder, RecordingWork


def make_service(root: Path, **overrides: Any) -> SessionService:
    settings = apply_overrides(Settings(), {"providers": {"default": "offline", "maxRetries": 0}, **overrides}, "test")
    return SessionService(root, settings)


def filled_session(service: SessionService, turns: int = 6) -> tuple[str, Path]:
    created = service.create(wire.CreateParams(cwd="/work/proj"))
    builder = PathBuilder()
    for number in range(turns):
        builder.turn(
            f"request {number}: change module {number}",
            steps=2,
            output_chars=3000,
            tool="edit",
            path=f"src/m{number}.py",
        )
    objs = [{k: v for k, v in e.obj().items() if k not in ("id", "parentId", "timestamp")} for e in builder.entries]
    service.append(wire.AppendParams(sessionId=created.sessionId, entries=objs))
    return created.sessionId, Path(created.path)


def compact(service: SessionService, session_id: str, work=None, **params: Any) -> wire.CompactResult:
    params.setdefault("keepRecentTokens", 2000)
    return asyncio.run(service.compact(wire.CompactParams(sessionId=session_id, **params), *([work] if work else [])))


def test_compact_appends_one_entry_and_the_context_becomes_summary_plus_kept(sessions_root):
    service = make_service(sessions_root)
    session_id, path = filled_session(service)
    before_bytes = path.read_bytes()
    before = service.build_context(wire.BuildContextParams(sessionId=session_id))
    result = compact(service, session_id)
    after_bytes = path.read_bytes()
    assert after_bytes.startswith(before_bytes)  # appended, never rewritten
    new_lines = after_bytes[len(before_bytes) :].decode().splitlines()
    assert len(new_lines) == 1 and '"type":"compaction"' in new_lines[0]
    entry = service.get_entries(wire.GetEntriesParams(sessionId=session_id, ids=[result.entryId])).entries[0]
    assert entry["firstKeptEntryId"] == result.firstKeptEntryId and entry["tokensBefore"] == result.tokensBefore
    details = entry["details"]
    assert (details["readFiles"], details["modifiedFiles"]) == (result.details.readFiles, result.details.modifiedFiles)
    assert details["carryOver"]["lastRequest"].startswith("request ") and "fallback" not in details
    assert result.details.fallback is None
    assert "src/m0.py" in result.details.modifiedFiles and "## Goal" in result.summary
    assert (result.provider, result.model) == ("offline", "offline") and result.durationMs >= 0
    assert result.tokensAfter < result.tokensBefore
    after = service.build_context(wire.BuildContextParams(sessionId=session_id))
    cut = before.entryIds.index(result.firstKeptEntryId)
    assert after.messages[0]["role"] == "compactionSummary" and after.messages[1:] == before.messages[cut:]
    assert after.estimatedTokens == result.tokensAfter


def test_a_cancel_at_any_phase_leaves_the_file_byte_for_byte(sessions_root):
    service = make_service(sessions_root)
    session_id, path = filled_session(service)
    before = path.read_bytes()
    for phase in ("preparing", "pruning", "summarizing", "writing"):
        with pytest.raises(RequestCancelled):
            compact(service, session_id, RecordingWork(cancel_at=phase))
        assert path.read_bytes() == before
    assert (
        service.session(session_id).leaf_id
        == service.build_context(wire.BuildContextParams(sessionId=session_id)).leafId
    )


def test_asyncio_cancellation_mid_summary_writes_nothing(sessions_root):
    service = make_service(sessions_root)
    session_id, path = filled_session(service)
    before = path.read_bytes()
    never = asyncio.Event()

    async def ask(method: str, params: dict[str, Any]) -> Any:
        await never.wait()

    service.compactor.ask_client = ask

    async def scenario() -> None:
        task = asyncio.ensure_future(
            service.compact(wire.CompactParams(sessionId=session_id, provider="client", keepRecentTokens=2000))
        )
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert path.read_bytes() == before


def test_a_failing_provider_leaves_the_file_byte_for_byte(sessions_root):
    with LoopbackServer() as server:
        # A split turn sends two summary requests at once: both must meet the bad key.
        server.push(status(401, {"error": {"message": "bad key"}}))
        server.push(status(401, {"error": {"message": "bad key"}}))
        service = make_service(
            sessions_root,
            providers={"default": "offline", "maxRetries": 0, "openai": {"apiKey": "k", "baseUrl": server.url}},
        )
        session_id, path = filled_session(service)
        before = path.read_bytes()
        with pytest.raises(ProviderError, match="bad key"):
            compact(service, session_id, provider="openai")
        assert path.read_bytes() == before and len(server.requests) >= 1


def test_two_calls_at_once_share_one_compaction(sessions_root):
    service = make_service(sessions_root)
    session_id, path = filled_session(service)

    async def both() -> list[wire.CompactResult]:
        params = wire.CompactParams(sessionId=session_id, keepRecentTokens=2000)
        return await asyncio.gather(service.compact(params), service.compact(params))

    first, second = asyncio.run(both())
    assert first.entryId == second.entryId
    # Queued one after the other (as the rpc layer runs calls per session), the second finds the leaf
    # at that compaction: refused, naming it (tests/compaction/test_never_larger.py).
    with pytest.raises(NothingToCompact) as third:
        compact(service, session_id)
    assert third.value.data["entryId"] == first.entryId
    assert path.read_text().count('"type":"compaction"') == 1


def test_nothing_to_compact_is_a_clear_error(sessions_root):
    service = make_service(sessions_root)
    session_id, path = filled_session(service, turns=1)
    with pytest.raises(NothingToCompact, match="keepRecentTokens"):
        compact(service, session_id, keepRecentTokens=50000)


def test_repeated_compactions_through_the_service_keep_files_cumulative(sessions_root):
    service = make_service(sessions_root)
    session_id, _ = filled_session(service)
    first = compact(service, session_id)
    builder = PathBuilder()
    builder.turn("request 9: read the docs", steps=2, output_chars=3000, tool="read", path="docs/guide.md")
    objs = [{k: v for k, v in e.obj().items() if k not in ("id", "parentId", "timestamp")} for e in builder.entries]
    service.append(wire.AppendParams(sessionId=session_id, entries=objs))
    second = compact(service, session_id, keepRecentTokens=500)
    assert set(first.details.modifiedFiles) <= set(second.details.modifiedFiles)
    assert "docs/guide.md" in second.details.readFiles
    assert "request 0: change module 0" in second.summary  # carried from the first summary


def test_branch_with_summarize_writes_a_branch_summary_at_the_target(sessions_root):
    service = make_service(sessions_root)
    session_id, _ = filled_session(service, turns=3)
    tree = service.get_tree(wire.GetTreeParams(sessionId=session_id))
    target = tree.nodes[4].id  # inside the first turn
    left = tree.leafId
    result = service.branch(wire.BranchParams(sessionId=session_id, entryId=target, summarize=True))
    assert result.summaryEntryId is not None and result.leafId == result.summaryEntryId
    entry = service.get_entries(wire.GetEntriesParams(sessionId=session_id, ids=[result.summaryEntryId])).entries[0]
    # fromId: the leaf that was left, as pi 1.5's branchWithSummary writes it (0.73.1: the target).
    assert entry["type"] == "branch_summary" and entry["parentId"] == target and entry["fromId"] == left != target
    assert "request 2: change module 2" in entry["summary"]
    assert "src/m2.py" in entry["details"]["modifiedFiles"]
    ctx = service.build_context(wire.BuildContextParams(sessionId=session_id))
    assert ctx.messages[-1]["role"] == "branchSummary"
    plain = service.branch(wire.BranchParams(sessionId=session_id, entryId=target))
    assert plain.summaryEntryId is None and plain.leafId == target


def test_auto_compact_asks_once_per_crossing(sessions_root):
    service = make_service(
        sessions_root,
        compaction={"autoCompact": True, "contextWindow": 6000, "reserveTokens": 1000, "keepRecentTokens": 2000},
    )
    asked: list[tuple[str, int]] = []
    service.compactor.on_should_compact = lambda session_id, tokens: asked.append((session_id, tokens))
    session_id, _ = filled_session(service)
    assert len(asked) == 1 and asked[0][0] == session_id and asked[0][1] > 5000
    service.append(
        wire.AppendParams(
            sessionId=session_id,
            entries=[{"type": "message", "message": {"role": "user", "content": "more", "timestamp": 5}}],
        )
    )
    assert len(asked) == 1  # still pending: not asked twice
    result = asyncio.run(service.auto_compact(session_id, RecordingWork()))
    assert result.tokensAfter < result.tokensBefore
    assert service.compactor.wait_idle(session_id, 0.1)
