"""Schema version 3 (postgres/schema.py): a version-2 database upgrades at start-up, its lines
read back as they were, and lines written after are kept compressed in their row (storage MAIN)."""

from __future__ import annotations

import hashlib
import json

import psycopg

from postgres.test_writer import new_writer
from sidecar.store.postgres import schema
from sidecar.store.postgres.db import connect_checked
from sidecar.store.postgres.lease import open_stored
from sidecar.store.postgres.schema import ensure_schema


def _storage(conn: psycopg.Connection) -> str:
    row = conn.execute(
        "SELECT attstorage FROM pg_attribute WHERE attrelid = 'sidecar_lines'::regclass AND attname = 'line'"
    ).fetchone()
    return row[0]


def _toast_chunks(conn: psycopg.Connection) -> int:
    toast = conn.execute(
        "SELECT reltoastrelid::regclass::text FROM pg_class WHERE oid = 'sidecar_lines'::regclass"
    ).fetchone()[0]
    return conn.execute(f"SELECT count(*) FROM {toast}").fetchone()[0]


def _big(entry_id: str, parent: str) -> bytes:
    # A tool result of ~6 kB that barely compresses (hex digests): past the ~2 kB that sends a
    # value out of line by default, within a page.
    output = "".join(hashlib.sha256(f"{entry_id}{n}".encode()).hexdigest() for n in range(90))
    return json.dumps(
        {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": "2026-01-01T00:00:02.000Z",
            "message": {
                "role": "toolResult",
                "toolCallId": "t",
                "toolName": "bash",
                "content": [{"type": "text", "text": output}],
                "timestamp": 5,
            },
        }
    ).encode()


