"""session/list's query on PostgreSQL matches what the file store matches: Unicode casefolding
("STRASSE" finds "straße"), not lower(). The same sessions go into both stores and the same
queries are asked of both; the answers (which sessions, in which order, with which snippet)
must be the same."""

from __future__ import annotations

from pathlib import Path

import psycopg
from session_builders import append, assistant, msg, new_session, service, user

from sidecar import wire
from sidecar.store.postgres.db import connect_checked
from sidecar.store.postgres.schema import ensure_schema

# (session id, name, user text, assistant text): casefolding differs from lower() in each.
SESSIONS = [
    ("s-strasse", None, "Wir wohnen in der Hauptstraße 5", "gut"),
    ("s-name", "Große Pläne", "nothing special here", "ok"),
    ("s-ligature", None, "the ﬁle was moved", "fine"),
    ("s-sigma", None, "ΟΔΥΣΣΕΥΣ sailed", "and came home"),
    ("s-kelvin", None, "it was 300 \u212a outside", "cold"),
    ("s-plain", "plain notes", "the STRASSE sign", "Straße again in the reply"),
]
QUERIES = [
    "STRASSE",
    "strasse",
    "Straße",
    "HAUPTSTRASSE 5",
    "GROSSE",
    "große pläne",
    "file",
    "FILE",
    "οδυσσευς",
    "ΟΔΥΣΣΕΥΣ",
    "300 k",
    "notes",
    "S-KELVIN",
    "ss",
    "nothing at all",
    "strasse\x00",
    "\x00",
]  # (PostgreSQL's text holds no NUL; SQLite's FTS5 reads a C string)


def fill(svc) -> None:
    for n, (session_id, name, asked, answered) in enumerate(SESSIONS):
        params = {"sessionId": session_id} | ({"name": name} if name else {})
        new_session(svc, cwd=f"/work/p{n}", **params)
        append(
            svc,
            session_id,
            msg(user(asked, timestamp=1_700_000_000_000 + n * 10)),
            msg(assistant(answered) | {"timestamp": 1_700_000_000_001 + n * 10}),
        )


def answers(svc, query: str) -> list[tuple[str, str | None]]:
    found = svc.list(wire.ListParams(all=True, limit=100, query=query)).sessions
    return [(s.sessionId, s.snippet) for s in found]


def test_both_stores_answer_every_query_alike(pg_url: str, tmp_path: Path) -> None:
    files = service(tmp_path / "files")
    pg = service(tmp_path / "pg", databaseUrl=pg_url)
    try:
        fill(files)
        fill(pg)
        for query in QUERIES:
            assert answers(pg, query) == answers(files, query), query
        # Not vacuous: the queries lower() gets wrong are found, by name and by text.
        assert [sid for sid, _ in answers(pg, "STRASSE")] == ["s-plain", "s-strasse"]
        assert dict(answers(pg, "STRASSE"))["s-strasse"] == "Wir wohnen in der Haupt**straße** 5"
        assert [sid for sid, _ in answers(pg, "GROSSE")] == ["s-name"]
        assert [sid for sid, _ in answers(pg, "FILE")] == ["s-ligature"]
        assert [sid for sid, _ in answers(pg, "300 k")] == ["s-kelvin"]
        assert answers(pg, "nothing at all") == []
    finally:
        files.store.close_all()
        pg.store.close_all()


def test_a_version_1_database_is_casefolded_when_migrated(pg_url: str) -> None:
    """Rows written before schema version 2 get their casefolded copies at start-up."""
    from sidecar.store.postgres import schema

    with psycopg.connect(pg_url, autocommit=True) as conn, conn.transaction():
        conn.execute(
            "CREATE TABLE sidecar_schema (version integer PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())"
        )
        for step in schema.MIGRATIONS[0]:
            conn.execute(step)
        conn.execute("INSERT INTO sidecar_schema (version) VALUES (1)")
        conn.execute(
            "INSERT INTO sidecar_sessions (id, folder, file_name, name) VALUES ('old', '--w--', 'x_old.jsonl', 'Große')"
        )
        conn.execute("INSERT INTO sidecar_texts (session_id, seq, text) VALUES ('old', 1, 'die Straße')")
    database = connect_checked(pg_url)
    try:
        assert ensure_schema(database) == 1
        rows = database.read(
            lambda conn: conn.execute(
                "SELECT s.name_folded, t.folded FROM sidecar_sessions s JOIN sidecar_texts t ON t.session_id = s.id"
            ).fetchall()
        )
        assert rows == [("grosse", "die strasse")]
    finally:
        database.close()
