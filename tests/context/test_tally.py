"""session/append's contextTokens, carried from append to append, equals a full rebuild every time."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
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


# Batches of appends (several entries each, a compaction or context edit among them at times), each made
# where no tally was carried to: after a branch, a reset, or the session closed and opened again.
_batch = operations(min_size=1, max_size=6).map(
    lambda steps: [step for step in steps if step[0] == "append" and step[1] != "unknown"]
)
_uncarried = st.lists(
    st.tuples(st.sampled_from(["reopen", "branch", "reset", "carried"]), st.integers(0, 10_000), _batch),
    min_size=1,
    max_size=8,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=_uncarried)
def test_a_batch_appended_where_no_tally_was_carried_tallies_as_a_full_rebuild(tmp_path_factory, batches):
    """The first append since a session was opened, or after a branch, counts the path before its batch
    and then the batch from its dicts: it must give what counting the whole path gives."""
    svc = SessionService(tmp_path_factory.mktemp("root"))
    session_id = start(svc)
    for before, pick, steps in batches:
        ids = [e.id for e in svc.session(session_id).tree.entries]
        if before == "reopen":
            svc.close(wire.CloseParams(sessionId=session_id))
            svc.open(wire.OpenParams(sessionId=session_id))
        elif before == "branch":
            svc.branch(wire.BranchParams(sessionId=session_id, entryId=ids[pick % len(ids)]))
        elif before == "reset":
            svc.branch(wire.BranchParams(sessionId=session_id, entryId=None))
        entries = [entry_for(kind, text, at, ids) for _, kind, text, at in steps]
        if not entries:
            continue
        result = svc.append(wire.AppendParams(sessionId=session_id, entries=entries))
        assert result.contextTokens == rebuilt_tokens(svc, session_id)


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
