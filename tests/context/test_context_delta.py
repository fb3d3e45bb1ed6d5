"""session/buildContext {since}: only what was appended since an earlier result, or the whole context and why."""

from __future__ import annotations

import pytest
from session_builders import (
    append,
    assistant,
    msg,
    new_session,
    service,
    tool_call_assistant,
    tool_result,
    user,
)

from sidecar import wire
from sidecar.context.pruned import PRUNE_CUSTOM_TYPE
from sidecar.context.tally import TokenTally
from sidecar.errors import EntryNotFound


@pytest.fixture
def svc(sessions_root):
    return service(sessions_root)


def build(svc, sid, **params) -> wire.BuildContextResult:
    return svc.build_context(wire.BuildContextParams(sessionId=sid, **params))


@pytest.mark.parametrize("fmt", ["agent", "llm"])
def test_a_grown_path_sends_only_the_new_messages(svc, fmt):
    sid = new_session(svc)
    append(svc, sid, msg(user("one")), msg(tool_call_assistant()), msg(tool_result()), msg(assistant("two")))
    first = build(svc, sid, format=fmt)
    assert first.delta is False and first.rebuildReason is None and first.cursor
    append(
        svc,
        sid,
        {"type": "model_change", "provider": "openai", "modelId": "gpt-x"},
        msg(user("three")),
        msg(assistant("four")),
    )
    second = build(svc, sid, format=fmt, since=first.cursor)
    full = build(svc, sid, format=fmt)
    assert second.delta is True and second.rebuildReason is None
    assert second.baseCount == len(first.entryIds) == 4
    assert first.messages + second.messages == full.messages
    assert first.entryIds + second.entryIds == full.entryIds
    assert [m["role"] for m in second.messages] == ["user", "assistant"]
    # Everything else is whole, as without since.
    assert (second.model, second.estimatedTokens, second.leafId) == (full.model, full.estimatedTokens, full.leafId)
    # Chained: the delta's cursor stands for the whole context it completes.
    assert second.cursor == full.cursor
    third = build(svc, sid, format=fmt, since=second.cursor)
    assert third.delta is True and third.messages == [] and third.entryIds == [] and third.baseCount == 6


def test_an_empty_context_grows_from_nothing(svc):
    sid = new_session(svc)
    empty = build(svc, sid)
    append(svc, sid, msg(user("hi")))
    grown = build(svc, sid, since=empty.cursor)
    assert grown.delta is True and grown.baseCount == 0 and [m["content"] for m in grown.messages] == ["hi"]


def test_a_branch_sends_the_whole_context(svc):
    sid = new_session(svc)
    u1, _a1, _u2 = append(svc, sid, msg(user("one")), msg(assistant("two")), msg(user("three")))
    before = build(svc, sid)
    svc.branch(wire.BranchParams(sessionId=sid, entryId=u1))
    append(svc, sid, msg(assistant("other answer")))
    after = build(svc, sid, since=before.cursor)
    assert after.delta is False and after.rebuildReason == "branched" and after.baseCount == 0
    assert after.messages == build(svc, sid).messages
    # Asking for an earlier leaf than the cursor's is a branch too.
    assert build(svc, sid, leafId=u1, since=before.cursor).rebuildReason == "branched"


def test_a_compaction_or_a_prune_mark_after_the_cursor_sends_the_whole_context(svc):
    sid = new_session(svc)
    u1, a1, _u2, _a2 = append(
        svc, sid, msg(user("one")), msg(assistant("two")), msg(user("three")), msg(assistant("four"))
    )
    before = build(svc, sid)
    append(svc, sid, {"type": "compaction", "summary": "talked", "firstKeptEntryId": a1, "tokensBefore": 100})
    compacted = build(svc, sid, since=before.cursor)
    assert compacted.rebuildReason == "compacted" and compacted.delta is False
    assert compacted.messages == build(svc, sid).messages and compacted.messages[0]["role"] == "compactionSummary"

    other = new_session(svc)
    append(
        svc,
        other,
        msg(user("read it")),
        msg(tool_call_assistant()),
        msg(tool_result(text="x" * 5000)),
        msg(assistant("ok")),
    )
    cursor = build(svc, other).cursor
    [result_id] = [e.id for e in svc.session(other).tree.entries if e.type == "message" and e.role() == "toolResult"]
    append(svc, other, {"type": "custom", "customType": PRUNE_CUSTOM_TYPE, "data": {"entryIds": [result_id]}})
    pruned = build(svc, other, since=cursor)
    assert pruned.rebuildReason == "pruned" and pruned.messages == build(svc, other).messages


def test_a_context_edit_after_the_cursor_sends_the_whole_context(svc):
    sid = new_session(svc)
    # The secret follows the last reported usage, so it counts in the carried context size.
    _u0, _a0, u1 = append(svc, sid, msg(user("hi")), msg(assistant("noted")), msg(user("my secret " * 300)))
    before = build(svc, sid, format="llm")
    dropped = svc.append(
        wire.AppendParams(
            sessionId=sid,
            entries=[
                {"type": "context_edit", "targetId": u1, "replacement": {"content": "[redacted]"}},
                msg(user("next")),
            ],
        )
    )
    edited = build(svc, sid, format="llm", since=before.cursor)
    assert edited.rebuildReason == "edited" and edited.delta is False
    assert edited.messages == build(svc, sid, format="llm").messages
    assert edited.messages[2]["content"] == "[redacted]" and len(edited.messages) == 4
    # The context size carried from append to append is counted again over the edited context.
    assert dropped.contextTokens == TokenTally.of_path(svc.session(sid).tree.path(svc.session(sid).leaf_id)).total
    with pytest.raises(EntryNotFound):  # an edit must name an entry of the session
        append(svc, sid, {"type": "context_edit", "targetId": "nowhere", "replacement": None})


def test_a_cursor_of_another_session_or_format_or_garbage_is_refused_softly(svc):
    a, b = new_session(svc), new_session(svc)
    append(svc, a, msg(user("a")))
    append(svc, b, msg(user("b")))
    cursor_a = build(svc, a).cursor
    for sid, since, fmt in (
        (b, cursor_a, "agent"),
        (a, cursor_a, "llm"),
        (a, "not-a-cursor!", "agent"),
        (a, "", "agent"),
    ):
        result = build(svc, sid, since=since, format=fmt)
        assert result.delta is False and result.rebuildReason == "unknownCursor"
        assert result.messages == build(svc, sid, format=fmt).messages
