"""Where the Codex import looks for a rollout's subagents: the day folders its parent ran on, not every rollout.

Codex files a rollout under the day it began (``sessions/YYYY/MM/DD``) and a subagent begins
while its parent runs, so a sessions folder of years of rollouts is read only around the parent:
its own day folder to the day of its last line, a day more on either side for the time zone.
"""

from __future__ import annotations

import json
from pathlib import Path

from .importing import request
from .test_record_kinds import write_lines

PARENT = "0199aaaa-0000-7000-8000-000000000001"


def rollout(root: Path, day: str, thread: str, lines: list[tuple[str, str, dict]], parent: str | None = None) -> Path:
    """A rollout begun on ``day`` (YYYY-MM-DD); ``lines``: (time, type, payload) after its session_meta."""
    year, month, mday = day.split("-")
    meta = {"id": thread, "cwd": "/work/sub", "timestamp": f"{day}T10:00:00.000Z", "model_provider": "openai"}
    if parent is not None:
        meta["parent_thread_id"] = parent
        meta["source"] = {"subagent": {"thread_spawn": {"parent_thread_id": parent, "depth": 1}}}
    return write_lines(
        root / year / month / mday / f"rollout-{day}T10-00-00-{thread}.jsonl",
        [
            {"timestamp": f"{day}T10:00:00.000Z", "type": "session_meta", "payload": meta},
            *({"timestamp": stamp, "type": kind, "payload": payload} for stamp, kind, payload in lines),
        ],
    )


def said(text: str, role: str = "user") -> dict:
    kind = "input_text" if role == "user" else "output_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def test_subagents_are_looked_for_in_the_days_the_parent_ran(tmp_path):
    sessions = tmp_path / "src" / "sessions"
    # The parent begins late on 1 March and ends after midnight (UTC): its subagents begin on either day.
    parent = rollout(
        sessions,
        "2026-03-01",
        PARENT,
        [
            ("2026-03-01T23:59:00.000Z", "response_item", said("start two helpers")),
            ("2026-03-02T00:30:00.000Z", "response_item", said("both done", "assistant")),
        ],
    )
    rollout(
        sessions,
        "2026-03-01",
        "0199aaaa-0000-7000-8000-00000000000a",
        [("2026-03-01T23:59:30.000Z", "response_item", said("first helper's task"))],
        parent=PARENT,
    )
    rollout(
        sessions,
        "2026-03-02",
        "0199aaaa-0000-7000-8000-00000000000b",
        [("2026-03-02T00:10:00.000Z", "response_item", said("second helper's task"))],
        parent=PARENT,
    )
    # Rollouts a month earlier and a month later (say that they are its subagents, as no real one could:
    # they began while the parent was not running). They lie outside the days searched and are never read.
    for day, thread in (
        ("2026-02-01", "0199aaaa-0000-7000-8000-0000000000f1"),
        ("2026-04-01", "0199aaaa-0000-7000-8000-0000000000f2"),
    ):
        rollout(sessions, day, thread, [(f"{day}T10:00:01.000Z", "response_item", said("elsewhere"))], parent=PARENT)
    # and many unrelated rollouts of other days, as years of use gather
    for month in range(4, 13):
        for mday in (1, 15):
            rollout(
                sessions,
                f"2025-{month:02d}-{mday:02d}",
                f"0199aaaa-0000-7000-8000-0000{month:04d}{mday:04d}",
                [(f"2025-{month:02d}-{mday:02d}T10:00:01.000Z", "response_item", said("old work"))],
            )

    result = request(tmp_path / "root", "session/import", {"tool": "codex", "paths": [str(parent)]})
    (session,) = result["sessions"]
    assert [Path(p).name for p in session["subagents"]] == [
        "rollout-2026-03-01T10-00-00-0199aaaa-0000-7000-8000-00000000000a.jsonl",
        "rollout-2026-03-02T10-00-00-0199aaaa-0000-7000-8000-00000000000b.jsonl",
    ]
    lines = [json.loads(line) for line in Path(session["path"]).read_text().splitlines()]
    texts = [
        block.get("text")
        for line in lines
        if line.get("type") == "message"
        for block in line["message"]["content"]
        if isinstance(block, dict)
    ]
    assert "first helper's task" in texts and "second helper's task" in texts
    assert "elsewhere" not in texts


def test_a_rollout_outside_the_day_folders_has_its_whole_tree_searched(tmp_path):
    # Files gathered by hand into one folder (no YYYY/MM/DD): every rollout below it is a candidate.
    folder = tmp_path / "src" / "sessions" / "copied"
    parent = write_lines(
        folder / f"rollout-2026-03-01T10-00-00-{PARENT}.jsonl",
        [
            {
                "timestamp": "2026-03-01T10:00:00.000Z",
                "type": "session_meta",
                "payload": {"id": PARENT, "cwd": "/work/sub", "timestamp": "2026-03-01T10:00:00.000Z"},
            },
            {"timestamp": "2026-03-01T10:00:01.000Z", "type": "response_item", "payload": said("go")},
        ],
    )
    child = "0199aaaa-0000-7000-8000-00000000000c"
    write_lines(
        folder / "later" / f"rollout-2026-05-01T10-00-00-{child}.jsonl",
        [
            {
                "timestamp": "2026-05-01T10:00:00.000Z",
                "type": "session_meta",
                "payload": {"id": child, "parent_thread_id": PARENT, "timestamp": "2026-05-01T10:00:00.000Z"},
            },
            {"timestamp": "2026-05-01T10:00:01.000Z", "type": "response_item", "payload": said("helper")},
        ],
    )
    result = request(tmp_path / "root", "session/import", {"tool": "codex", "paths": [str(parent)]})
    (session,) = result["sessions"]
    assert [Path(p).name for p in session["subagents"]] == [f"rollout-2026-05-01T10-00-00-{child}.jsonl"]
