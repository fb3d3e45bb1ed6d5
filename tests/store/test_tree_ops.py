"""The tree through the service: append, branch, reset, labels, names, entries, children, paths."""

from __future__ import annotations

import pytest
from session_builders import append, assistant, context, msg, new_session, service, user

from sidecar import wire
from sidecar.errors import EntryNotFound, InvalidEntry, InvalidParams


@pytest.fixture
def svc(sessions_root):
    return service(sessions_root)


def reopen(svc, session_id):
    """Close and open again from disk with a fresh service."""
    svc.close(wire.CloseParams(sessionId=session_id))
    fresh = service(svc.store.layout.root)
    fresh.open(wire.OpenParams(sessionId=session_id))
    return fresh


def test_each_append_hangs_below_the_leaf_and_moves_the_leaf(svc):
    sid = new_session(svc)
    ids = []
    for body in (user("1"), assistant("2"), user("3")):
        [new_id] = append(svc, sid, msg(body))
        ids.append(new_id)
        assert svc.session(sid).leaf_id == new_id
    entries = svc.get_entries(wire.GetEntriesParams(sessionId=sid)).entries
    assert [e["parentId"] for e in entries] == [None, ids[0], ids[1]]
    assert [e["id"] for e in entries] == ids


def test_every_kind_of_entry_joins_the_chain(svc):
    sid = new_session(svc)
    append(svc, sid, msg(user()), msg(assistant()))
    kinds = [
        {"type": "thinking_level_change", "thinkingLevel": "high"},
        {"type": "model_change", "provider": "openai", "modelId": "gpt"},
        {"type": "compaction", "summary": "S", "firstKeptEntryId": "x", "tokensBefore": 3},
        {"type": "custom", "customType": "ext", "data": {"a": 1}},
        {"type": "custom_message", "customType": "ext", "content": "c", "display": True},
        {"type": "branch_summary", "fromId": "root", "summary": "bs"},
        {"type": "usage", "kind": "summary", "provider": "openai", "model": "gpt", "usage": {"input": 1, "output": 2}},
        {"type": "session_info", "name": "n"},
    ]
    previous = svc.session(sid).leaf_id
    for obj in kinds:
        [new_id] = append(svc, sid, obj)
        entry = svc.session(sid).get(new_id)
        assert entry.parent_id == previous and entry.type == obj["type"]
        previous = new_id


OMP_KINDS = [
    {"type": "ttsr_injection", "injectedRules": ["r"]},
    {"type": "session_init", "systemPrompt": "p"},
    {"type": "mode_change", "mode": "plan"},
    {"type": "model_change", "model": "openai/gpt", "role": "default"},
    {"type": "title_change", "title": "t", "source": "user"},
    {"type": "reset_boundary"},
]


@pytest.mark.parametrize("obj", OMP_KINDS[:3] + OMP_KINDS[4:], ids=lambda obj: obj["type"])
def test_oh_my_pi_entry_kinds_are_refused_under_pi_compatibility(svc, obj):
    sid = new_session(svc)
    append(svc, sid, msg(user()), msg(assistant()))
    with pytest.raises(InvalidParams) as refused:
        append(svc, sid, obj)
    assert refused.value.data["field"] == "entries[0].type" and "oh-my-pi" in refused.value.message
    assert len(svc.session(sid).tree.entries) == 2


def test_oh_my_pi_entry_kinds_join_the_chain_under_its_compatibility(sessions_root):
    omp = service(sessions_root, compat="omp")
    sid = new_session(omp)
    append(omp, sid, msg(user()), msg(assistant()))
    previous = omp.session(sid).leaf_id
    for obj in OMP_KINDS:
        [new_id] = append(omp, sid, obj)
        assert omp.session(sid).get(new_id).parent_id == previous
        previous = new_id
    with pytest.raises(InvalidParams) as refused:
        append(omp, sid, {"type": "brand_new_kind", "anything": [1, 2]})
    assert refused.value.data["field"] == "entries[0].type" and "custom" in refused.value.message


def test_a_batch_is_a_chain_and_explicit_parent_ids_are_honoured(svc):
    sid = new_session(svc)
    root_id, a_id = append(svc, sid, msg(user()), msg(assistant()))
    x_id, y_id = append(svc, sid, msg(user("x")), msg(assistant("y")), parentId=root_id)
    session = svc.session(sid)
    assert session.get(x_id).parent_id == root_id and session.get(y_id).parent_id == x_id
    [new_root] = append(svc, sid, msg(user("new root")), parentId=None)
    assert session.get(new_root).parent_id is None


