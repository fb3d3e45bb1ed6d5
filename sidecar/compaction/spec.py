"""Compaction of a spec session: the spec's algorithm, prompts and flat serialization (section 7.5).

The coordinator's sharing of runs, cancellation and autoCompact stay as they
are; only the run differs: one summary of the messages before the cut (the
update prompt when a compaction exists), the file tags appended, and one
compaction entry written, which the spec writer appends as a record.
"""

from __future__ import annotations

import time

from ..context.build import build_context
from ..context.tokens import context_tokens
from ..errors import NothingToCompact
from ..providers.base import Provider, SummaryRequest
from ..providers.offline import summarize_offline
from ..store import Session
from ..store.spec import SYSTEM_PROMPT, build_prompt, file_tags, plan, serialize, strip_file_tags
from ..work import Work
from .coordinator import CompactionRecord, Compactor, _close
from .prepare import with_pending
from .progress import check_cancelled
from .run import CompactionOptions, CompactionOutcome


class SpecCompactor(Compactor):
    async def _compact(
        self,
        session: Session,
        leaf_id: str | None,
        explicit: bool,
        options: CompactionOptions,
        provider: Provider,
        work: Work,
    ) -> CompactionRecord:
        started = time.monotonic()
        try:
            path = session.path_to(leaf_id)
            work.report("preparing", 0)
            if path and path[-1].type == "compaction":
                raise NothingToCompact(
                    f"the leaf is a compaction already ({path[-1].id}): nothing was added since it, so another "
                    "would summarize the same span again. Append first, or read that compaction with session/getEntries",
                    entryId=path[-1].id,
                    reason="leafIsCompaction",
                )
            found = plan(path, options.keep_recent_tokens)
            if found is None:
                raise NothingToCompact(
                    f"nothing to compact in session {session.id}: the messages since the last compaction fit in "
                    f"keepRecentTokens ({options.keep_recent_tokens}) or cannot be cut without splitting a tool call",
                    sessionId=session.id,
                    reason="withinKeepRecentTokens",
                )
            previous = strip_file_tags(found.previous_summary) if found.previous_summary is not None else None
            request = SummaryRequest(
                system_prompt=SYSTEM_PROMPT,
                prompt=build_prompt(serialize(found.summarized), previous, options.custom_instructions),
                max_tokens=int(0.8 * options.reserve_tokens),
                model=options.model,
                messages=found.summarized,
                previous_summary=previous,
                custom_instructions=options.custom_instructions,
            )
            work.report("summarizing", 20)
            response = await provider.summarize(request, lambda _delta: None)
            text, model = response.text.strip(), response.model
            fallback: dict[str, object] | None = None
            if not text:  # never a compaction without a summary; the result says whose it is
                text = summarize_offline(request).strip()
                fallback = {
                    "provider": provider.name,
                    "model": model,
                    "reason": "empty",
                    "summaries": ["history"],
                    "usedProvider": "offline",
                }
        finally:
            await _close(provider)
        tags = file_tags(found.read_files, found.modified_files)
        summary = f"{text}\n\n{tags}" if tags else text
        entry: dict[str, object] = {
            "type": "compaction",
            "summary": summary,
            "firstKeptEntryId": found.first_kept_id,
            "tokensBefore": found.tokens_before,
            "details": {"readFiles": found.read_files, "modifiedFiles": found.modified_files},
        }
        # (No size check here: the spec's algorithm and its scenarios compact a small chain too.)
        after = build_context(with_pending(path, [entry]))
        tokens_after = context_tokens(after.messages, after.after_compaction)
        work.report("writing", 95)
        check_cancelled(work, "writing")
        parent = self._placement(session, leaf_id, explicit)
        written = session.append([entry], parent)
        outcome = CompactionOutcome(
            entries=[entry],
            summary=summary,
            first_kept_entry_id=found.first_kept_id,
            tokens_before=found.tokens_before,
            tokens_after=tokens_after,
            read_files=found.read_files,
            modified_files=found.modified_files,
            provider=provider.name,
            model=model,
            fallback=fallback,
        )
        record = CompactionRecord(written[-1].id, outcome, int((time.monotonic() - started) * 1000))  # type: ignore[arg-type]  # a written entry has an id (Entry.id is Optional for the header)
        work.report("compacted", 100)
        return record
