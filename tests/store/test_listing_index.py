"""The listing index: session/list served from sqlite, kept fresh by our writes, rebuilt from the files."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from session_builders import (
    adopt_files,
    append,
    assistant,
    header,
    message,
    msg,
    new_session,
    service,
    stamp,
    user,
    write_session,
)

from sidecar import wire
from sidecar.store.compat import listed_name
from sidecar.store.files.layout import encode_cwd
from sidecar.store.index.listing import summarize
from sidecar.store.index.sqlite import INDEX_DIR, INDEX_NAME


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
            name = listed_name("pi", s.titled, s.name, s.title)  # one name, as pi reads it (a pi root)
            out[s.session_id] = (
                s.path,
                s.cwd,
                s.created,
                s.message_count,
                s.first_message,
                name,
                name,
                s.parent_session,
            )
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
    append(
        svc,
        sid,
        msg(user("how do I parse")),
        msg(
            assistant("like this", usage={"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15})
        ),
    )
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
        sessions_root / encode_cwd("/elsewhere") / "2025-01-01T00-00-00-000Z_other.jsonl",
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


def test_an_index_of_an_older_version_is_made_anew_and_gives_its_space_back(sessions_root):
    """A sidecar whose index tables changed since (schema 5: no trigram positions) finds an older index
    file: its tables are made anew from the files, and the file shrinks instead of keeping their pages free."""
    svc = service(sessions_root)
    sid = new_session(svc)
    append(svc, sid, msg(user("kept after the upgrade")), msg(assistant("ok")))
    expected = as_tuples(listed(svc))
    svc.close_all()
    svc.store.catalog.index.close()
    index_file = sessions_root / INDEX_DIR / INDEX_NAME
    old = sqlite3.connect(index_file)
    old.execute("CREATE TABLE rows_of_old(text TEXT)")  # an older version's bulk
    old.executemany("INSERT INTO rows_of_old VALUES (?)", ((f"{n:06d}" * 700,) for n in range(2_000)))
    old.execute("PRAGMA user_version=4")
    old.commit()
    old.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    old.close()
    grown = index_file.stat().st_size
    assert grown > 8_000_000
    again = service(sessions_root)
    assert as_tuples(listed(again)) == expected
    assert [s.sessionId for s in again.list(wire.ListParams(all=True, query="after the upgrade")).sessions] == [sid]
    again.store.catalog.index.close()
    assert index_file.stat().st_size < grown / 8
    check = sqlite3.connect(index_file)
    assert check.execute("PRAGMA user_version").fetchone()[0] >= 5
    assert check.execute("SELECT count(*) FROM sqlite_master WHERE name = 'rows_of_old'").fetchone()[0] == 0
    check.close()


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
        capture_output=True,
        text=True,
        check=True,
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
    assert sqlite3.connect(sessions_root / INDEX_DIR / INDEX_NAME).execute("PRAGMA integrity_check").fetchone() == (
        "ok",
    )


def test_paging_through_the_index_keeps_pis_order(svc, sessions_root):
    for i in range(7):
        write_session(
            sessions_root / encode_cwd(f"/p{i % 3}") / f"2025-01-01T00-00-0{i}-000Z_s{i}.jsonl",
            header(f"s{i}", cwd=f"/p{i % 3}", timestamp=stamp(i)),
            [message("u", None, user(f"m{i}", timestamp=1_000 * (i % 4)), 1)],
        )
    adopt_files(svc)
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
    keys = [
        (
            -int(__import__("datetime").datetime.fromisoformat(s.modified.replace("Z", "+00:00")).timestamp() * 1000),
            s.path,
        )
        for s in infos
    ]
    assert keys == sorted(keys)


def test_texts_wait_for_the_first_query_and_a_changed_file_replaces_its_texts(sessions_root):
    svc = service(sessions_root)
    sid = new_session(svc)
    append(svc, sid, msg(user("the needle is here")), msg(assistant("ok")))
    listed(svc)
    conn = sqlite3.connect(sessions_root / INDEX_DIR / INDEX_NAME)
    # The file's two texts in one row (joined, with their lengths).
    assert conn.execute("SELECT text, lengths FROM pending").fetchall() == [("the needle is here\nok", "18 2")]
    assert conn.execute("SELECT count(*) FROM texts").fetchone() == (0,)
    [found] = listed(svc, query="needle")
    assert found.sessionId == sid and found.snippet == "the **needle** is here"
    assert conn.execute("SELECT count(*) FROM pending").fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM texts").fetchone() == (1,)
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


def test_a_query_walks_the_newest_sessions_then_asks_the_full_text_index_with_one_answer(svc, sessions_root):
    """Matches near the top are found by reading the newest sessions, the rarer rest by the trigram index
    (indexed or still pending texts, names, titles, ids): every page together is exactly what pi's rule selects
    from the files, in pi's order, and each snippet is cut around the first matching message."""
    import random

    from sidecar.store.index.listing import matches, sort_key

    rng = random.Random(7)
    for i in range(180):
        sid = f"q{i:03d}"
        texts = ["plain words", "more plain words"]
        if i < 20 or rng.random() < 0.08:
            texts[rng.randrange(2)] = f"here is the Straße Needle {i}"
        extra = {"title": "a NEEDLE title"} if i % 41 == 5 else {}
        write_session(
            sessions_root / encode_cwd(f"/p{i % 4}") / f"2025-01-01T00-00-00-000Z_{sid}.jsonl",
            header(sid, cwd=f"/p{i % 4}", timestamp=stamp(i % 60), **extra),
            [
                message("u", None, user(texts[0], timestamp=1_000_000 - 997 * i % 50_000)),
                message("a", "u", assistant(texts[1]), 1),
            ],
        )
    listed(svc)  # the rows; texts still pending
    summaries = [
        summarize(p, p.read_bytes(), p.stat().st_mtime_ns // 1_000_000) for p in sessions_root.glob("*/*.jsonl")
    ]
    for query in ("straße needle", "NEEDLE", "ss", "q17", "nothing like it"):
        expected = [s.session_id for s in sorted((s for s in summaries if matches(s, query)), key=sort_key)]
        for built in (False, True):
            if built:
                svc.store.catalog.index.build_search()
            seen = queried_pages(svc, query, 7)
            assert [s.sessionId for s in seen] == expected, (query, built)
            for info in seen:
                if "Needle" in (info.firstMessage or "") and query.casefold() in "straße needle":
                    highlighted = "**Straße Needle**" if query == "straße needle" else "**Needle**"
                    assert highlighted in info.snippet
    assert len([s for s in summaries if matches(s, "straße needle")]) > 30  # past the first pages' walk


def test_a_large_session_is_indexed_from_its_mapped_file_as_from_its_bytes(svc, sessions_root):
    """Past the mapping threshold the index reads a file a line at a time from a map (a 1 GB session is
    never held whole): its row and its texts are what reading the bytes gives, last line unterminated too."""
    from sidecar.format.jsonl import MAP_THRESHOLD
    from sidecar.store.index.listing import summarize_full

    entries, parent = [], None
    for n in range(400):
        body = (
            user(f"question {n} " + "padding words " * 60, timestamp=1_000 + n)
            if n % 2 == 0
            else assistant(f"answer {n} with the needle-{n}", usage={"totalTokens": 10 + n})
        )
        entries.append(message(f"e{n}", parent, body, n % 60))
        parent = f"e{n}"
    entries.insert(
        7, {"type": "session_info", "id": "info", "parentId": "e5", "timestamp": stamp(3), "name": "big one"}
    )
    path = write_session(
        sessions_root / encode_cwd("/big") / "2025-01-01T00-00-00-000Z_big.jsonl", header("big", cwd="/big"), entries
    )
    path.write_bytes(path.read_bytes().rstrip(b"\n"))  # the last line without its newline
    assert path.stat().st_size > MAP_THRESHOLD
    [row] = listed(svc)
    assert as_tuples([row]) == from_files(sessions_root)
    data = path.read_bytes()
    summary, acc, texts = summarize_full(path, data, 0)
    assert (row.messageCount, row.name, row.firstMessage) == (acc.count, "big one", acc.first)
    assert [s.sessionId for s in listed(svc, query="needle-399")] == ["big"]  # the unterminated last line's text
    assert len(texts) == 400


def test_the_trigram_index_names_rows_that_the_texts_then_must_bear_out(svc, sessions_root):
    """Past the walk, the full-text index (which keeps no positions) is asked for the rows holding each
    of the query's trigrams; a row holding them all but not the query itself is not an answer. Checked
    with a decoy per query, a query with quotes, and one longer than the trigrams looked up."""
    from sidecar.store.index.listing import matches, sort_key
    from sidecar.trigrams import MAX_TERMS as MAX_GRAMS

    long_needle = " ".join(f"w{n:02d}" for n in range(40))  # 119 characters: more trigrams than MAX_GRAMS
    assert len(long_needle) - 2 > MAX_GRAMS
    cases = {
        "zqxzq": ("a zqxzq here", "zqxz and xzq"),  # the decoy holds zqx, qxz and xzq, never zqxzq
        'say "hi" now': ('they say "hi" now', 'say "hi"  now, "hi" now'),
        long_needle: (f"<{long_needle}>", long_needle.replace("w20", "w2 0")),
        # FTS5 indexes no text past a NUL: such a query reads the texts themselves.
        "ul\x00inside": ("a nul\x00inside here", "ul inside"),
    }
    old = [(query, text) for query, pair in cases.items() for text in reversed(pair)]  # each decoy the newer
    for i in range(60 + len(old)):  # the matching sessions are the oldest: beyond the walk of a page of 1
        sid = f"t{i:03d}"
        text = old[i - 60][1] if i >= 60 else f"filler {i}"
        write_session(
            sessions_root / encode_cwd("/t") / f"2025-01-01T00-00-00-000Z_{sid}.jsonl",
            header(sid, cwd="/t", timestamp=stamp(0)),
            [message("u", None, user(text, timestamp=2_000_000 - 1000 * i)), message("a", "u", assistant("ok"), 1)],
        )
    listed(svc)
    svc.store.catalog.index.build_search()
    summaries = [
        summarize(p, p.read_bytes(), p.stat().st_mtime_ns // 1_000_000) for p in sessions_root.glob("*/*.jsonl")
    ]
    for query in cases:
        expected = [s.session_id for s in sorted((s for s in summaries if matches(s, query)), key=sort_key)]
        assert len(expected) == 1, query  # the decoy is no match by pi's rule
        assert [s.sessionId for s in queried_pages(svc, query, 1)] == expected, query
    # NUL ends FTS5's reading of its query: such a query is answered from the texts, the index kept.
    for query in ("\x00zqx", "zqx\x00zq", "zqxzq\x00"):
        assert queried_pages(svc, query, 1) == [], repr(query)
    check = sqlite3.connect(sessions_root / INDEX_DIR / INDEX_NAME)
    assert check.execute("SELECT count(*) FROM pending").fetchone() == (0,)  # not rebuilt (its texts pending again)
    assert check.execute("SELECT count(*) FROM texts").fetchone()[0] > 0
    check.close()


def queried_pages(svc, query: str, limit: int) -> list:
    """Every session ``query`` finds, page after page of ``limit``."""
    seen, cursor = [], None
    while True:
        page = svc.list(wire.ListParams(all=True, limit=limit, query=query, cursor=cursor))
        seen += page.sessions
        cursor = page.nextCursor
        if cursor is None:
            return seen
