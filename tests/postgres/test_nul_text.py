"""NUL in what a session holds, on PostgreSQL: its text columns cannot hold the character, its lines can.

A message text, a session name and a label holding NUL were an internal error (psycopg's DataError)
at the first append that folded them into the session row. Now the row's text columns (first message,
name, title, cwd) and the query texts leave NUL out, and the lines keep it byte for byte."""

from __future__ import annotations

from pathlib import Path

from session_builders import append, assistant, msg, new_session, service, user

from sidecar import wire


def test_nul_in_texts_names_and_labels_is_stored_and_listed(pg_url: str, tmp_path: Path) -> None:
    pg = service(tmp_path / "pg", databaseUrl=pg_url)
    try:
        sid = new_session(pg, cwd="/work/nul", name="plan\x00B")
        ids = append(pg, sid, msg(user("split on \x00 bytes")), msg(assistant("done\x00")))
        pg.set_label(wire.SetLabelParams(sessionId=sid, entryId=ids[0], label="l\x00"))
        pg.set_name(wire.SetNameParams(sessionId=sid, name="name\x00C"))
        append(pg, sid, msg(user("and again")))
        entries = pg.get_entries(wire.GetEntriesParams(sessionId=sid)).entries
        texts = [e["message"]["content"] for e in entries if e.get("type") == "message"]
        assert texts[0] == "split on \x00 bytes" and texts[1][0]["text"] == "done\x00"  # the lines keep it
        listed = {s.sessionId: s for s in pg.list(wire.ListParams(all=True)).sessions}[sid]
        assert listed.firstMessage == "split on  bytes" and listed.name == "nameC"
        found = pg.list(wire.ListParams(all=True, query="on  by")).sessions
        assert [s.sessionId for s in found] == [sid]
        pg.store.close_all()
        reopened = pg.open(wire.OpenParams(sessionId=sid))
        assert reopened.entryCount == len(entries) and reopened.parseErrors == 0
        assert pg.get_entries(wire.GetEntriesParams(sessionId=sid)).entries == entries  # read back from the rows
    finally:
        pg.store.close_all()
