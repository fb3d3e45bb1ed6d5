"""session/append's contextTokens, carried from append to append, equals a full rebuild every time."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from random_sessions import entry_for, operations, start
from session_builders import append_as_another_agent, assistant

from sidecar import wire
from sidecar.context.build import build_context
from sidecar.context.tokens import context_tokens
from sidecar.service import SessionService


def rebuilt_tokens(svc: SessionService, session_id: str) -> int:
    session = svc.session(session_id)
    ctx = build_context(session.tree.path(session.leaf_id))
    return context_tokens(ctx.messages, ctx.after_compaction)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=operations(min_size=5, max_size=50))
def test_append_tokens_equal_a_full_rebuild_after_every_step(tmp_path_factory, steps):
    svc = SessionService(tmp_path_factory.mktemp("root"))
    session_id = start(svc)
    for step in steps:
        ids = [e.id for e in svc.session(session_id).tree.entries]
        if step[0] == "append":
            _, kind, text, pick = step
            if (
                kind == "unknown"
            ):  # refused by session/append: written as a newer agent would (checked at the next append)
                append_as_another_agent(svc, session_id, entry_for(kind, text, pick, ids))
                continue
            result = svc.append(wire.AppendParams(sessionId=session_id, entries=[entry_for(kind, text, pick, ids)]))
            assert result.contextTokens == rebuilt_tokens(svc, session_id)
        elif step[0] == "branch" and ids:
            svc.branch(wire.BranchParams(sessionId=session_id, entryId=ids[step[1] % len(ids)]))
        elif step[0] == "reset":
            svc.branch(wire.BranchParams(sessionId=session_id, entryId=None))


def test_a_new_usage_replaces_the_estimates_before_it(tmp_path):
    svc = SessionService(tmp_path)
    session_id = start(svc)
    long_user = {"type": "message", "message": {"role": "user", "content": "x" * 4000, "timestamp": 3}}
    grown = svc.append(wire.AppendParams(sessionId=session_id, entries=[long_user])).contextTokens
    assert grown == 15 + 1000  # the start's assistant reported 15; 4000 chars estimate 1000
    reply = assistant("done", usage={"input": 2000, "output": 10, "cacheRead": 0, "cacheWrite": 0})
    after = svc.append(wire.AppendParams(sessionId=session_id, entries=[{"type": "message", "message": reply}]))
    assert after.contextTokens == 2010


def test_user_messages_of_every_content_shape_tally_as_a_full_rebuild(tmp_path):
    """The tally's shortcut for a user message with plain text (chars / 4, rounded up) and the general
    path for other shapes agree with a rebuild: lengths around each multiple of 4, lists, images, null."""
    svc = SessionService(tmp_path)
    session_id = start(svc)
    shapes = [{"role": "user", "content": "y" * n} for n in range(10)] + [
        {
            "role": "user",
            "content": [{"type": "text", "text": "abcde"}, {"type": "image", "data": "AAAA", "mimeType": "image/png"}],
        },
        {"role": "user", "content": None},
        {"role": "user", "content": "é" * 7, "usage": {"input": 999}},  # a user's usage is never trusted
    ]
    for shape in shapes:
        result = svc.append(wire.AppendParams(sessionId=session_id, entries=[{"type": "message", "message": shape}]))
        assert result.contextTokens == rebuilt_tokens(svc, session_id)
    # A shape session/append refuses (content is required) but a file may hold, written by another program.
    for shape in ({"role": "user"},):
        append_as_another_agent(svc, session_id, {"type": "message", "message": shape})
        result = svc.append(
            wire.AppendParams(
                sessionId=session_id, entries=[{"type": "message", "message": {"role": "user", "content": "w"}}]
            )
        )
        assert result.contextTokens == rebuilt_tokens(svc, session_id)
    batch = [{"type": "message", "message": {"role": "user", "content": "z" * n}} for n in (1, 4, 5, 8, 9)]
    result = svc.append(wire.AppendParams(sessionId=session_id, entries=batch))
    assert result.contextTokens == rebuilt_tokens(svc, session_id)
