"""Fork, list (pi's modified rule, order, paging, query), continueRecent, archive, trash."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from session_builders import (
    adopt_files,
    append,
    append_as_another_agent,
    assistant,
    context,
    entry,
    header,
    message,
    msg,
    new_session,
    read_lines,
    service,
    stamp,
    stored_at,
    user,
    write_session,
)

from sidecar import wire
from sidecar.errors import EntryNotFound, InvalidParams, SessionNotFound
from sidecar.store.files.layout import encode_cwd


@pytest.fixture
def svc(sessions_root):
    return service(sessions_root)


def test_fork_copies_the_path_verbatim_with_labels_on_it(svc):
    sid = new_session(svc)
    u1, a1, u2, a2 = append(svc, sid, msg(user("1")), msg(assistant("2")), msg(user("3")), msg(assistant("4")))
    [side] = append(svc, sid, msg(user("side")), parentId=a1)
    svc.branch(wire.BranchParams(sessionId=sid, entryId=a2))
    append_as_another_agent(svc, sid, {"type": "brand_new_kind", "keep": [1.5]})
    leaf_of_path = svc.session(sid).leaf_id
    svc.set_label(wire.SetLabelParams(sessionId=sid, entryId=u1, label="start"))
    svc.set_label(wire.SetLabelParams(sessionId=sid, entryId=side, label="off-path"))
    forked = svc.fork(wire.ForkParams(sessionId=sid, entryId=a2))
    raw_source = {e.id: e.raw for e in svc.session(sid).tree.entries}
    fork_session = svc.session(forked.sessionId)
    copied = [e for e in fork_session.tree.entries if e.type != "label"]
    assert [e.id for e in copied] == [u1, a1, u2, a2]
    assert all(e.raw == raw_source[e.id] for e in copied)  # byte for byte
    assert fork_session.tree.labels == {u1: "start"}
    assert fork_session.header_obj()["parentSession"] == sid
    assert read_lines(Path(forked.path))[0]["parentSession"] == sid
    assert context(svc, forked.sessionId).messages == context(svc, sid, leafId=a2).messages
    # An unknown entry on the path is copied byte for byte too.
    from_unknown = svc.fork(wire.ForkParams(sessionId=sid, entryId=leaf_of_path))
    last = [e for e in svc.session(from_unknown.sessionId).tree.entries if e.type != "label"][-1]
    assert last.type == "brand_new_kind" and last.raw == raw_source[leaf_of_path]


def test_fork_from_a_user_message_without_an_assistant_is_written_as_pi_1_5_does(svc):
    sid = new_session(svc)
    u1, _ = append(svc, sid, msg(user()), msg(assistant()))
    forked = svc.fork(wire.ForkParams(sessionId=sid, entryId=u1))
    assert forked.persisted and Path(forked.path).is_file()
    lines = Path(forked.path).read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["type"] for line in lines] == ["session", "message"]


def test_fork_refuses_tool_results_and_unknown_entries(svc):
    sid = new_session(svc)
    append(svc, sid, msg(user()), msg(assistant()))
    [result] = append(
        svc,
        sid,
        msg(
            {"role": "toolResult", "toolCallId": "c", "toolName": "t", "content": [], "isError": False, "timestamp": 1}
        ),
    )
    with pytest.raises(InvalidParams):
        svc.fork(wire.ForkParams(sessionId=sid, entryId=result))
    with pytest.raises(EntryNotFound):
        svc.fork(wire.ForkParams(sessionId=sid, entryId="missing"))


def test_fork_of_an_old_file_copies_the_migrated_entries(sessions_root, svc):
    path = sessions_root / encode_cwd("/p") / "2025-01-01T00-00-00-000Z_old.jsonl"
    write_session(
        path,
        header("old", version=None, cwd="/p"),
        [
            {"type": "message", "timestamp": stamp(1), "message": user()},
            {"type": "message", "timestamp": stamp(2), "message": assistant()},
        ],
    )
    adopt_files(svc)
    svc.open(wire.OpenParams(sessionId="old"))
    forked = svc.fork(wire.ForkParams(sessionId="old"))
    records = read_lines(Path(forked.path))
    assert records[0]["version"] == 3
    assert records[1:] == read_lines(stored_at(svc, path))[1:]


def write_listed(root, session_id, cwd, entries, **head):
    path = root / encode_cwd(cwd) / f"2025-01-01T00-00-00-000Z_{session_id}.jsonl"
    h = header(session_id, cwd=cwd, **head)
    return write_session(path, h, entries)


def test_list_reports_pi_metadata_and_modified_by_pi_rule(sessions_root, svc):
    write_listed(
        sessions_root,
        "s1",
        "/p",
        [
            message("a", None, user("first question", timestamp=1_700_000_000_000)),
            message("b", "a", assistant("answer", timestamp=1_700_000_500_000)),
            message(
                "c",
                "b",
                {
                    "role": "toolResult",
                    "toolCallId": "x",
                    "toolName": "t",
                    "content": [],
                    "timestamp": 1_800_000_000_000,
                },
            ),
            entry("session_info", "n", "c", name="My name"),
        ],
        title="T",
        parentSession="s0",
    )
    # No message timestamps: the entry's own time counts.
    m = user("q")
    del m["timestamp"]
    write_listed(sessions_root, "s2", "/p", [message("a", None, m, second=30)])
    # No messages: the header time.
    write_listed(sessions_root, "s3", "/p", [])
    adopt_files(svc)
    sessions = {s.sessionId: s for s in svc.list(wire.ListParams(cwd="/p")).sessions}
    s1 = sessions["s1"]
    # One name: pi's (its last session_info), in ACP's title too; the header's title is oh-my-pi's.
    assert (s1.name, s1.title, s1.parentSession, s1.cwd) == ("My name", "My name", "s0", "/p")
    assert s1.messageCount == 3 and s1.firstMessage == "first question" and not s1.archived
    assert s1.modified == "2023-11-14T22:21:40.000Z"  # the assistant at 1_700_000_500_000, not the tool result
    assert sessions["s2"].modified == stamp(30)
    assert sessions["s3"].modified == "2025-01-01T00:00:00.000Z" and sessions["s3"].firstMessage == "(no messages)"
    assert s1.created == "2025-01-01T00:00:00.000Z"


def test_list_falls_back_to_file_mtime_when_nothing_else_has_a_time(sessions_root, svc):
    path = write_listed(sessions_root, "s", "/p", [])
    lines = path.read_text().replace('"timestamp":"2025-01-01T00:00:00.000Z"', '"timestamp":"not a time"')
    path.write_text(lines)
    os.utime(path, (1_600_000_000, 1_600_000_000))
    adopt_files(svc)
    [info] = svc.list(wire.ListParams(cwd="/p")).sessions
    assert info.modified == "2020-09-13T12:26:40.000Z"


def test_list_is_newest_first_pages_with_a_cursor_and_filters(sessions_root, svc):
    for i in range(7):
        cwd = "/p" if i % 2 == 0 else "/q"
        write_listed(
            sessions_root, f"s{i}", cwd, [message("a", None, user(f"topic {i}", timestamp=1_700_000_000_000 + i))]
        )
    adopt_files(svc)
    everything = svc.list(wire.ListParams(all=True)).sessions
    assert [s.sessionId for s in everything] == [f"s{i}" for i in range(6, -1, -1)]
    assert [s.sessionId for s in svc.list(wire.ListParams(cwd="/q")).sessions] == ["s5", "s3", "s1"]
    seen, cursor = [], None
    while True:
        page = svc.list(wire.ListParams(all=True, limit=3, cursor=cursor))
        seen += [s.sessionId for s in page.sessions]
        cursor = page.nextCursor
        if cursor is None:
            break
    assert seen == [s.sessionId for s in everything]
    assert [s.sessionId for s in svc.list(wire.ListParams(all=True, query="TOPIC 4")).sessions] == ["s4"]
    with pytest.raises(InvalidParams):
        svc.list(wire.ListParams(cursor="garbage!"))


def test_list_skips_files_that_are_not_sessions(sessions_root, svc):
    write_listed(sessions_root, "ok", "/p", [])
    (sessions_root / encode_cwd("/p") / "junk.jsonl").write_text("not json\n")
    adopt_files(svc)
    assert [s.sessionId for s in svc.list(wire.ListParams(cwd="/p")).sessions] == ["ok"]


def test_continue_recent_opens_the_newest_valid_session_of_a_cwd(sessions_root, svc):
    old = write_listed(sessions_root, "old", "/p", [])
    new = write_listed(sessions_root, "new", "/p", [])
    broken = sessions_root / encode_cwd("/p") / "2026_broken.jsonl"
    broken.write_text("garbage\n")
    os.utime(old, (1_000, 1_000))
    os.utime(new, (2_000, 2_000))
    adopt_files(svc)
    assert svc.continue_recent(wire.ContinueRecentParams(cwd="/p")).sessionId == "new"
    assert stored_at(svc, broken).read_text() == "garbage\n"
    assert svc.continue_recent(wire.ContinueRecentParams(cwd="/nothing/here")) is None


def persisted(svc) -> str:
    sid = new_session(svc)
    append(svc, sid, msg(user("keep me")), msg(assistant()))
    return sid


def test_archive_hides_a_session_and_unarchive_brings_it_back(svc):
    sid = persisted(svc)
    archived = svc.archive(wire.ArchiveParams(sessionId=sid))
    assert Path(archived.path).exists()
    assert svc.list(wire.ListParams(all=True)).sessions == []
    [listed] = svc.list(wire.ListParams(all=True, includeArchived=True)).sessions
    assert listed.archived
    back = svc.unarchive(wire.ArchiveParams(sessionId=sid))
    assert [s.sessionId for s in svc.list(wire.ListParams(all=True)).sessions] == [sid]
    assert context(svc, sid).messages[0]["content"] == "keep me" and Path(back.path).exists()


def test_delete_moves_to_the_trash_and_restore_brings_it_back_intact(svc):
    sid = persisted(svc)
    path = svc.session(sid).path
    content = path.read_bytes()
    trashed = svc.delete(wire.DeleteParams(sessionId=sid))
    assert not path.exists() and Path(trashed.trashPath).read_bytes() == content
    with pytest.raises(SessionNotFound):
        svc.open(wire.OpenParams(sessionId=sid))
    assert svc.list(wire.ListParams(all=True, includeArchived=True)).sessions == []
    svc.restore(wire.RestoreParams(sessionId=sid))
    assert path.read_bytes() == content
    assert svc.open(wire.OpenParams(sessionId=sid)).entryCount == 2


def test_delete_of_an_archived_session_also_goes_to_the_trash(svc):
    sid = persisted(svc)
    svc.archive(wire.ArchiveParams(sessionId=sid))
    trashed = svc.delete(wire.DeleteParams(sessionId=sid))
    assert Path(trashed.trashPath).exists()
    assert svc.restore(wire.RestoreParams(sessionId=sid)).path


def test_migration_backups_travel_with_their_session(sessions_root, svc):
    written = write_listed(
        sessions_root, "v1", "/p", [{"type": "message", "timestamp": stamp(1), "message": user()}], version=None
    )
    adopt_files(svc)
    path = stored_at(svc, written)
    svc.open(wire.OpenParams(sessionId="v1"))
    assert path.with_name(path.name + ".v1.bak").exists()
    trashed = Path(svc.delete(wire.DeleteParams(sessionId="v1")).trashPath)
    assert (trashed.parent / (path.name + ".v1.bak")).exists()
    assert not path.with_name(path.name + ".v1.bak").exists()
    if path == written:  # the file store: the project folder is left empty
        assert not any(path.parent.iterdir())


def test_migration_backups_follow_a_move_to_another_project_folder(sessions_root, svc):
    written = write_listed(
        sessions_root, "v1", "/p", [{"type": "message", "timestamp": stamp(1), "message": user()}], version=None
    )
    original = written.read_bytes()
    adopt_files(svc)
    svc.open(wire.OpenParams(sessionId="v1"))
    moved = Path(svc.move(wire.MoveParams(sessionId="v1", cwd="/q")).path)
    assert moved.parent == stored_at(svc, sessions_root / encode_cwd("/q")) and read_lines(moved)[0]["cwd"] == "/q"
    assert (moved.parent / (moved.name + ".v1.bak")).read_bytes() == original  # the v1 file, kept
    old = stored_at(svc, written)
    assert not old.exists() and not old.with_name(old.name + ".v1.bak").exists()
