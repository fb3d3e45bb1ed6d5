"""Properties of compaction over random sessions and settings (hypothesis)."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sidecar.compaction.cut import USER_LIKE_ROLES
from sidecar.compaction.prepare import with_pending
from sidecar.compaction.run import CompactionOptions, run_compaction
from sidecar.context.build import build_context
from sidecar.context.tokens import estimate_tokens
from sidecar.errors import CompactionNotSmaller, NothingToCompact
from sidecar.providers.offline import OfflineProvider

from .factory import PathBuilder

PATHS = ["src/a.py", "src/b.py", "README.md", "tests/test_a.py"]
TOOLS = ["read", "edit", "write", "bash", "ls"]

step = st.tuples(
    st.integers(0, 2),  # parallel tool calls in this assistant message (0: text only)
    st.lists(
        st.tuples(st.sampled_from(TOOLS), st.sampled_from(PATHS), st.integers(0, 3000), st.booleans()),
        min_size=2,
        max_size=2,
    ),
)
turn = st.tuples(st.integers(1, 800), st.lists(step, max_size=4), st.booleans())
session_spec = st.lists(turn, min_size=1, max_size=8)


def build(spec: list[Any], builder: PathBuilder | None = None) -> PathBuilder:
    builder = builder or PathBuilder()
    for request_chars, steps, injected in spec:
        if injected:
            builder.add({"type": "custom_message", "customType": "note", "content": "x" * 40, "display": True})
        builder.user("do " + "r" * request_chars)
        for parallel, calls in steps:
            chosen = calls[:parallel]
            _, ids = builder.assistant("thinking " * 5, [(tool, {"path": path}) for tool, path, _, _ in chosen])
            for call_id, (tool, _path, size, error) in zip(ids, chosen):
                builder.result(call_id, "o" * size, name=tool, error=error and size % 3 == 0)
        builder.assistant("done " * 10)
    return builder


def tool_paths(messages: list[dict[str, Any]]) -> set[str]:
    found = set()
    for message in messages:
        for block in message.get("content") or [] if message.get("role") == "assistant" else []:
            if block.get("type") == "toolCall" and block["name"] in ("read", "edit", "write", "ls"):
                found.add(block["arguments"]["path"])
    return found


def compact(path, keep: int):
    return asyncio.run(run_compaction(path, CompactionOptions(keep_recent_tokens=keep), OfflineProvider()))


def is_valid_cut(before: list[dict[str, Any]], start: int, cut: int) -> bool:
    if before[cut]["role"] not in USER_LIKE_ROLES | {"assistant"}:
        return False
    calls_before_cut = {
        b["id"] for m in before[start:cut] if m["role"] == "assistant" for b in m["content"] if b["type"] == "toolCall"
    }
    return not any(m["role"] == "toolResult" and m["toolCallId"] in calls_before_cut for m in before[cut:])


def check_valid_cut(before: list[dict[str, Any]], start: int, cut: int) -> None:
    assert is_valid_cut(before, start, cut), "the kept part starts at an invalid cut (or orphans a tool result)"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=session_spec, keep=st.integers(0, 4000))
def test_one_compaction_keeps_a_valid_suffix_of_enough_tokens_and_rebuilds_exactly(spec, keep):
    path = build(spec).entries
    before = build_context(path)
    try:
        outcome = compact(path, keep)
    except NothingToCompact:
        # Only when keeping keepRecentTokens leaves no valid cut after the first message.
        total, threshold = 0, None
        for index in range(len(before.messages) - 1, -1, -1):
            total += estimate_tokens(before.messages[index])
            if total >= keep:
                threshold = index
                break
        if threshold is not None:
            assert not any(is_valid_cut(before.messages, 0, c) for c in range(1, threshold + 1))
        return
    except CompactionNotSmaller as refused:
        # Only a compaction that would not shrink the context is refused, and the error says by how much.
        sizes = refused.data
        assert sizes["summaryTokens"] >= sizes["replacedTokens"]
        return
    # A compaction that is written shrinks the context (these paths report no usage: all estimated).
    assert outcome.tokens_after < outcome.tokens_before
    cut = before.entry_ids.index(outcome.first_kept_entry_id)
    assert cut > 0
    check_valid_cut(before.messages, 0, cut)
    kept = before.messages[cut:]
    assert sum(estimate_tokens(m) for m in kept) >= keep
    after = build_context(with_pending(path, outcome.entries))
    assert after.messages[0]["role"] == "compactionSummary" and after.messages[0]["summary"] == outcome.summary
    assert after.messages[1:] == kept  # summary + kept, nothing else, nothing reordered
    assert set(outcome.read_files).isdisjoint(outcome.modified_files)
    assert tool_paths(before.messages[:cut]) <= set(outcome.read_files) | set(outcome.modified_files)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rounds=st.lists(session_spec, min_size=2, max_size=4), keep=st.integers(0, 3000))
def test_repeated_compactions_are_cumulative_and_never_lose_kept_messages(rounds, keep):
    builder = PathBuilder()
    seen_read: set[str] = set()
    seen_modified: set[str] = set()
    summarized_or_kept: list[dict[str, Any]] = []
    for spec in rounds:
        build(spec, builder)
        before = build_context(builder.entries)
        try:
            outcome = compact(builder.entries, keep)
        except (NothingToCompact, CompactionNotSmaller):
            continue
        start = 1 if before.messages[0]["role"] == "compactionSummary" else 0
        cut = before.entry_ids.index(outcome.first_kept_entry_id)
        check_valid_cut(before.messages, start, cut)
        # Everything summarized now was in the context: the previous compaction's kept messages included.
        summarized_or_kept = before.messages[start:]
        files = set(outcome.read_files) | set(outcome.modified_files)
        assert seen_read | seen_modified <= files, "file lists must be cumulative"
        assert seen_modified <= set(outcome.modified_files)
        assert tool_paths(summarized_or_kept[: cut - start]) <= files
        seen_read, seen_modified = set(outcome.read_files), set(outcome.modified_files)
        for obj in outcome.entries:
            builder.add(obj)
        after = build_context(builder.entries)
        assert after.messages[1:] == before.messages[cut:]