def test_branch_moves_only_the_leaf(svc):
    sid = new_session(svc)
    u1, a1, u2 = append(svc, sid, msg(user("1")), msg(assistant("2")), msg(user("3")))
    before = [e.raw for e in svc.session(sid).tree.entries]
    assert svc.branch(wire.BranchParams(sessionId=sid, entryId=u1)).leafId == u1
    assert [e.raw for e in svc.session(sid).tree.entries] == before
    [b] = append(svc, sid, msg(assistant("other")))
    assert svc.session(sid).get(b).parent_id == u1
    children = svc.session(sid).tree.children[u1]
    assert [c.id for c in children] == [a1, b]


def test_branch_to_an_unknown_entry_is_an_error_and_changes_nothing(svc):
    sid = new_session(svc)
    [u1] = append(svc, sid, msg(user()))
    with pytest.raises(EntryNotFound):
        svc.branch(wire.BranchParams(sessionId=sid, entryId="nope"))
    assert svc.session(sid).leaf_id == u1


def test_reset_leaf_makes_the_next_append_a_new_root(svc):
    sid = new_session(svc)
    append(svc, sid, msg(user()), msg(assistant()))
    assert svc.branch(wire.BranchParams(sessionId=sid, entryId=None)).leafId is None
    assert context(svc, sid).messages == []
    [root2] = append(svc, sid, msg(user("again")))
    assert svc.session(sid).get(root2).parent_id is None
    roots = [n for n in svc.get_tree(wire.GetTreeParams(sessionId=sid)).nodes if n.parentId is None]
    assert len(roots) == 2


def test_on_open_the_leaf_is_the_last_entry_in_file_order(svc):
    sid = new_session(svc)
    u1, a1 = append(svc, sid, msg(user()), msg(assistant()))
    append(svc, sid, msg(user("late")), msg(assistant("late")))
    [side] = append(svc, sid, msg(user("side")), parentId=u1)
    svc.branch(wire.BranchParams(sessionId=sid, entryId=a1))  # the leaf is not persisted
    fresh = reopen(svc, sid)
    assert fresh.session(sid).leaf_id == side


def test_labels_set_clear_and_last_wins(svc):
    sid = new_session(svc)
    u1, a1 = append(svc, sid, msg(user()), msg(assistant()))
    svc.set_label(wire.SetLabelParams(sessionId=sid, entryId=u1, label="first"))
    svc.set_label(wire.SetLabelParams(sessionId=sid, entryId=u1, label="second"))
    svc.set_label(wire.SetLabelParams(sessionId=sid, entryId=a1, label="gone"))
    svc.set_label(wire.SetLabelParams(sessionId=sid, entryId=a1, label=None))
    svc.set_label(wire.SetLabelParams(sessionId=sid, entryId=u1, label="third"))
    assert svc.session(sid).tree.labels == {u1: "third"}
    nodes = {n.id: n for n in svc.get_tree(wire.GetTreeParams(sessionId=sid)).nodes}
    assert nodes[u1].label == "third" and nodes[a1].label is None
    # Label entries are part of the tree but never of the context.
    assert [m["role"] for m in context(svc, sid).messages] == ["user", "assistant"]
    assert reopen(svc, sid).session(sid).tree.labels == {u1: "third"}


def test_an_empty_label_clears_it(svc):
    sid = new_session(svc)
    u1, _ = append(svc, sid, msg(user()), msg(assistant()))
    svc.set_label(wire.SetLabelParams(sessionId=sid, entryId=u1, label="x"))
    svc.set_label(wire.SetLabelParams(sessionId=sid, entryId=u1, label=""))
    assert svc.session(sid).tree.labels == {}


def test_labelling_an_unknown_entry_is_an_error_and_appends_nothing(svc):
    sid = new_session(svc)
    append(svc, sid, msg(user()), msg(assistant()))
    count = len(svc.session(sid).tree.entries)
    with pytest.raises(EntryNotFound):
        svc.set_label(wire.SetLabelParams(sessionId=sid, entryId="ghost", label="x"))
    with pytest.raises(EntryNotFound):
        append(svc, sid, {"type": "label", "targetId": "ghost", "label": "x"})
    assert len(svc.session(sid).tree.entries) == count


