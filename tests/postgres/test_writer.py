"""The PostgreSQL writer: schema versions, one writer per session by lease and fence,
read-only openers catching up, the listing in SQL (issue 12 parts 2 and 3)."""

from __future__ import annotations

import json
import time

import psycopg
import pytest

from sidecar.errors import SessionExists, SessionLocked, SessionNotFound
from sidecar.store.postgres.db import Database, DatabaseSchemaMismatch, check_url, connect_checked
from sidecar.store.postgres.listing import list_page, sort_key
from sidecar.store.postgres.rows import Placement
from sidecar.store.postgres.schema import SCHEMA_VERSION, ensure_schema
from sidecar.store.postgres.writer import PgWriter, open_stored, read_since


def header(session_id: str, cwd: str = "/work/proj") -> bytes:
    return json.dumps(
        {"type": "session", "version": 3, "id": session_id, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": cwd},
        separators=(",", ":"),
    ).encode()


def message(entry_id: str, parent: str | None, role: str, text: str, ts: int) -> bytes:
    return json.dumps(
        {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": role, "content": text, "timestamp": ts},
        },
        separators=(",", ":"),
    ).encode()


@pytest.fixture
def db(pg_url: str):
    database = connect_checked(pg_url, timeout=5)
    ensure_schema(database)
    yield database
    database.close()


def new_writer(db: Database, session_id: str, owner: str, lease: float = 30.0) -> PgWriter:
    writer = PgWriter(db, session_id, Placement("live", "--work-proj--", f"2026_{session_id}.jsonl"), owner, lease)
    writer.create(header(session_id) + b"\n" + message("u1", None, "user", "hello there", 1000) + b"\n")
    return writer


def take(db: Database, session_id: str, owner: str, lease: float = 30.0) -> PgWriter:
    stored = open_stored(db, session_id, owner, lease)
    return PgWriter(db, session_id, stored.placement, owner, lease, stored=stored)


def test_schema_is_made_once_and_a_newer_or_foreign_one_is_refused(pg_url: str) -> None:
    database = connect_checked(pg_url)
    assert ensure_schema(database) == 0
    assert ensure_schema(database) == SCHEMA_VERSION
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("INSERT INTO sidecar_schema (version) VALUES (%s)", (SCHEMA_VERSION + 1,))
    with pytest.raises(DatabaseSchemaMismatch, match="newer than this session-sidecar knows"):
        ensure_schema(database)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DROP TABLE sidecar_schema")
    with pytest.raises(DatabaseSchemaMismatch, match="not made by session-sidecar"):
        ensure_schema(database)


def test_url_checks() -> None:
    from sidecar.store.postgres.db import DatabaseUrlInvalid

    for bad in ("", "http://x/y", "postgresql://u:p@h:/db", "postgresql://u:secret@h:5432"):
        with pytest.raises(DatabaseUrlInvalid) as caught:
            check_url(bad)
        assert "secret" not in caught.value.message
    assert check_url("postgresql://u:secret@h:5432/db").shown == "postgresql://u:***@h:5432/db"


def test_one_writer_and_a_read_only_opener_that_catches_up(db: Database) -> None:
    a = new_writer(db, "s1", "host-a")
    with pytest.raises(SessionLocked, match="held for writing by another sidecar"):
        open_stored(db, "s1", "host-b", 30)
    with pytest.raises(SessionExists):
        new_writer(db, "s1", "host-b")
    reader = open_stored(db, "s1", None, 30)
    seen = reader.row["line_count"]
    a.append([message("a1", "u1", "assistant", "hi", 2000)], durable=True)
    lines, count, tail = read_since(db, "s1", seen)
    assert [json.loads(x)["id"] for x in lines] == ["a1"] and count == seen + 1 and tail == b""
    a.close()
    b = take(db, "s1", "host-b")
    assert b.fence == 2 and b.line_count == 3


def test_a_writer_whose_lease_was_taken_can_never_append_again(db: Database) -> None:
    a = new_writer(db, "s2", "host-a", lease=0.2)
    a.append([message("a1", "u1", "assistant", "one", 2000)], durable=True)
    time.sleep(0.3)  # a is paused past its lease
    b = take(db, "s2", "host-b")
    b.append([message("b1", "a1", "user", "two", 3000)], durable=True)
    with pytest.raises(SessionLocked, match="no longer held by this sidecar") as lost:
        a.append([message("a2", "a1", "assistant", "late", 4000)], durable=True)
    assert lost.value.data["leaseLost"] is True
    with pytest.raises(SessionLocked):  # latched: every later call too
        a.append([message("a3", "a1", "assistant", "later", 5000)], durable=True)
    data = open_stored(db, "s2", None, 30).data
    ids = [json.loads(line).get("id") for line in data.splitlines()]
    assert ids == ["s2", "u1", "a1", "b1"]
    a.close()  # releasing a lost lease leaves the new owner's alone
    with pytest.raises(SessionLocked):
        open_stored(db, "s2", "host-c", 30)


def test_an_expired_lease_nobody_took_still_appends(db: Database) -> None:
    a = new_writer(db, "s3", "host-a", lease=0.1)
    time.sleep(0.2)
    a.append([message("a1", "u1", "assistant", "still mine", 2000)], durable=True)
    assert open_stored(db, "s3", None, 30).row["line_count"] == 3


def test_listing_fields_query_snippet_and_cursor(db: Database) -> None:
    for n in range(5):
        w = new_writer(db, f"l{n}", "host-a")
        w.append(
            [message(f"a{n}", "u1", "assistant", f"answer number {n} about zebras" if n == 3 else "plain", 5000 + n)],
            durable=True,
        )
        w.close()
    rows = list_page(db, ["live"], None, None, None, 3)
    assert [r.session_id for r in rows] == ["l4", "l3", "l2"]
    assert rows[0].message_count == 2 and rows[0].first_message == "hello there" and rows[0].modified_ms == 5004
    more = list_page(db, ["live"], None, sort_key(rows[-1]), None, 3)
    assert [r.session_id for r in more] == ["l1", "l0"]
    found = list_page(db, ["live"], None, None, "ZEBRA", 10)
    assert [r.session_id for r in found] == ["l3"] and "**zebra**" in found[0].snippet
    assert [r.session_id for r in list_page(db, ["live"], None, None, "l2", 10)] == ["l2"]  # by id
    assert list_page(db, ["live"], None, None, "100%_", 10) == []  # LIKE's wildcards are literal
    assert list_page(db, ["live"], "/elsewhere", None, None, 10) == []


def test_session_not_found(db: Database) -> None:
    with pytest.raises(SessionNotFound):
        open_stored(db, "nope", "host-a", 30)
