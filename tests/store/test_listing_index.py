"""The listing index: session/list served from sqlite, kept fresh by our writes, rebuilt from the files."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from session_builders import append, assistant, header, message, msg, new_session, service, stamp, user, write_session

from sidecar import wire
from sidecar.store.index import INDEX_DIR, INDEX_NAME
from sidecar.store.layout import encode_cwd
from sidecar.store.listing import summarize


@pytest.fixture
def svc(sessions_root):
    return service(sessions_root)


def listed(svc, **params):
    return svc.list(wire.ListParams(all=True, limit=1000, **params)).sessions


def from_files(root: Path, archived: bool = False) -> dict[str, tuple]:
    """What pi's rules give for every live file, read whole (the reference the index must agree with)."""
    out = {}
    for path in sorted(root.glob("*/*.jsonl")):
        s = summarize(path, path.read_bytes(), path.stat().st_mtime_ns // 1_000_000)
        if s is not None:
            out[s.session_id] = (s.path, s.cwd, s.created, s.message_count, s.first_message, s.name, s.title, s.parent_session)
    return out


def as_tuples(sessions) -> dict[str, tuple]:
    return {
        s.sessionId: (s.path, s.cwd, s.created, s.messageCount, s.firstMessage, s.name, s.title, s.parentSession)
        for s in sessions
    }


def index_rows(root: Path) -> dict[str, int]:
    conn = sqlite3.connect(root / INDEX_DIR / INDEX_NAME)
    try:
        return dict(conn.execute("SELECT session_id, message_count FROM files WHERE is_session=1"))
    finally:
        conn.close()


def test_appends_update_the_index_in_the_same_step_and_agree_with_the_files(svc, sessions_root):
    sid = new_session(svc, name="first name")
    append(svc, sid, msg(user("how do I parse")), msg(assistant("like this", usage={"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15})))
    assert listed(svc)[0].messageCount == 2
    append(svc, sid, msg(user("and then?")))
    svc.set_name(wire.SetNameParams(sessionId=sid, name="renamed"))
    # The row changed with the write, before any list looked at the file.
    assert index_rows(sessions_root)[sid] == 3
    sessions = listed(svc)
    assert as_tuples(sessions) == from_files(sessions_root)
    assert sessions[0].name == "renamed" and sessions[0].firstMessage == "how do I parse"
    conn = sqlite3.connect(sessions_root / INDEX_DIR / INDEX_NAME)
    assert conn.execute("SELECT tokens_total, tokens_last FROM files WHERE session_id=?", (sid,)).fetchone() == (15, 15)
    conn.close()


def test_a_file_changed_behind_our_back_is_read_again(svc, sessions_root):
    sid = new_session(svc)
    append(svc, sid, msg(user("one")), msg(assistant("two")))
    [before] = listed(svc)
    assert before.messageCount == 2
    path = Path(before.path)
    # Another program appends two messages, and drops in a new session; a third file vanishes.
    with open(path, "a") as out:
        out.write(json.dumps(message("x1", None, user("written elsewhere", timestamp=1_900_000_000_000))) + "\n")
        out.write(json.dumps(message("x2", "x1", assistant("ok"))) + "\n")
    other = write_session(
        sessions_root / encode_cwd("/elsewhere") / f"2025-01-01T00-00-00-000Z_other.jsonl",
        header("other", cwd="/elsewhere"),
        [message("a", None, user("dropped in"), 1)],
    )
    sessions = {s.sessionId: s for s in listed(svc)}
    assert sessions[sid].messageCount == 4
    assert sessions[sid].modified.startswith("2030-03-17")  # the new user message's own time
    assert sessions["other"].firstMessage == "dropped in"
    other.unlink()
    assert [s.sessionId for s in listed(svc)] == [sid]
    assert as_tuples(listed(svc)) == from_files(sessions_root)


def test_a_damaged_index_is_rebuilt_from_the_files(sessions_root):
    svc = service(sessions_root)
    ids = [new_session(svc, cwd=f"/p{i}") for i in range(3)]
    for i, sid in enumerate(ids):
        append(svc, sid, msg(user(f"topic {i}")), msg(assistant("ok")))
    expected = as_tuples(listed(svc))
    svc.close_all()
    svc.store.catalog.index.close()
    index_file = sessions_root / INDEX_DIR / INDEX_NAME
    index_file.write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(str(index_file) + suffix).unlink(missing_ok=True)
    again = service(sessions_root)
    assert as_tuples(listed(again)) == expected
    check = sqlite3.connect(index_file)
    assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    check.close()
    # Damaged while open (truncated under the connection): the next list still answers from the files.
    again.store.catalog.index.close()
    index_file.write_bytes(b"")
    assert as_tuples(listed(again)) == expected


def test_a_missing_index_is_rebuilt_and_reindex_rebuilds_on_demand(sessions_root):
    svc = service(sessions_root)
    sid = new_session(svc)
    append(svc, sid, msg(user("hello there")), msg(assistant("hi")))
    svc.close_all()
    svc.store.catalog.index.close()
    for path in (sessions_root / INDEX_DIR).iterdir():
        if path.is_file():  # the index's files; trees/ (tree caches) is not the listing index
            path.unlink()
    assert [s.sessionId for s in listed(service(sessions_root))] == [sid]
    result = subprocess.run(
        [sys.executable, "-m", "sidecar", "reindex", "--root", str(sessions_root)],
        capture_output=True, text=True, check=True,
    )
    assert "indexed 1 sessions" in result.stdout
    assert index_rows(sessions_root) == {sid: 2}


def test_query_matches_substrings_and_returns_snippets(svc):
    a = new_session(svc, cwd="/a")
    append(svc, a, msg(user("Please refactor the Tokenizer module so that it streams")), msg(assistant("done")))
    b = new_session(svc, cwd="/b", name="tokenizer notes")
    append(svc, b, msg(user("unrelated words")), msg(assistant("fine")))
    c = new_session(svc, cwd="/c")
    append(svc, c, msg(user("nothing here")), msg(assistant("Über große Dinge")))
    found = {s.sessionId: s for s in listed(svc, query="tokenIZER")}
    assert set(found) == {a, b}
    assert found[a].snippet.startswith("Please refactor the **Tokenizer** module") and found[a].snippet.endswith("…")
    assert found[b].snippet is None  # matched by its name only
    assert [s.sessionId for s in listed(svc, query="große")] == [c]
    assert "**große**" in listed(svc, query="große")[0].snippet
    # Two characters: below the trigram index, still a substring match.
    short = listed(svc, query="Üb")
    assert [s.sessionId for s in short] == [c] and "**Üb**" in short[0].snippet
    assert listed(svc, query='say "quoted"') == []
    # Text appended after the first list is found too (the index took it with the append).
    append(svc, c, msg(user("a freshly appended needle")))
    assert [s.sessionId for s in listed(svc, query="freshly appended")] == [c]


def test_archive_delete_restore_and_fork_lineage_show_in_the_index(svc, sessions_root):
    sid = new_session(svc)
    append(svc, sid, msg(user("root")), msg(assistant("ok")))
    forked = svc.fork(wire.ForkParams(sessionId=sid))
    assert svc.store.catalog.index.lineage(sid) == [forked.sessionId]
    svc.archive(wire.ArchiveParams(sessionId=sid))
    assert [s.sessionId for s in listed(svc)] == [forked.sessionId]
    assert {s.sessionId: s.archived for s in listed(svc, includeArchived=True)} == {sid: True, forked.sessionId: False}
    svc.delete(wire.DeleteParams(sessionId=forked.sessionId))
    assert [s.sessionId for s in listed(svc, includeArchived=True)] == [sid]
    svc.restore(wire.RestoreParams(sessionId=forked.sessionId))
    svc.unarchive(wire.ArchiveParams(sessionId=sid))
    sessions = listed(svc)
    assert {s.sessionId for s in sessions} == {sid, forked.sessionId}
    assert as_tuples(sessions) == from_files(sessions_root)


def test_two_services_on_one_root_share_the_index(sessions_root):
    one, two = service(sessions_root), service(sessions_root)
    a = new_session(one, cwd="/one")
    append(one, a, msg(user("from one")), msg(assistant("ok")))
    b = new_session(two, cwd="/two")
    append(two, b, msg(user("from two")), msg(assistant("ok")))
    for _ in range(5):
        append(one, a, msg(user("more")))
        append(two, b, msg(user("more")))
    expected = from_files(sessions_root)
    assert as_tuples(listed(one)) == expected == as_tuples(listed(two))
    assert index_rows(sessions_root) == {a: 7, b: 7}
    assert sqlite3.connect(sessions_root / INDEX_DIR / INDEX_NAME).execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_paging_through_the_index_keeps_pis_order(svc, sessions_root):
    for i in range(7):
        write_session(
            sessions_root / encode_cwd(f"/p{i % 3}") / f"2025-01-01T00-00-0{i}-000Z_s{i}.jsonl",
            header(f"s{i}", cwd=f"/p{i % 3}", timestamp=stamp(i)),
            [message("u", None, user(f"m{i}", timestamp=1_000 * (i % 4)), 1)],
        )
    everything = [s.sessionId for s in listed(svc)]
    seen, cursor = [], None
    while True:
        page = svc.list(wire.ListParams(all=True, limit=3, cursor=cursor))
        seen += [s.sessionId for s in page.sessions]
        cursor = page.nextCursor
        if cursor is None:
            break
    assert seen == everything and len(seen) == 7
    infos = listed(svc)
    keys = [(-int(__import__("datetime").datetime.fromisoformat(s.modified.replace("Z", "+00:00")).timestamp() * 1000), s.path) for s in infos]
    assert keys == sorted(keys)


def test_texts_wait_for_the_first_query_and_a_changed_file_replaces_its_texts(sessions_root):
    svc = service(sessions_root)
    sid = new_session(svc)
    append(svc, sid, msg(user("the needle is here")), msg(assistant("ok")))
    listed(svc)
    conn = sqlite3.connect(sessions_root / INDEX_DIR / INDEX_NAME)
    assert conn.execute("SELECT count(*) FROM pending").fetchone() == (2,)
    assert conn.execute("SELECT count(*) FROM texts").fetchone() == (0,)
    [found] = listed(svc, query="needle")
    assert found.sessionId == sid and found.snippet == "the **needle** is here"
    assert conn.execute("SELECT count(*) FROM pending").fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM texts").fetchone() == (2,)
    # A file read again replaces its texts: no hit is left over from before.
    path = Path(found.path)
    path.write_text(path.read_text().replace("needle", "thread"))
    assert listed(svc, query="needle") == []
    assert [s.sessionId for s in listed(svc, query="thread")] == [sid]
    conn.close()


def test_an_index_locked_by_another_process_falls_back_to_the_files(sessions_root):
    svc = service(sessions_root)
    sid = new_session(svc)
    append(svc, sid, msg(user("one")), msg(assistant("two")))
    assert listed(svc)[0].messageCount == 2
    svc.store.catalog.index.close()
    svc.store.catalog.index.busy_ms = 50
    holder = sqlite3.connect(sessions_root / INDEX_DIR / INDEX_NAME, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another sidecar in the middle of a long write
    try:
        append(svc, sid, msg(user("three")))  # the append is not held up by the index
        [during] = listed(svc)
        assert during.messageCount == 3 and during.firstMessage == "one"
        assert [s.sessionId for s in listed(svc, query="three")] == [sid]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    # Once free, the index catches up with the file it missed.
    [after] = listed(svc)
    assert after.messageCount == 3
    assert index_rows(sessions_root) == {sid: 3}
