"""The compaction run: prompts, split turns, the pi bug fix, pruning, re-injection, step-down, progress."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sidecar.compaction.fit import STAGES, fit_conversation
from sidecar.compaction.prepare import prepare_compaction, with_pending
from sidecar.compaction.prompts import SECTIONS, SPLIT_TURN_HEADING
from sidecar.compaction.run import CompactionOptions, run_compaction
from sidecar.context.build import build_context
from sidecar.context.pruned import PRUNE_CUSTOM_TYPE
from sidecar.errors import ContextOverflow, NothingToCompact, RequestCancelled
from sidecar.providers.base import SummaryRequest, SummaryResponse

from .factory import PathBuilder, RecordingWork


class RecordingProvider:
    """A provider double: records each request, answers with a fixed text (or overflows above a size)."""

    name = "recording"

    def __init__(self, overflow_above: int | None = None) -> None:
        self.requests: list[SummaryRequest] = []
        self.overflow_above = overflow_above

    def model_for(self, requested: str | None) -> str:
        return requested or "rec-1"

    async def summarize(self, request: SummaryRequest, on_text, on_retry=None) -> SummaryResponse:
        self.requests.append(request)
        if self.overflow_above is not None and len(request.prompt) > self.overflow_above:
            raise ContextOverflow("prompt is too long")
        text = f"SUMMARY[{request.purpose}]"
        on_text(text)
        return SummaryResponse(text=text, model=self.model_for(request.model))


def run(path, provider, work=None, **options: Any):
    return asyncio.run(run_compaction(path, CompactionOptions(**options), provider, work))


def long_session(turns: int = 6, output_chars: int = 4000) -> PathBuilder:
    builder = PathBuilder()
    for number in range(turns):
        builder.turn(
            f"request {number}: please handle part {number}",
            steps=2,
            output_chars=output_chars,
            tool="edit" if number % 2 else "read",
            path=f"src/part{number}.py",
        )
    return builder


def test_the_request_uses_the_template_flat_transcript_and_output_caps():
    builder = long_session()
    provider = RecordingProvider()
    outcome = run(
        builder.entries, provider, keep_recent_tokens=3000, reserve_tokens=10000, custom_instructions="focus on part 1"
    )
    request = provider.requests[0]
    assert request.max_tokens == 8000  # 0.8 x reserve
    for section in SECTIONS:
        assert f"## {section}" in request.prompt
    assert "[User]: request 0: please handle part 0" in request.prompt
    assert '[Assistant tool calls]: read(path="src/part0.py")' in request.prompt
    assert "[Tool result]: (read) " in request.prompt
    assert "more characters cut]" in request.prompt  # 4000-char outputs are cut to 2000
    assert request.prompt.rstrip().endswith("focus on part 1")
    assert "<previous-summary>" not in request.prompt
    assert outcome.summary.startswith("SUMMARY[history]")
    assert "<read-files>\nsrc/part0.py" in outcome.summary and "<modified-files>\nsrc/part1.py" in outcome.summary


def test_second_compaction_updates_the_previous_summary_and_includes_its_kept_messages():
    builder = long_session()
    provider = RecordingProvider()
    first = run(builder.entries, provider, keep_recent_tokens=3000)
    kept_first = build_context(with_pending(builder.entries, first.entries)).messages[1]
    for obj in first.entries:
        builder.add(obj)
    builder.turn("request 99: one more thing", steps=1, output_chars=200)
    second = run(builder.entries, provider, keep_recent_tokens=300)
    request = next(r for r in reversed(provider.requests) if r.purpose == "history")
    previous = request.prompt.split("<previous-summary>\n")[1].split("\n</previous-summary>")[0]
    assert previous.startswith("SUMMARY[history]") and "<read-files>" not in previous  # our file tags are regenerated
    assert "Keep everything the previous notes say" in request.prompt
    # pi summarizes only from the entry after the previous compaction; its kept messages would vanish.
    kept_text = next(b["text"] for b in kept_first["content"] if b["type"] == "text")
    assert kept_text in request.prompt
    assert second.summary.count("<read-files>") == 1
    assert set(first.read_files) | set(first.modified_files) <= set(second.read_files) | set(second.modified_files)


def test_a_cut_inside_one_long_turn_summarizes_its_beginning_separately():
    builder = PathBuilder()
    builder.turn("small first request", steps=1, output_chars=100)
    builder.turn("one huge turn", steps=12, output_chars=2000)
    provider = RecordingProvider()
    outcome = run(builder.entries, provider, keep_recent_tokens=3000, reserve_tokens=10000)
    purposes = sorted(r.purpose for r in provider.requests)
    assert purposes == ["history", "turnPrefix"]
    prefix_request = next(r for r in provider.requests if r.purpose == "turnPrefix")
    assert prefix_request.max_tokens == 5000  # 0.5 x reserve
    assert "[User]: one huge turn" in prefix_request.prompt
    assert SPLIT_TURN_HEADING in outcome.summary and "SUMMARY[turnPrefix]" in outcome.summary
    kept_first = next(e for e in builder.entries if e.id == outcome.first_kept_entry_id)
    assert kept_first.role() == "assistant"


def test_nothing_to_compact_when_everything_fits_or_the_leaf_is_a_compaction():
    builder = long_session(turns=1, output_chars=100)
    with pytest.raises(NothingToCompact):
        run(builder.entries, RecordingProvider(), keep_recent_tokens=20000)
    builder = long_session()
    outcome = run(builder.entries, RecordingProvider(), keep_recent_tokens=1000)
    for obj in outcome.entries:
        builder.add(obj)
    with pytest.raises(NothingToCompact, match="compaction already"):
        run(builder.entries, RecordingProvider(), keep_recent_tokens=1000)


def test_old_tool_outputs_are_pruned_in_the_context_but_kept_in_the_entries():
    builder = PathBuilder()
    for number in range(8):  # per turn: 5k tokens of request, two outputs of 10k tokens
        builder.turn(f"request {number} " + "x" * 20000, steps=2, output_chars=40000, tool="read", path=f"f{number}")
    outcome = run(builder.entries, RecordingProvider(), keep_recent_tokens=60000)
    prune = outcome.entries[0]
    assert prune["type"] == "custom" and prune["customType"] == PRUNE_CUSTOM_TYPE
    pruned = prune["data"]["toolResultIds"]
    assert prune["data"]["tokensFreed"] >= 20000
    newest_results = [e.id for e in builder.entries if e.role() == "toolResult"][-4:]
    assert not set(newest_results) & set(pruned)  # the newest 40k tokens of output are protected
    after = build_context(with_pending(builder.entries, outcome.entries))
    shown = {i: m for i, m in zip(after.entry_ids, after.messages)}
    kept_pruned = [i for i in pruned if i in shown]
    assert kept_pruned, "some pruned outputs are in the kept part"
    for entry_id in kept_pruned:
        assert "pruned to save context" in shown[entry_id]["content"][0]["text"]
        original = next(e for e in builder.entries if e.id == entry_id).obj()["message"]
        assert len(original["content"][0]["text"]) == 40000
    assert outcome.tokens_after < outcome.tokens_before


def test_pruning_that_frees_too_little_is_skipped():
    builder = long_session(turns=3, output_chars=4000)
    outcome = run(builder.entries, RecordingProvider(), keep_recent_tokens=1000)
    assert [e["type"] for e in outcome.entries] == ["compaction"]


def test_initial_instructions_are_placed_back_into_every_summary():
    builder = PathBuilder()
    builder.add({"type": "session_init", "systemPrompt": "Always answer in French.", "task": "Port the parser"})
    builder.add(
        {
            "type": "custom_message",
            "customType": "agents-md",
            "content": "Rule: run ruff before commits.",
            "display": False,
        }
    )
    for number in range(5):
        builder.turn(f"request {number}", steps=2, output_chars=3000)
    first = run(builder.entries, RecordingProvider(), keep_recent_tokens=2000)
    assert "<initial-context>" in first.summary
    assert "Always answer in French." in first.summary and "Rule: run ruff before commits." in first.summary
    for obj in first.entries:
        builder.add(obj)
    builder.turn("request later", steps=3, output_chars=3000)
    provider = RecordingProvider()
    second = run(builder.entries, provider, keep_recent_tokens=2000)
    assert second.summary.count("Rule: run ruff before commits.") == 1
    assert "<initial-context>" not in provider.requests[0].prompt.split("<previous-summary>")[1]


def test_an_overflowing_request_steps_down_instead_of_failing():
    builder = long_session(turns=10, output_chars=3000)
    provider = RecordingProvider(overflow_above=6000)
    outcome = run(builder.entries, provider, keep_recent_tokens=1000)
    assert outcome.stages[0] in STAGES[1:]
    history = [r for r in provider.requests if r.purpose == "history"]
    assert [len(r.prompt) > 6000 for r in history] == [True] * (len(history) - 1) + [False]
    # With the window known, the first request already fits.
    provider = RecordingProvider()
    outcome = run(builder.entries, provider, keep_recent_tokens=1000, context_window=4000, reserve_tokens=1000)
    history = [r for r in provider.requests if r.purpose == "history"]
    assert len(history) == 1 and outcome.stages[0] != "full"
    assert len(history[0].prompt) / 4 < 4000


def test_fit_stages_shrink_the_transcript_in_order():
    builder = long_session(turns=6, output_chars=3000)
    messages = build_context(builder.entries).messages
    sizes = [fit_conversation(messages, None, stage).tokens for stage in range(len(STAGES))]
    assert sizes[0] > sizes[1] and sizes[0] > sizes[2] > sizes[3]
    assert "(output omitted)" in fit_conversation(messages, None, 2).text
    assert "earlier messages omitted" in fit_conversation(messages, 500, 3).text


def test_progress_reports_every_phase_and_a_cancel_stops_before_writing():
    builder = long_session()
    work = RecordingWork()
    run(builder.entries, RecordingProvider(), work, keep_recent_tokens=1000)
    phases = [message.split(":")[0] for message, _ in work.reports]
    assert phases[:3] == ["preparing", "pruning", "summarizing"]
    cancelling = RecordingWork(cancel_at="summarizing")
    with pytest.raises(RequestCancelled):
        run(builder.entries, RecordingProvider(), cancelling, keep_recent_tokens=1000)


def test_preparation_rejects_nothing_and_reports_tokens_before():
    builder = long_session()
    prep = prepare_compaction(builder.entries, 1000)
    assert prep.tokens_before > 0 and prep.history and prep.first_kept_entry_id
