"""oh-my-pi 18.3's picker and continueRecent pass over empty untitled sessions (listing.py's is_stub).

Written by hand from @oh-my-pi/pi-coding-agent 18.3.4's sources (``npm pack``; 18.3.4 cannot run here, see
tests/context/test_omp_183_shapes.py): src/session/session-listing.ts ``isEmptySession`` (no assistant turn,
no title, no first prompt, a "pending" or "unknown" status) used by ``filterSessionsForPicker`` and
``findMostRecentNonEmptySession``, and src/session/session-manager.ts ``SessionManager.continueRecent``
(the terminal's breadcrumb is taken first, whatever it holds). Under pi's compatibility nothing is skipped.
"""

from __future__ import annotations

import os
from pathlib import Path

from session_builders import (
    assistant,
    entry,
    header,
    message,
    service,
    tool_call_assistant,
    tool_result,
    user,
    write_session,
)

from sidecar import wire
from sidecar.format.titleslot import slot_line


def _write(root: Path, sid: str, entries: list[dict], age_s: int, slot: str | None = None, **head) -> Path:
    path = root / "--work-proj--" / f"2025-01-0{9 - age_s // 100}T00-00-00-000Z_{sid}.jsonl"
    write_session(path, header(sid, cwd="/work/proj", **head), entries)
    if slot is not None:
        path.write_bytes(slot_line(slot, "2025-01-01T00:00:00.000Z", None) + b"\n" + path.read_bytes())
    moment = 1_700_000_000 - age_s
    os.utime(path, (moment, moment))
    return path


def _sessions(root: Path) -> None:
    """Newest first: four stubs, then sessions worth resuming."""
    _write(root, "header-only", [], 0, slot="")
    _write(
        root,
        "custom-only",
        [entry("custom_message", "c1", None, 1, customType="ext", content="note", display=True)],
        10,
    )
    _write(
        root,
        "image-prompt",
        [
            message(
                "u1",
                None,
                {
                    "role": "user",
                    "timestamp": 1,
                    "content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}],
                },
            )
        ],
        20,
    )  # a prompt with no text
    _write(root, "blank-title", [], 30, slot="   ")
    _write(root, "titled", [], 100, slot="Named, never answered")
    _write(root, "header-titled", [], 110, title="Named in the header")
    _write(root, "asked", [message("u1", None, user("an unanswered question"))], 120)
    _write(root, "tool-last", [message("r1", None, tool_result("c9"))], 130)  # status "interrupted"
    _write(root, "answered", [message("a1", None, assistant(""))], 140)  # an assistant turn, however empty


STUBS = {"header-only", "custom-only", "image-prompt", "blank-title"}
KEPT = ["titled", "header-titled", "asked", "tool-last", "answered"]


def test_under_omp_the_listing_leaves_out_stubs_and_continue_recent_takes_the_newest_other(tmp_path):
    root = tmp_path / ".omp" / "agent" / "sessions"
    _sessions(root)
    svc = service(root)
    listed = [s.sessionId for s in svc.list(wire.ListParams(cwd="/work/proj")).sessions]
    assert sorted(listed) == sorted(KEPT)
    recent = svc.continue_recent(wire.ContinueRecentParams(cwd="/work/proj"))
    assert recent is not None and recent.sessionId == "titled"
    svc.close_all()


def test_a_stub_answered_later_lists_again(tmp_path):
    root = tmp_path / ".omp" / "agent" / "sessions"
    _sessions(root)
    svc = service(root)
    svc.open(wire.OpenParams(sessionId="custom-only"))
    svc.append(wire.AppendParams(sessionId="custom-only", entries=[{"type": "message", "message": user("now asked")}]))
    listed = {s.sessionId for s in svc.list(wire.ListParams(cwd="/work/proj")).sessions}
    assert "custom-only" in listed and "header-only" not in listed
    svc.close_all()


def test_the_terminals_own_session_wins_even_when_it_is_a_stub(tmp_path):
    root = tmp_path / ".omp" / "agent" / "sessions"
    _sessions(root)
    svc = service(root)
    svc.open(wire.OpenParams(sessionId="header-only", terminalId="tty-1"))
    svc.close_all()
    again = service(root)
    assert (
        again.continue_recent(wire.ContinueRecentParams(cwd="/work/proj", terminalId="tty-1")).sessionId
        == "header-only"
    )
    assert again.continue_recent(wire.ContinueRecentParams(cwd="/work/proj", terminalId="tty-2")).sessionId == "titled"
    again.close_all()


def test_under_pi_nothing_is_skipped(sessions_root):
    _sessions(sessions_root)
    svc = service(sessions_root)
    listed = {s.sessionId for s in svc.list(wire.ListParams(cwd="/work/proj")).sessions}
    assert listed == STUBS | set(KEPT)
    assert svc.continue_recent(wire.ContinueRecentParams(cwd="/work/proj")).sessionId == "header-only"
    svc.close_all()


def test_a_tool_call_turn_counts_as_an_assistant_turn(tmp_path):
    root = tmp_path / ".omp" / "agent" / "sessions"
    _write(root, "called", [message("a1", None, tool_call_assistant("c1"))], 0)
    assert [s.sessionId for s in service(root).list(wire.ListParams(all=True)).sessions] == ["called"]
