"""One compaction, from a root -> leaf path to the entries that record it.

Nothing here writes: the caller appends ``CompactionOutcome.entries`` in one
write after the last cancellation check, so a cancelled or failed run
leaves the session file exactly as it was.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import TypeVar

from ..context.build import SessionContext, build_context, js_time
from ..context.tokens import context_tokens, estimate_tokens
from ..errors import CompactionNotSmaller, ContextOverflow
from ..format.jsonl import Entry
from ..providers.base import Provider, SummaryRequest
from ..providers.offline import summarize_offline
from ..store import iso_now
from . import carryover
from .files import format_file_lists
from .fit import STAGES, first_fitting_stage, fit_conversation
from .prepare import Preparation, prepare_compaction, with_pending
from .progress import NO_WORK, Work, check_cancelled
from .prompts import (
    INITIAL_INSTRUCTIONS,
    SYSTEM_PROMPT,
    TURN_PREFIX_INSTRUCTIONS,
    UPDATE_INSTRUCTIONS,
    build_prompt,
    initial_context_block,
    merge_split_turn,
    with_custom_instructions,
)
from .quality import unusable_reason

T = TypeVar("T")
HISTORY_OUTPUT_SHARE = 0.8  # of reserveTokens, for the main summary
TURN_PREFIX_OUTPUT_SHARE = 0.5  # of reserveTokens, for a split turn's beginning
_REPORT_INTERVAL = 0.1
_CANCEL_POLL = 0.05


@dataclass(slots=True)
class CompactionOptions:
    keep_recent_tokens: int = 20000
    reserve_tokens: int = 16384
    context_window: int | None = None
    custom_instructions: str | None = None
    model: str | None = None
    prune: bool = True
    # The carry-over's budgets (sidecar.compaction.carryover): verbatim user messages, and the whole block.
    carry_over_user_tokens: int = carryover.USER_TOKENS
    carry_over_max_tokens: int = carryover.MAX_TOKENS
    # The provider's own compaction item the client got for this span (sidecar.context.native), to record.
    native: dict[str, object] | None = None


@dataclass(slots=True)
class CompactionOutcome:
    entries: list[dict[str, object]]  # to append, in order; the last one is the compaction
    summary: str
    first_kept_entry_id: str
    tokens_before: int
    tokens_after: int
    read_files: list[str]
    modified_files: list[str]
    provider: str
    model: str
    stages: list[str] = field(default_factory=list)
    pruned_tool_results: int = 0
    # Set when the provider's answer was empty or garbage and the offline summary took its place.
    fallback: dict[str, object] | None = None


@dataclass(slots=True)
class SummaryPart:
    text: str
    model: str
    stage: str
    fallback_reason: str | None = None  # why the provider's answer was replaced by the offline summary


class StreamMeter:
    """Counts streamed output across the parallel summaries and reports it, throttled."""

    def __init__(self, progress: Work, max_tokens: int) -> None:
        self.progress = progress
        self.max_tokens = max(1, max_tokens)
        self.chars: dict[str, int] = {}
        self._last_report = 0.0

    def on_text(self, key: str):
        def receive(delta: str) -> None:
            check_cancelled(self.progress, "summarizing")
            self.chars[key] = self.chars.get(key, 0) + len(delta)
            now = time.monotonic()
            if now - self._last_report >= _REPORT_INTERVAL:
                self._last_report = now
                tokens = math.ceil(sum(self.chars.values()) / 4)
                self.progress.report(f"summarizing: {tokens} tokens", 20 + min(70, 70 * tokens // self.max_tokens))

        return receive

    def on_retry(self, key: str):
        def retry(reason: str, delay: float) -> None:
            self.chars[key] = 0  # the attempt starts over; its partial text is discarded
            self.progress.report(f"summarizing: retrying in {delay:.1f}s ({reason})", None)

        return retry


async def cancellable(awaitable: Awaitable[T], progress: Work) -> T:
    """Await, polling ``progress.cancelled`` so a cancel lands even while no text streams."""
    task = asyncio.ensure_future(awaitable)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=_CANCEL_POLL)
            if done:
                return task.result()
            check_cancelled(progress, "summarizing")
    finally:
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


async def _gather_or_cancel(*awaitables: Awaitable[T]) -> list[T]:
    tasks = [asyncio.ensure_future(a) for a in awaitables]
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def summarize(
    provider: Provider,
    messages: list[dict[str, object]],
    instructions: str,
    purpose: str,
    max_tokens: int,
    options: CompactionOptions,
    meter: StreamMeter,
    previous_summary: str | None = None,
) -> SummaryPart:
    """One summary, stepping down while the request overflows; offline when the answer is unusable."""
    overhead = math.ceil((len(SYSTEM_PROMPT) + len(instructions) + len(previous_summary or "")) / 4) + 64
    budget = None
    if options.context_window is not None:
        budget = max(256, int((options.context_window - max_tokens - overhead) * 0.95))
    stage = first_fitting_stage(messages, budget)
    while True:
        fitted = fit_conversation(messages, budget, stage)
        request = SummaryRequest(
            system_prompt=SYSTEM_PROMPT,
            prompt=build_prompt(fitted.text, instructions, previous_summary),
            max_tokens=max_tokens,
            model=options.model,
            purpose=purpose,  # type: ignore[arg-type]  # purpose is one of SummaryRequest's literals; the callers pass only those
            messages=messages,
            previous_summary=previous_summary,
            custom_instructions=options.custom_instructions,
            user_messages_carried=purpose != "branch",
        )
        try:
            response = await provider.summarize(request, meter.on_text(purpose), meter.on_retry(purpose))
        except ContextOverflow:
            if stage == len(STAGES) - 1:
                raise
            stage += 1
            meter.chars[purpose] = 0
            if budget is None:
                continue  # each stage without a known window already halves or strips
            budget = max(256, budget // 2) if fit_conversation(messages, budget, stage).tokens <= budget else budget
            continue
        reason = unusable_reason(response.text)
        if reason is not None:
            # Never a compaction without a summary: the offline one reads the same messages.
            return SummaryPart(summarize_offline(request).strip(), response.model, STAGES[stage], reason)
        return SummaryPart(response.text.strip(), response.model, STAGES[stage])


async def run_compaction(
    path: list[Entry],
    options: CompactionOptions,
    provider: Provider,
    progress: Work | None = None,
    preparation: Preparation | None = None,
) -> CompactionOutcome:
    progress = progress or NO_WORK
    progress.report("preparing", 0)
    # Preparing a large session takes a while: off the event loop, so progress and cancels flow.
    prep = (
        preparation
        if preparation is not None
        else await asyncio.to_thread(prepare_compaction, path, options.keep_recent_tokens, options.prune)
    )
    check_cancelled(progress, "preparing")
    if prep.prune is not None:
        count = len(prep.prune.tool_result_ids)
        progress.report(f"pruning: {count} old tool outputs, {prep.prune.tokens_freed} tokens freed", 10)
    else:
        progress.report("pruning: nothing worth pruning", 10)
    check_cancelled(progress, "pruning")
    history_tokens = int(HISTORY_OUTPUT_SHARE * options.reserve_tokens)
    prefix_tokens = int(TURN_PREFIX_OUTPUT_SHARE * options.reserve_tokens)
    meter = StreamMeter(progress, history_tokens + (prefix_tokens if prep.turn_prefix else 0))
    progress.report("summarizing", 20)
    instructions = with_custom_instructions(
        UPDATE_INSTRUCTIONS if prep.previous_summary else INITIAL_INSTRUCTIONS, options.custom_instructions
    )
    jobs: list[Awaitable[SummaryPart]] = []
    if prep.history:
        jobs.append(
            summarize(
                provider, prep.history, instructions, "history", history_tokens, options, meter, prep.previous_summary
            )
        )
    if prep.turn_prefix:
        jobs.append(
            summarize(provider, prep.turn_prefix, TURN_PREFIX_INSTRUCTIONS, "turnPrefix", prefix_tokens, options, meter)
        )
    results = await cancellable(_gather_or_cancel(*jobs), progress)
    check_cancelled(progress, "summarizing")
    main = results[0].text if prep.history else (prep.previous_summary or "")
    summary = merge_split_turn(main, results[-1].text) if prep.turn_prefix else main
    read_files, modified_files = prep.file_ops.lists()
    # Digesting many old messages reads every sentence of them: off the event loop.
    summarized = sum(estimate_tokens(m) for m in prep.history) + sum(estimate_tokens(m) for m in prep.turn_prefix)
    user_budget, block_budget = carryover.budgets(
        summarized, options.carry_over_user_tokens, options.carry_over_max_tokens
    )
    carry = await asyncio.to_thread(prep.carry_over.fit, user_budget, block_budget)
    summary = (
        summary.strip()
        + initial_context_block(prep.initial_context)
        + carry.render()
        + format_file_lists(read_files, modified_files)
    )
    details: dict[str, object] = {"readFiles": read_files, "modifiedFiles": modified_files, "carryOver": carry.to_obj()}
    fallback = fallback_details(
        provider.name, results, ["history"] * bool(prep.history) + ["turnPrefix"] * bool(prep.turn_prefix)
    )
    if fallback is not None:
        details["fallback"] = fallback
    compaction: dict[str, object] = {
        "type": "compaction",
        "timestamp": iso_now(),
        "summary": summary,
        "firstKeptEntryId": prep.first_kept_entry_id,
        "tokensBefore": prep.tokens_before,
        "details": details,
    }
    if options.native is not None:
        compaction["native"] = options.native
    if prep.system_message is not None:  # pi 1.5: stamped with the compaction's own time
        compaction["systemMessage"] = {**prep.system_message, "timestamp": js_time(compaction["timestamp"])}
    entries = ([{**prep.prune.entry(), "timestamp": compaction["timestamp"]}] if prep.prune is not None else []) + [
        compaction
    ]
    after = await asyncio.to_thread(build_context, with_pending(path, entries))
    tokens_after = context_tokens(after.messages, after.after_compaction)
    check_smaller(prep.context, after, prep.first_kept_entry_id, prep.tokens_before, tokens_after)
    return CompactionOutcome(
        entries=entries,
        summary=summary,
        first_kept_entry_id=prep.first_kept_entry_id,
        tokens_before=prep.tokens_before,
        tokens_after=tokens_after,
        read_files=read_files,
        modified_files=modified_files,
        provider=provider.name,
        model=results[0].model if results else provider.model_for(options.model),
        stages=[r.stage for r in results],
        pruned_tool_results=len(prep.prune.tool_result_ids) if prep.prune is not None else 0,
        fallback=fallback,
    )


def _head_tokens(context: SessionContext, first_kept_entry_id: str) -> int:
    """The estimated tokens of the messages a context holds before its first kept entry."""
    try:
        end = context.entry_ids.index(first_kept_entry_id)
    except ValueError:
        end = len(context.messages)
    return sum(estimate_tokens(m) for m in context.messages[:end])


def check_smaller(
    before: SessionContext, after: SessionContext, first_kept_entry_id: str, tokens_before: int, tokens_after: int
) -> None:
    """Refuse a compaction that would not shrink the context; called before anything is written.

    What replaces the summarized messages (the summary with its carry-over, initial-context and file
    blocks, and the system message it records) must be smaller than they are, counted alike (chars / 4).
    A small session fails this: the blocks no summarizer may drop can outweigh a few short messages.
    (Not ``tokens_after < tokens_before``: the latter is the usage a model last reported, the former an
    estimate, and a usage under the estimate would refuse a compaction that does shrink the context.)
    """
    summary_tokens = _head_tokens(after, first_kept_entry_id)
    replaced_tokens = _head_tokens(before, first_kept_entry_id)
    if summary_tokens < replaced_tokens:
        return
    raise CompactionNotSmaller(
        f"the compaction would not shrink the context: its summary takes about {summary_tokens} tokens, the "
        f"messages it replaces {replaced_tokens} (context {tokens_before} -> {tokens_after} tokens); nothing was "
        "written. Compact again once the session has grown, or pass a smaller keepRecentTokens so more is summarized",
        summaryTokens=summary_tokens,
        replacedTokens=replaced_tokens,
        tokensBefore=tokens_before,
        tokensAfter=tokens_after,
    )


def fallback_details(provider: str, parts: list[SummaryPart], purposes: list[str]) -> dict[str, object] | None:
    """``details.fallback``: which summaries the offline summarizer wrote, and why; None when none."""
    replaced = [(purpose, part) for purpose, part in zip(purposes, parts) if part.fallback_reason is not None]
    if not replaced:
        return None
    return {
        "provider": provider,
        "model": replaced[0][1].model,
        "reason": replaced[0][1].fallback_reason,
        "summaries": [purpose for purpose, _ in replaced],
        "usedProvider": "offline",
    }