def test_session_name_last_wins_and_an_empty_name_clears_it(svc):
    sid = new_session(svc, name="  first  ")
    append(svc, sid, msg(user()), msg(assistant()))
    assert svc.session(sid).tree.name == "first"
    assert svc.set_name(wire.SetNameParams(sessionId=sid, name="second")).name == "second"
    svc2 = reopen(svc, sid)
    assert svc2.session(sid).tree.name == "second"
    assert svc2.set_name(wire.SetNameParams(sessionId=sid, name="   ")).name is None
    assert reopen(svc2, sid).session(sid).tree.name is None


def test_get_entries_by_id_and_unknown_ids(svc):
    sid = new_session(svc)
    u1, a1 = append(svc, sid, msg(user("q")), msg(assistant("a")))
    got = svc.get_entries(wire.GetEntriesParams(sessionId=sid, ids=[a1, u1])).entries
    assert [e["id"] for e in got] == [a1, u1]
    assert got[1]["message"] == user("q")
    with pytest.raises(EntryNotFound):
        svc.get_entries(wire.GetEntriesParams(sessionId=sid, ids=["missing"]))


def test_path_to_root_and_whole_tree(svc):
    sid = new_session(svc)
    u1, a1, u2 = append(svc, sid, msg(user()), msg(assistant()), msg(user("2")))
    [b] = append(svc, sid, msg(user("b")), parentId=a1)
    session = svc.session(sid)
    assert [e.id for e in session.path_to(u2)] == [u1, a1, u2]
    assert [e.id for e in session.path_to(b)] == [u1, a1, b]
    assert session.path_to(None) == []
    with pytest.raises(EntryNotFound):
        session.path_to("missing")
    tree = svc.get_tree(wire.GetTreeParams(sessionId=sid))
    assert [(n.id, n.parentId, n.role) for n in tree.nodes] == [
        (u1, None, "user"),
        (a1, u1, "assistant"),
        (u2, a1, "user"),
        (b, a1, "user"),
    ]
    assert tree.leafId == b


def test_build_context_at_a_leaf_null_leaf_and_unknown_leaf(svc):
    sid = new_session(svc)
    u1, a1 = append(svc, sid, msg(user("q")), msg(assistant("a")))
    assert [m["role"] for m in context(svc, sid, leafId=u1).messages] == ["user"]
    assert context(svc, sid, leafId=None).messages == []
    with pytest.raises(EntryNotFound):
        context(svc, sid, leafId="nope")


@pytest.mark.parametrize(
    "bad",
    [
        {"message": user()},  # no type
        {"type": "session", "id": "x"},
        {"type": "message", "message": {"role": "compactionSummary", "summary": "s"}},  # an entry's, in a context
        {"type": "message", "message": {"content": "no role"}},
        {"type": "compaction", "summary": "s"},  # missing fields
        {"type": "label", "label": "no target"},
        {"type": "message", "message": user(), "timestamp": 5},
    ],
)
def test_malformed_known_entries_are_refused_whole(svc, bad):
    sid = new_session(svc)
    append(svc, sid, msg(user()))
    # InvalidEntry: not an entry at all; InvalidParams: an entry's shape pi would misread.
    with pytest.raises((InvalidEntry, InvalidParams, EntryNotFound)):
        append(svc, sid, msg(assistant()), bad)
    assert len(svc.session(sid).tree.entries) == 1  # nothing of the batch landed


def test_duplicate_entry_ids_are_refused(svc):
    sid = new_session(svc)
    append(svc, sid, {"type": "custom", "customType": "x", "id": "fixed1"})
    with pytest.raises(InvalidEntry):
        append(svc, sid, {"type": "custom", "customType": "x", "id": "fixed1"})


def test_unknown_fields_of_a_known_type_are_kept(svc):
    sid = new_session(svc)
    [e] = append(svc, sid, {"type": "message", "message": {**user(), "futureField": {"x": 1}}, "extra": [1]})
    append(svc, sid, msg(assistant()))
    obj = reopen(svc, sid).session(sid).get(e).obj()
    assert obj["extra"] == [1] and obj["message"]["futureField"] == {"x": 1}
    assert list(obj)[:4] == ["type", "id", "parentId", "timestamp"]
