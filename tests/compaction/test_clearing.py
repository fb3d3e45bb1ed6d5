"""Tool-result clearing: the batches it plans, and the carried count that spares a context build per append."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from sidecar import wire
from sidecar.compaction.clearing import clearable, output_saving, plan_clear, plan_for_path
from sidecar.config import ClearToolResultsSettings, Settings, apply_overrides
from sidecar.service import SessionService


def result(call: str, chars: int, error: bool = False) -> dict:
    return {
        "role": "toolResult",
        "toolCallId": call,
        "toolName": "bash",
        "isError": error,
        "content": [{"type": "text", "text": "o" * chars}],
    }


def test_the_newest_k_stay_errors_stay_and_too_little_waits():
    messages = [
        result("a", 4000),
        result("b", 4000, error=True),
        result("c", 4000),
        result("d", 4000),
        result("e", 4000),
    ]
    ids = ["a", "b", "c", "d", "e"]
    plan = plan_clear(messages, ids, set(), keep_tool_results=2, minimum_tokens=1500)
    assert plan is not None and plan.tool_result_ids == ["a", "c"] and plan.reason == "clearToolResults"
    assert plan_clear(messages, ids, set(), keep_tool_results=2, minimum_tokens=2500) is None  # ~1,970 freed: waits
    # Cleared ones still count among the newest K, and are not cleared again.
    found = clearable(messages, ids, {"d"}, keep_tool_results=2)
    assert found.tool_result_ids == ["a", "c"] and found.kept == [0, output_saving(messages[4])]
    assert found.tokens == output_saving(messages[0]) + output_saving(messages[2]) and output_saving(messages[1]) == 0
    assert plan_clear(messages, ids, {"a", "c"}, keep_tool_results=2, minimum_tokens=1) is None


def entries_for(rng: random.Random, number: int) -> list[dict]:
    call = f"c{number}"
    kind = rng.random()
    if kind < 0.15:
        return [
            {
                "type": "message",
                "message": {"role": "user", "content": [{"type": "text", "text": "hi " * rng.randint(1, 300)}]},
            }
        ]
    if kind < 0.2:
        return [{"type": "custom", "customType": "x.state", "data": {"n": number}}]
    return [
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "content": [{"type": "toolCall", "id": call, "name": "bash", "arguments": {"n": number}}],
            },
        },
        {"type": "message", "message": result(call, rng.choice([10, 400, 2500, 6000]), error=rng.random() < 0.1)},
    ]


@pytest.mark.parametrize("seed", range(6))
def test_the_carried_count_clears_exactly_when_a_full_build_would(tmp_path: Path, seed: int):
    rng = random.Random(seed)
    clearing = ClearToolResultsSettings(
        enabled=True,
        triggerTokens=rng.choice([0, 3000, 8000]),
        keepToolResults=rng.randint(0, 4),
        minimumTokens=rng.choice([0, 1500, 5000]),
    )
    settings = apply_overrides(
        Settings(),
        {
            "compaction": {
                "clearToolResults": {
                    "enabled": True,
                    "triggerTokens": clearing.triggerTokens,
                    "keepToolResults": clearing.keepToolResults,
                    "minimumTokens": clearing.minimumTokens,
                }
            },
            "providers": {"default": "offline"},
        },
        "test",
    )
    svc = SessionService(tmp_path, settings)
    session_id = svc.create(wire.CreateParams(cwd="/w")).sessionId
    cleared = 0
    for number in range(120):
        batch = entries_for(rng, number)
        # One entry at a time or the batch whole, as clients do both.
        parts = [batch] if rng.random() < 0.5 else [[e] for e in batch]
        for part in parts:
            session = svc.session(session_id)
            before = session.tree.path(session.leaf_id)
            answer = svc.append(wire.AppendParams(sessionId=session_id, entries=part))
            path = svc.session(session_id).tree.path(answer.entries[-1].id)
            due = (
                answer.contextTokens
                if answer.clearedToolResults is None
                else answer.clearedToolResults.contextTokensBefore
            )
            expected = plan_for_path(path, clearing) if due > clearing.triggerTokens else None
            got = answer.clearedToolResults
            assert (got is None) == (expected is None), (seed, number, len(before))
            if got is not None:
                assert got.toolResultIds == expected.tool_result_ids and got.tokensFreed == expected.tokens_freed
                assert answer.leafId == got.entryId
                cleared += 1
        if number == 70:
            # A compaction and a branch make the count start over from a build.
            import asyncio

            asyncio.run(svc.compact(wire.CompactParams(sessionId=session_id, keepRecentTokens=500)))
        if number == 90:
            session = svc.session(session_id)
            svc.branch(wire.BranchParams(sessionId=session_id, entryId=session.tree.path(session.leaf_id)[-6].id))
    assert cleared > 0
    svc.close_all()


def test_no_clearing_in_a_session_kept_for_oh_my_pi(tmp_path: Path):
    """oh-my-pi's context rules do not read the overlay: a clearing there would change nothing but the file."""
    settings = apply_overrides(
        Settings(),
        {
            "store": {"compat": "omp"},
            "compaction": {
                "clearToolResults": {"enabled": True, "triggerTokens": 0, "keepToolResults": 0, "minimumTokens": 1}
            },
        },
        "test",
    )
    svc = SessionService(tmp_path, settings)
    session_id = svc.create(wire.CreateParams(cwd="/w")).sessionId
    rng = random.Random(1)
    answers = [svc.append(wire.AppendParams(sessionId=session_id, entries=entries_for(rng, n))) for n in range(20)]
    assert all(a.clearedToolResults is None for a in answers)
    assert not any(e.type == "custom" and b"sidecar.prune" in e.raw for e in svc.session(session_id).tree.entries)
    svc.close_all()


def test_the_size_after_a_clearing_is_the_built_context_size(tmp_path: Path):
    """With no usage reported, contextTokens after a clearing is what a full count of the context gives."""
    from sidecar.context.build import build_context
    from sidecar.context.tokens import context_tokens

    settings = apply_overrides(
        Settings(),
        {
            "compaction": {
                "clearToolResults": {
                    "enabled": True,
                    "triggerTokens": 2000,
                    "keepToolResults": 1,
                    "minimumTokens": 1000,
                }
            }
        },
        "test",
    )
    svc = SessionService(tmp_path, settings)
    session_id = svc.create(wire.CreateParams(cwd="/w")).sessionId
    rng = random.Random(3)
    seen = 0
    for number in range(40):
        answer = svc.append(wire.AppendParams(sessionId=session_id, entries=entries_for(rng, number)))
        if answer.clearedToolResults is not None:
            ctx = build_context(svc.session(session_id).tree.path(answer.leafId))
            assert answer.contextTokens == context_tokens(ctx.messages, ctx.after_compaction)
            seen += 1
    assert seen >= 2
    svc.close_all()
