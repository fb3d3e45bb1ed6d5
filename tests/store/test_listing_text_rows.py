"""The listing index keeps a file's texts joined in a few rows (indexsearch.text_rows): a query answers as if
each text were its own row, before and after the full-text index is built, whatever the rows' boundaries."""

from __future__ import annotations

import sqlite3

from hypothesis import given
from hypothesis import strategies as st
from session_builders import append, assistant, header, message, msg, new_session, service, user, write_session

from sidecar import wire
from sidecar.store.files.layout import encode_cwd
from sidecar.store.index import search as indexsearch
from sidecar.store.index.search import split_row, text_rows
from sidecar.store.index.sqlite import INDEX_DIR, INDEX_NAME


def listed(svc, **params):
    return svc.list(wire.ListParams(all=True, limit=1000, **params)).sessions


def found(svc, query):
    return {s.sessionId: s.snippet for s in listed(svc, query=query)}


@given(st.lists(st.text(min_size=0, max_size=40), max_size=30), st.integers(min_value=1, max_value=64))
def test_rows_give_back_every_text_in_order(texts, row_chars):
    original = indexsearch._ROW_CHARS
    indexsearch._ROW_CHARS = row_chars
    try:
        rows = text_rows(7 << indexsearch.SHIFT, texts)
    finally:
        indexsearch._ROW_CHARS = original
    assert [rowid for rowid, _, _ in rows] == [(7 << indexsearch.SHIFT) + n for n in range(len(rows))]
    assert [part for _, joined, lengths in rows for part in split_row(joined, lengths)] == texts


def test_a_needle_holding_a_newline_matches_within_one_text_never_across_two(sessions_root):
    folder = sessions_root / encode_cwd("/work/p")
    write_session(
        folder / "2025-01-01T00-00-01-000Z_across.jsonl",
        header("across", cwd="/work/p"),
        [
            message("u1", None, user("the first ends with ab", timestamp=10)),
            message("a1", "u1", assistant("cd begins the second"), 1),
        ],
    )
    write_session(
        folder / "2025-01-01T00-00-02-000Z_within.jsonl",
        header("within", cwd="/work/p"),
        [
            message("u1", None, user("one text: ab\ncd inside", timestamp=20)),
        ],
    )
    svc = service(sessions_root)
    svc.store.catalog.index.search_builder.stop()
    for built in (False, True):
        if built:
            svc.store.catalog.index.build_search()
        assert found(svc, "AB\nCD") == {"within": "one text: **ab\ncd** inside"}, built
        assert found(svc, "b\nc") == {"within": "one text: a**b\nc**d inside"}, built  # the walk and the set alike
        assert set(found(svc, "ab")) == {"across", "within"}, built
    svc.store.catalog.index.close()


def test_a_file_of_many_rows_answers_in_message_order(sessions_root, monkeypatch):
    monkeypatch.setattr(indexsearch, "_ROW_CHARS", 50)  # a row every two texts
    texts = [f"message number {n} says {'Needle' if n in (5, 9) else 'nothing'}" for n in range(12)]
    write_session(
        sessions_root / encode_cwd("/work/p") / "2025-01-01T00-00-01-000Z_long.jsonl",
        header("long", cwd="/work/p"),
        [message(f"u{n}", f"u{n - 1}" if n else None, user(text, timestamp=n + 1)) for n, text in enumerate(texts)],
    )
    svc = service(sessions_root)
    listed(svc)
    conn = sqlite3.connect(sessions_root / INDEX_DIR / INDEX_NAME)
    assert conn.execute("SELECT count(*) FROM pending").fetchone()[0] == 6
    assert conn.execute("SELECT text_seq FROM files").fetchone()[0] == 6
    for built in (False, True):
        if built:
            svc.store.catalog.index.build_search()
            assert conn.execute("SELECT count(*) FROM texts").fetchone()[0] == 6
        assert found(svc, "needle") == {"long": "message number 5 says **Needle**"}, built
        assert found(svc, "number 9 says") == {"long": "message **number 9 says** Needle"}, built
    conn.close()
    svc.store.catalog.index.close()


def test_each_append_adds_a_row_after_the_files_rows(sessions_root):
    svc = service(sessions_root)
    sid = new_session(svc)
    append(svc, sid, msg(user("first words")), msg(assistant("second words")))
    listed(svc)
    svc.store.catalog.index.build_search()
    append(svc, sid, msg(user("a later Marker")), msg(assistant("and another Marker")))
    append(svc, sid, msg(user("the last Marker")))
    conn = sqlite3.connect(sessions_root / INDEX_DIR / INDEX_NAME)
    pending = conn.execute("SELECT id & 0xFFFFFFFF, text, lengths FROM pending ORDER BY id").fetchall()
    assert pending == [(1, "a later Marker\nand another Marker", "14 18"), (2, "the last Marker", None)]
    assert conn.execute("SELECT text_seq FROM files").fetchone()[0] == 3
    conn.close()
    for built in (False, True):
        if built:
            svc.store.catalog.index.build_search()
        assert found(svc, "marker") == {sid: "a later **Marker**"}, built
        assert found(svc, "words") == {sid: "first **words**"}, built
        assert found(svc, "last marker") == {sid: "the **last Marker**"}, built
    svc.store.catalog.index.close()
