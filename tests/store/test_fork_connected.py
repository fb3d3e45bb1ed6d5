"""A fork copies a path that may hold labels, compactions, names and custom entries, and stays connected.

Label entries are tree entries: the turn after a label is the label's child. A
fork leaves label entries out of the copy (and writes the labels of the copied
entries again after the path), so it must re-chain what follows each label, or
the new file holds entries whose parent is missing and the history before them
vanishes from every reader's context (issue 23).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from random_sessions import entry_for, start
from session_builders import append, assistant, context, labelled_session, msg, read_lines, service, turn, user

from sidecar import wire
from sidecar.config import Settings, apply_overrides
from sidecar.errors import InvalidParams
from sidecar.service import SessionService


def assert_connected(path: Path) -> list[dict]:
    """Every parentId names a line written before it (so every path reaches a root)."""
    lines = read_lines(path)
    assert lines[0]["type"] == "session"
    seen: set[str] = set()
    for obj in lines[1:]:
        parent = obj.get("parentId")
        assert parent is None or parent in seen, f"{obj['id']} ({obj['type']}) names missing parent {parent}"
        seen.add(obj["id"])
    return lines


def test_fork_across_labels_keeps_the_whole_history(sessions_root):
    svc = service(sessions_root)
    session_id, ids = labelled_session(svc)
    source_ctx = context(svc, session_id)
    assert len(source_ctx.messages) > 9  # summary, kept turns 1-2, turns 3-4

    forked = svc.fork(wire.ForkParams(sessionId=session_id, entryId=ids["last"]))
    lines = assert_connected(Path(forked.path))
    assert not [o for o in lines if o["type"] == "label" and o["id"] in ids.values()]  # old label entries not copied
    compaction = next(o for o in lines if o["type"] == "compaction")
    assert compaction["firstKeptEntryId"] == ids["q2"]  # the kept entry that followed the dropped label

    fork_ctx = context(svc, forked.sessionId)
    assert fork_ctx.messages == source_ctx.messages
    assert context(svc, forked.sessionId, fmt="llm").messages == context(svc, session_id, fmt="llm").messages

    tree = svc.get_tree(wire.GetTreeParams(sessionId=forked.sessionId))
    labels = {n.id: n.label for n in tree.nodes if n.label}
    assert labels == {ids["answer0"]: "first", ids["q1"]: "asked", ids["answer3"]: "late"}
    assert all(n.parentId is not None for n in tree.nodes[1:])  # one root: nothing cut off

    # Re-written labels keep the time they were set, as pi writes them.
    source_label_times = {
        o["targetId"]: o["timestamp"] for o in read_lines(svc.session(session_id).path) if o["type"] == "label"
    }
    for obj in lines:
        if obj["type"] == "label":
            assert obj["timestamp"] == source_label_times[obj["targetId"]]

    name = svc.session(forked.sessionId).tree.name
    svc.close_all()
    again = service(sessions_root)
    reopened = again.open(wire.OpenParams(sessionId=forked.sessionId))
    assert reopened.warnings == []
    assert context(again, forked.sessionId).messages == source_ctx.messages
    assert again.session(forked.sessionId).tree.name == name == "labels and forks"


def test_entries_whose_parent_did_not_change_keep_their_bytes(sessions_root):
    svc = service(sessions_root)
    session_id, ids = labelled_session(svc)
    source_lines = {
        json.loads(raw)["id"]: raw for raw in svc.session(session_id).path.read_text(encoding="utf-8").split("\n")[1:-1]
    }
    forked = svc.fork(wire.ForkParams(sessionId=session_id, entryId=ids["last"]))
    rechained = {ids["q1"], ids["q2"], ids["compaction"], ids["q4"]}
    for raw in Path(forked.path).read_text(encoding="utf-8").split("\n")[1:-1]:
        obj = json.loads(raw)
        if obj["type"] == "label":
            continue
        if obj["id"] in rechained:
            assert raw != source_lines[obj["id"]]
        else:
            assert raw == source_lines[obj["id"]]
    by_id = {o["id"]: o for o in read_lines(Path(forked.path))}
    assert by_id[ids["q1"]]["parentId"] == ids["answer0"]  # it followed label0
    assert by_id[ids["q4"]]["parentId"] == ids["answer3"]  # it followed label3


def test_fork_at_a_label_entry_copies_the_path_up_to_it(sessions_root):
    svc = service(sessions_root)
    session_id, ids = labelled_session(svc)
    forked = svc.fork(wire.ForkParams(sessionId=session_id, entryId=ids["label3"]))
    assert_connected(Path(forked.path))
    assert context(svc, forked.sessionId).messages == context(svc, session_id, leafId=ids["label3"]).messages


def test_a_real_compaction_between_labels_forks_connected(sessions_root):
    settings = apply_overrides(Settings(), {"providers": {"default": "offline", "maxRetries": 0}}, "test")
    svc = SessionService(sessions_root, settings)
    session_id = svc.create(wire.CreateParams(cwd="/work/proj")).sessionId
    # A long first answer: a compaction must shrink the context (the summary outweighs a few short turns).
    append(svc, session_id, msg(user("explain the project")), msg(assistant("The project is " + "detailed " * 600)))
    for number in range(6):
        last = turn(svc, session_id, number)[-1]
        svc.set_label(wire.SetLabelParams(sessionId=session_id, entryId=last, label=f"turn {number}"))
    asyncio.run(svc.compact(wire.CompactParams(sessionId=session_id, keepRecentTokens=60)))
    for number in range(6, 8):
        last = turn(svc, session_id, number)[-1]
        svc.set_label(wire.SetLabelParams(sessionId=session_id, entryId=last, label=f"turn {number}"))
    final = turn(svc, session_id, 8)[-1]
    forked = svc.fork(wire.ForkParams(sessionId=session_id, entryId=final))
    assert_connected(Path(forked.path))
    assert context(svc, forked.sessionId).messages == context(svc, session_id).messages
    assert len(svc.session(forked.sessionId).tree.labels) == 8


_ops = st.lists(
    st.one_of(
        st.tuples(
            st.just("append"),
            st.sampled_from(
                [
                    "user",
                    "assistant",
                    "tool_call",
                    "tool_result",
                    "compaction",
                    "branch_summary",
                    "custom",
                    "custom_message",
                    "session_info",
                    "model_change",
                    "thinking",
                ]
            ),
            st.text(alphabet="ab ", max_size=4),
            st.integers(0, 10_000),
        ),
        st.tuples(st.just("label"), st.integers(0, 10_000), st.sampled_from(["x", "y", ""])),
        st.tuples(st.just("label_leaf"), st.sampled_from(["here", "mark"])),
        st.tuples(st.just("branch"), st.integers(0, 10_000)),
    ),
    min_size=5,
    max_size=50,
)


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(steps=_ops, fork_picks=st.lists(st.integers(0, 10_000), min_size=1, max_size=5))
def test_random_histories_fork_connected_with_the_same_context(tmp_path_factory, steps, fork_picks):
    root = tmp_path_factory.mktemp("forks")
    svc = service(root)
    session_id = start(svc)
    for step in steps:
        ids = [e.id for e in svc.session(session_id).tree.entries]
        if step[0] == "append":
            _, kind, text, pick = step
            svc.append(wire.AppendParams(sessionId=session_id, entries=[entry_for(kind, text, pick, ids)]))
        elif step[0] == "label":
            svc.set_label(wire.SetLabelParams(sessionId=session_id, entryId=ids[step[1] % len(ids)], label=step[2]))
        elif step[0] == "label_leaf" and svc.session(session_id).leaf_id is not None:
            svc.set_label(
                wire.SetLabelParams(sessionId=session_id, entryId=svc.session(session_id).leaf_id, label=step[1])
            )
        elif step[0] == "branch":
            svc.branch(wire.BranchParams(sessionId=session_id, entryId=ids[step[1] % len(ids)]))
    source = svc.session(session_id)
    ids = [e.id for e in source.tree.entries]
    for pick in fork_picks:
        at = ids[pick % len(ids)]
        try:
            forked = svc.fork(wire.ForkParams(sessionId=session_id, entryId=at))
        except InvalidParams:
            continue  # a tool result: not a place to fork from
        copy = svc.session(forked.sessionId)
        path_ids = [e.id for e in copy.tree.path(copy.leaf_id)]
        assert path_ids == [e.id for e in copy.tree.entries]  # one path: the copy, then its labels
        expected = context(svc, session_id, leafId=at)
        assert context(svc, forked.sessionId).messages == expected.messages
        assert (
            context(svc, forked.sessionId, fmt="llm").messages
            == context(svc, session_id, fmt="llm", leafId=at).messages
        )
        on_path = {e.id for e in source.tree.path(at) if e.type != "label"}  # label entries are not copied
        assert copy.tree.labels == {k: v for k, v in source.tree.labels.items() if k in on_path}
        if forked.persisted:
            assert_connected(Path(forked.path))
    svc.close_all()
