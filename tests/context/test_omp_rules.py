"""oh-my-pi's context rules (sidecar/context/omp.py): per session by its folder, per call by ``rules``."""

from __future__ import annotations

from pathlib import Path

from session_builders import (
    append,
    assistant,
    context,
    msg,
    new_session,
    service,
    tool_call_assistant,
    tool_result,
    user,
)


def omp_service(tmp_path: Path):
    root = tmp_path / ".omp" / "agent" / "sessions"
    root.mkdir(parents=True)
    return service(root)


def test_a_call_without_its_result_is_dropped_under_omp_and_sent_under_pi(tmp_path):
    svc = omp_service(tmp_path)
    sid = new_session(svc)
    append(svc, sid, msg(user("go")), msg(tool_call_assistant("c1")))
    omp = context(svc, sid)  # the session's own rules: oh-my-pi's
    assert [m["role"] for m in omp.messages] == ["user"]  # the turn held only the call: it goes
    pi = context(svc, sid, rules="pi")
    assert pi.messages[-1]["content"][0]["type"] == "toolCall"
    append(svc, sid, msg(tool_result("c1")))
    assert [m["role"] for m in context(svc, sid).messages] == ["user", "assistant", "toolResult"]


def test_a_delta_is_refused_when_a_held_call_got_its_result(tmp_path):
    svc = omp_service(tmp_path)
    sid = new_session(svc)
    call = tool_call_assistant("c1")
    call["content"].insert(0, {"type": "text", "text": "reading"})
    append(svc, sid, msg(user("go")), msg(call))
    first = context(svc, sid)
    assert first.messages[-1]["content"] == [{"type": "text", "text": "reading"}]
    append(svc, sid, msg(tool_result("c1")))
    again = context(svc, sid, since=first.cursor)
    assert again.delta is False and again.rebuildReason == "changed"
    assert again.messages[1]["content"][-1]["type"] == "toolCall"
    append(svc, sid, msg(user("more")))
    third = context(svc, sid, since=again.cursor)
    assert third.delta is True and [m["content"] for m in third.messages] == ["more"]
    # A cursor of pi's rules is no base for oh-my-pi's.
    assert context(svc, sid, since=context(svc, sid, rules="pi").cursor).rebuildReason == "unknownCursor"


def test_llm_format_under_omp_uses_developer_attribution_and_its_wrappers(sessions_root):
    svc = service(sessions_root)  # a pi root: ask for oh-my-pi's rules per call
    sid = new_session(svc)
    append(
        svc,
        sid,
        msg(user("hi")),
        msg(assistant("ok")),
        {"type": "compaction", "summary": "S", "firstKeptEntryId": "missing", "tokensBefore": 5},
        {"type": "custom_message", "customType": "ext", "content": "note", "display": True},
        {"type": "message", "message": {**assistant(""), "stopReason": "error", "content": []}},
    )
    llm = context(svc, sid, fmt="llm", rules="omp").messages
    assert [m["role"] for m in llm] == ["user", "developer"]
    assert llm[0]["content"][0]["text"].startswith("Prior model work/tool state available.")
    assert llm[0]["attribution"] == "agent" and llm[0]["historyRewriteAt"] == llm[0]["timestamp"]
    assert llm[1] == {
        "role": "developer",
        "content": [{"type": "text", "text": "note"}],
        "timestamp": llm[1]["timestamp"],
    }
    pi = context(svc, sid, fmt="llm").messages
    assert [m["role"] for m in pi] == ["user", "user", "assistant"]  # pi: custom as user, the error turn kept
