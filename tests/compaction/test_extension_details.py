"""Compactions and branch summaries pi wrote from our pi extension (``fromHook``, our details).

pi marks every compaction an extension hands it ``fromHook: true``. The extension
(clients/pi-extension) compacts a scratch copy of pi's session in a sidecar and gives
pi the sidecar's ``details`` with the ``session-sidecar`` mark; the next compaction of
pi's file must read that carry-over, or a constraint the first one kept is lost.
Foreign hook details (no mark) are still not read: their format is unknown.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from sidecar import wire
from sidecar.compaction.files import OWN_DETAILS_MARK
from sidecar.config import Settings, apply_overrides
from sidecar.service import SessionService

from .factory import PathBuilder

CONSTRAINT = "Never touch the files under vendor/, they are generated."
FIRST_REQUEST = f"Port the parser to the new tokenizer. {CONSTRAINT}"


def make_service(root: Path) -> SessionService:
    settings = apply_overrides(Settings(), {"providers": {"default": "offline", "maxRetries": 0}}, "test")
    return SessionService(root, settings)


def work(builder: PathBuilder, first: int, turns: int) -> None:
    for number in range(first, first + turns):
        builder.turn(
            f"step {number}: tidy module {number}", steps=2, output_chars=3000, tool="edit", path=f"m{number}.py"
        )


def as_appended(entries: list[Any]) -> list[dict[str, Any]]:
    """Entries with their ids kept, as the extension's scratch copy holds pi's ids."""
    return [e.obj() for e in entries]


def compact(service: SessionService, session_id: str) -> wire.CompactResult:
    params = wire.CompactParams(sessionId=session_id, keepRecentTokens=1500)
    return asyncio.run(service.compact(params))


def pi_compaction_from_hook(result: wire.CompactResult, details: dict[str, Any], parent: str) -> dict[str, Any]:
    """The entry pi appends for ``{compaction: {summary, firstKeptEntryId, tokensBefore, details}}``."""
    return {
        "type": "compaction",
        "id": "c0000001",
        "parentId": parent,
        "timestamp": "2025-01-01T01:00:00.000Z",
        "summary": result.summary,
        "firstKeptEntryId": result.firstKeptEntryId,
        "tokensBefore": result.tokensBefore,
        "details": details,
        "fromHook": True,
    }


def second_compaction_summary(root: Path, marked: bool) -> tuple[str, dict[str, Any]]:
    """Two compactions of one pi file, the first done as the extension does it; the second's summary."""
    service = make_service(root)
    builder = PathBuilder()
    builder.user(FIRST_REQUEST)
    builder.assistant("Starting with the lexer.")
    work(builder, 0, 5)
    # The extension's scratch copy: pi's entries, compacted by the sidecar there.
    scratch = service.create(wire.CreateParams(cwd="/work/scratch")).sessionId
    service.append(wire.AppendParams(sessionId=scratch, entries=as_appended(builder.entries)))
    first = compact(service, scratch)
    assert CONSTRAINT in first.summary  # the carry-over quotes it
    written = service.get_entries(wire.GetEntriesParams(sessionId=scratch, ids=[first.entryId])).entries[0]
    details = dict(written["details"])
    if marked:
        details[OWN_DETAILS_MARK] = {"version": 1}
    # pi's own file: its entries, then the compaction pi writes from the hook's answer, then more work.
    pi_session = service.create(wire.CreateParams(cwd="/work/proj"))
    builder.add(pi_compaction_from_hook(first, details, builder.entries[-1].id))
    work(builder, 5, 6)
    service.append(wire.AppendParams(sessionId=pi_session.sessionId, entries=as_appended(builder.entries)))
    stored = service.get_entries(wire.GetEntriesParams(sessionId=pi_session.sessionId)).entries
    assert [e["id"] for e in stored if e["type"] == "compaction" and e.get("fromHook") is True] == ["c0000001"]
    second = compact(service, pi_session.sessionId)
    entry = service.get_entries(wire.GetEntriesParams(sessionId=pi_session.sessionId, ids=[second.entryId])).entries
    return second.summary, entry[0]["details"]


def test_a_second_compaction_keeps_the_constraint_the_extensions_first_one_carried(sessions_root):
    summary, details = second_compaction_summary(sessions_root, marked=True)
    assert CONSTRAINT in summary
    carried = json.dumps(details["carryOver"])
    assert CONSTRAINT in carried
    # The file lists are cumulative across the hook's compaction too.
    assert "m0.py" in details["modifiedFiles"] and "m9.py" in details["modifiedFiles"]


def test_foreign_hook_details_are_still_not_read(sessions_root):
    summary, details = second_compaction_summary(sessions_root, marked=False)
    # Without our mark the first compaction's carry-over is unknown data: the constraint,
    # said only in messages that compaction replaced, is not carried.
    assert CONSTRAINT not in json.dumps(details["carryOver"])
    assert "m0.py" not in details["modifiedFiles"] and "m9.py" in details["modifiedFiles"]


def test_a_branch_summary_reads_the_file_lists_of_a_marked_hook_summary(sessions_root):
    service = make_service(sessions_root)
    session = service.create(wire.CreateParams(cwd="/work/proj"))
    builder = PathBuilder()
    builder.user("Start here.")
    fork_point = builder.assistant("Ready.")[0]
    marked = {"readFiles": ["docs/spec.md"], "modifiedFiles": ["src/kept.py"], OWN_DETAILS_MARK: {"version": 1}}
    foreign = {"readFiles": ["foreign/read.md"], "modifiedFiles": ["foreign/changed.py"]}
    for number, details in enumerate((marked, foreign)):
        summary = {"type": "branch_summary", "fromId": fork_point.id, "summary": f"nested {number}"}
        builder.add({**summary, "details": details, "fromHook": True})
    builder.user("Go on along this branch.")
    builder.assistant("Going on.")
    service.append(wire.AppendParams(sessionId=session.sessionId, entries=as_appended(builder.entries)))
    result = service.branch(wire.BranchParams(sessionId=session.sessionId, entryId=fork_point.id, summarize=True))
    assert result.summaryEntryId is not None
    entry = service.get_entries(wire.GetEntriesParams(sessionId=session.sessionId, ids=[result.summaryEntryId]))
    details = entry.entries[0]["details"]
    assert "src/kept.py" in details["modifiedFiles"] and "docs/spec.md" in details["readFiles"]
    assert "foreign/changed.py" not in details["modifiedFiles"] and "foreign/read.md" not in details["readFiles"]