def test_a_version_2_database_upgrades_and_its_lines_read_back_the_same(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn, conn.transaction():
        conn.execute(
            "CREATE TABLE sidecar_schema (version integer PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())"
        )
        for version in (1, 2):
            for step in schema.MIGRATIONS[version - 1]:
                step(conn) if callable(step) else conn.execute(step)
            conn.execute("INSERT INTO sidecar_schema (version) VALUES (%s)", (version,))
        # (today's writer names version 5's column; the upgrade below adds it only if missing)
        conn.execute("ALTER TABLE sidecar_sessions ADD COLUMN titled boolean NOT NULL DEFAULT false")
        assert _storage(conn) == "x"  # EXTENDED: out of line past ~2 kB
    database = connect_checked(pg_url)
    try:
        # Lines written at version 2 (out of line), then the upgrade, then lines written at version 3.
        writer = new_writer(database, "s", "host-a")
        writer.append([_big("b1", "u1"), _big("b2", "b1")], durable=True)
        writer.close()
        chunks = database.read(_toast_chunks, "chunks")
        assert chunks >= 2
        before = open_stored(database, "s", None, 30).data
        assert ensure_schema(database) == 2
        assert database.read(_storage, "storage") == "m"  # MAIN: compressed, kept in the row
        assert open_stored(database, "s", None, 30).data == before
        writer = new_writer(database, "t", "host-a")
        writer.append([_big("c1", "u1")], durable=True)
        writer.append([_big("c2", "c1"), _big("c3", "c2")], durable=True)
        data = open_stored(database, "t", None, 30).data
        assert [json.loads(line)["id"] for line in data.splitlines()] == ["t", "u1", "c1", "c2", "c3"]
        assert data.splitlines()[2] == _big("c1", "u1")
        assert database.read(_toast_chunks, "chunks") == chunks  # the new lines stayed in their rows
    finally:
        database.close()


def test_a_version_3_database_upgrades_to_erasing_with_its_trash_and_blobs_in_their_grace(pg_url: str) -> None:
    """Version 4 (empty-trash, blob collection): what was trashed or stored before counts from the upgrade."""
    import time

    from sidecar.store.postgres.erasing import collect_blobs, empty_trash

    with psycopg.connect(pg_url, autocommit=True) as conn, conn.transaction():
        conn.execute(
            "CREATE TABLE sidecar_schema (version integer PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())"
        )
        for version in (1, 2, 3):
            for step in schema.MIGRATIONS[version - 1]:
                step(conn) if callable(step) else conn.execute(step)
            conn.execute("INSERT INTO sidecar_schema (version) VALUES (%s)", (version,))
        conn.execute(
            "INSERT INTO sidecar_sessions (id, area, folder, file_name) VALUES "
            "('gone', 'trash', '--w--', '2026-01-01T00-00-00-000Z_gone.jsonl')"
        )
        conn.execute("INSERT INTO sidecar_blobs (digest, data) VALUES (%s, %s)", ("ab" * 32, b"nothing refers to me"))
    database = connect_checked(pg_url)
    try:
        assert ensure_schema(database) == 3
        now_ns = time.time_ns()
        assert empty_trash(database, 3600, now_ns, dry_run=True).files == []  # trashed "at" the upgrade
        assert [p.name for p in empty_trash(database, None, now_ns, dry_run=True).files] == [
            "2026-01-01T00-00-00-000Z_gone.jsonl"
        ]
        assert collect_blobs(database, now_ns // 1_000_000, dry_run=False).files == []  # in its grace hour
        later = collect_blobs(database, now_ns // 1_000_000 + 2 * 3600 * 1000, dry_run=False)
        assert [p.name for p in later.files] == ["ab" * 32] and later.bytes == len(b"nothing refers to me")
    finally:
        database.close()


def test_a_version_4_database_upgrades_with_its_title_lined_sessions_marked_and_listed_by_their_line(
    pg_url: str,
) -> None:
    """Version 5 (``titled``): a session whose first line is oh-my-pi's title line lists with that line's
    title as its one name, under the PostgreSQL store's pi compatibility too (store/files/titles.py); a session
    without one lists with its last session_info."""
    from sidecar.format.titleslot import slot_line
    from sidecar.store.base import ListQuery
    from sidecar.store.postgres.listing import list_sessions

    head = json.dumps(
        {
            "type": "session",
            "version": 3,
            "id": "{id}",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "cwd": "/w",
            "title": "Header",
        }
    )
    info = json.dumps(
        {
            "type": "session_info",
            "id": "n1",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "name": "Info name",
        }
    )
    with psycopg.connect(pg_url, autocommit=True) as conn, conn.transaction():
        conn.execute(
            "CREATE TABLE sidecar_schema (version integer PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())"
        )
        for version in (1, 2, 3, 4):
            for step in schema.MIGRATIONS[version - 1]:
                step(conn) if callable(step) else conn.execute(step)
            conn.execute("INSERT INTO sidecar_schema (version) VALUES (%s)", (version,))
        for sid, lines in {
            "lined": [
                slot_line("Line title", "2026-01-01T00:00:02.000Z", "user"),
                head.replace("{id}", "lined").encode(),
                info.encode(),
            ],
            "plain": [head.replace("{id}", "plain").encode(), info.encode()],
        }.items():
            conn.execute(
                "INSERT INTO sidecar_sessions (id, area, folder, file_name, title, name, cwd) VALUES "
                "(%s, 'live', '--w--', %s, %s, 'Info name', '/w')",
                (sid, f"2026-01-01T00-00-00-000Z_{sid}.jsonl", "Line title" if sid == "lined" else "Header"),
            )
            for seq, line in enumerate(lines):
                conn.execute("INSERT INTO sidecar_lines (session_id, seq, line) VALUES (%s, %s, %s)", (sid, seq, line))
    database = connect_checked(pg_url)
    try:
        assert ensure_schema(database) == 4
        with psycopg.connect(pg_url) as conn:
            marked = dict(conn.execute("SELECT id, titled FROM sidecar_sessions").fetchall())
        assert marked == {"lined": True, "plain": False}
        page = list_sessions(
            database, ListQuery(cwd=None, all=True, include_archived=False, query=None, limit=10, after=None)
        )
        names = {s.session_id: (s.name, s.title) for s in page.sessions}
        assert names == {"lined": ("Line title", "Line title"), "plain": ("Info name", "Info name")}
    finally:
        database.close()
