"""Random session histories for the property and parity tests.

``operations()`` draws a list of steps (appends of every entry kind, branches,
leaf resets, labels, names, forks); ``play`` runs them through the service.
Targets are drawn as integers and taken modulo the entries that exist when the
step runs, so every drawn history is valid.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from session_builders import append_as_another_agent, assistant, bash_execution, tool_call_assistant, tool_result, user

from sidecar import wire
from sidecar.errors import InvalidParams
from sidecar.service import SessionService

# Text with the characters that tend to break codecs: quotes, backslashes,
# newlines, non-ASCII, astral emoji and a lone surrogate (as a cut emoji leaves).
_SPICE = st.sampled_from(['"', "\\", "\n", "é", "中", "😀", "\ud83d", "\u2028", "</summary>", "``` "])
TEXT = st.lists(st.one_of(st.text(alphabet="abc xyz", max_size=6), _SPICE), max_size=4).map("".join)

_KINDS = [
    "user",
    "assistant",
    "assistant_error",
    "tool_call",
    "tool_result",
    "bash",
    "bash_excluded",
    "thinking",
    "model_change",
    "compaction",
    "branch_summary",
    "custom_message",
    "custom_message_blocks",
    "custom",
    "unknown",
    "session_info",
]

_STEP_PARAMS = {
    "append": st.tuples(st.just("append"), st.sampled_from(_KINDS), TEXT, st.integers(0, 10_000)),
    "branch": st.tuples(st.just("branch"), st.integers(0, 10_000)),
    "reset": st.tuples(st.just("reset")),
    "label": st.tuples(st.just("label"), st.integers(0, 10_000), st.one_of(st.none(), st.just(""), TEXT)),
    "fork": st.tuples(st.just("fork"), st.integers(0, 10_000)),
}
# Appends are most of a real history: six shares in ten.
_step = st.sampled_from(["append"] * 6 + ["branch", "reset", "label", "fork"]).flatmap(_STEP_PARAMS.__getitem__)


def operations(min_size: int = 10, max_size: int = 60) -> st.SearchStrategy[list[tuple]]:
    return st.lists(_step, min_size=min_size, max_size=max_size)


def entry_for(kind: str, text: str, pick: int, ids: list[str]) -> dict[str, Any]:
    """One entry of ``kind`` to append; ``pick`` chooses any id it refers to."""
    some_id = ids[pick % len(ids)] if ids else "nothing"
    if kind == "user":
        return {"type": "message", "message": user(text, timestamp=pick)}
    if kind == "assistant":
        return {"type": "message", "message": assistant(text, provider=f"p{pick % 3}", model=f"m{pick % 5}")}
    if kind == "assistant_error":
        return {
            "type": "message",
            "message": assistant(text, provider="err", model="e", stopReason="error", errorMessage=text),
        }
    if kind == "tool_call":
        return {"type": "message", "message": tool_call_assistant(f"call{pick}")}
    if kind == "tool_result":
        return {"type": "message", "message": tool_result(f"call{pick}", text)}
    if kind in ("bash", "bash_excluded"):
        extra = {"excludeFromContext": True} if kind == "bash_excluded" else {}
        return {
            "type": "message",
            "message": bash_execution(
                text or "true",
                text,
                exit_code=pick % 3,
                cancelled=pick % 7 == 0,
                truncated=pick % 5 == 0,
                fullOutputPath="/tmp/o",
                **extra,
            ),
        }
    if kind == "thinking":
        return {"type": "thinking_level_change", "thinkingLevel": ["off", "low", "high"][pick % 3]}
    if kind == "model_change":
        return {"type": "model_change", "provider": f"mp{pick % 2}", "modelId": f"mm{pick % 4}"}
    if kind == "compaction":
        kept = some_id if pick % 4 else "not-an-entry"
        return {"type": "compaction", "summary": text or "summary", "firstKeptEntryId": kept, "tokensBefore": pick}
    if kind == "branch_summary":
        return {"type": "branch_summary", "fromId": some_id, "summary": text if pick % 3 else ""}
    if kind == "custom_message":
        return {"type": "custom_message", "customType": "ext", "content": text, "display": pick % 2 == 0}
    if kind == "custom_message_blocks":
        return {
            "type": "custom_message",
            "customType": "ext",
            "content": [{"type": "text", "text": text}],
            "display": True,
            "details": {"n": pick},
        }
    if kind == "custom":
        return {"type": "custom", "customType": "state", "data": {"text": text}}
    if kind == "unknown":
        return {"type": "from_a_newer_agent", "payload": {"text": text, "n": pick}}
    if kind == "session_info":
        return {"type": "session_info", "name": text if pick % 3 else ""}
    raise AssertionError(kind)


def play(
    svc: SessionService, session_id: str, steps: list[tuple], fork_points: dict[str, str] | None = None
) -> list[str]:
    """Run ``steps`` on a session; returns the ids of the sessions forked on the way.

    ``fork_points``, when given, gets each fork's session id -> the entry it was forked at.
    """
    forks: list[str] = []
    for step in steps:
        session = svc.session(session_id)
        ids = [e.id for e in session.tree.entries]
        op = step[0]
        if op == "append":
            _, kind, text, pick = step
            obj = entry_for(kind, text, pick, ids)
            if kind == "unknown":  # refused by session/append: written as a newer agent would
                append_as_another_agent(svc, session_id, obj)
            else:
                svc.append(wire.AppendParams(sessionId=session_id, entries=[obj]))
        elif op == "branch" and ids:
            svc.branch(wire.BranchParams(sessionId=session_id, entryId=ids[step[1] % len(ids)]))
        elif op == "reset":
            svc.branch(wire.BranchParams(sessionId=session_id, entryId=None))
        elif op == "label" and ids:
            svc.set_label(wire.SetLabelParams(sessionId=session_id, entryId=ids[step[1] % len(ids)], label=step[2]))
        elif op == "fork" and ids:
            try:
                at = ids[step[1] % len(ids)]
                forks.append(svc.fork(wire.ForkParams(sessionId=session_id, entryId=at)).sessionId)
                if fork_points is not None:
                    fork_points[forks[-1]] = at
            except InvalidParams:
                pass  # a tool result or bash execution: not a place to fork from
    return forks


def start(svc: SessionService) -> str:
    """A session that already has a file (a user and an assistant message)."""
    session_id = svc.create(wire.CreateParams(cwd="/work/random")).sessionId
    svc.append(
        wire.AppendParams(
            sessionId=session_id,
            entries=[
                {"type": "message", "message": user("start")},
                {"type": "message", "message": assistant("ok")},
            ],
        )
    )
    return session_id
