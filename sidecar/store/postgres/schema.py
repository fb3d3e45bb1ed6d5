"""The database schema, versioned: each migration takes it one version forward.

``ensure_schema`` runs at start-up: it creates the schema in an empty database,
applies the migrations a database is missing (each in its own transaction,
serialised between sidecars by an advisory lock), and refuses a database whose
schema is newer than this sidecar knows, or that holds tables of ours without
the version table (not made by us).

A session file maps onto two tables. ``sidecar_sessions`` holds one row per
session: where it is (area, project folder, file name, exactly as in a file
root), the listing fields ``session/list`` answers with (kept up to date by
each append, in the same transaction; message texts for its query go to
``sidecar_texts``, casefolded by Python and under a trigram index), the lease of its writer, and the bytes
after the file's last newline (a torn line, kept so an export gives back the
very same file). ``sidecar_lines`` holds the file's lines in order, each
exactly as it was (the header, oh-my-pi's title line, unparseable lines
included), so a session exported back to a file is byte-identical.

A migration is SQL, or a function given the connection when SQL cannot do
it (Python's casefolding, which PostgreSQL does not have).
"""

from __future__ import annotations

from collections.abc import Callable

import psycopg

from ...format.titleslot import looks_like_slot
from .db import Database, DatabaseSchemaMismatch
from .rows import fold_text

# Any number: a lock all sidecars take while they migrate.
_MIGRATION_LOCK = 0x5E5510_0C

Migration = str | Callable[[psycopg.Connection], None]


def _fold_existing(conn: psycopg.Connection) -> None:
    """Version 2's casefolded copies of what a query looks in, for rows written before it."""
    batch = 2000
    while True:
        rows = conn.execute(
            "SELECT session_id, seq, text FROM sidecar_texts WHERE folded IS NULL LIMIT %s", (batch,)
        ).fetchall()
        if not rows:
            break
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE sidecar_texts SET folded = %s WHERE session_id = %s AND seq = %s",
                [(fold_text(text), session_id, seq) for session_id, seq, text in rows],
            )
    rows = conn.execute(
        "SELECT id, name, title FROM sidecar_sessions WHERE name IS NOT NULL OR title IS NOT NULL"
    ).fetchall()
    with conn.cursor() as cur:
        cur.executemany(
            "UPDATE sidecar_sessions SET name_folded = %s, title_folded = %s WHERE id = %s",
            [(fold_text(name), fold_text(title), session_id) for session_id, name, title in rows],
        )


def _mark_titled(conn: psycopg.Connection) -> None:
    """Version 5's ``titled`` for the rows written before it: whether their first line is a title line."""
    rows = conn.execute("SELECT session_id, line FROM sidecar_lines WHERE seq = 0").fetchall()
    titled = [(session_id,) for session_id, line in rows if looks_like_slot(bytes(line))]
    with conn.cursor() as cur:
        cur.executemany("UPDATE sidecar_sessions SET titled = true WHERE id = %s", titled)


# Each version's steps, in order (ensure_schema runs them in its one transaction).
MIGRATIONS: list[list[Migration]] = [
    # 1: sessions, their lines, blobs, other files of an imported root.
    [
        """
    CREATE EXTENSION IF NOT EXISTS pg_trgm;

    CREATE TABLE sidecar_sessions (
        id              text PRIMARY KEY,
        area            text NOT NULL DEFAULT 'live' CHECK (area IN ('live', 'archive', 'trash')),
        folder          text NOT NULL,
        file_name       text NOT NULL,
        cwd             text NOT NULL DEFAULT '',
        created         text NOT NULL DEFAULT '',
        parent_session  text,
        title           text,
        name            text,
        first_message   text NOT NULL DEFAULT '',
        message_count   integer NOT NULL DEFAULT 0,
        last_activity   bigint NOT NULL DEFAULT 0,
        modified_ms     bigint NOT NULL DEFAULT 0,
        tokens_total    bigint NOT NULL DEFAULT 0,
        tokens_last     bigint NOT NULL DEFAULT 0,
        line_count      bigint NOT NULL DEFAULT 0,
        tail            bytea NOT NULL DEFAULT ''::bytea,
        lease_owner     text,
        lease_fence     bigint NOT NULL DEFAULT 0,
        lease_expires   timestamptz
    );
    -- session/list's order (newest first, then the place), so a page stops after its last row
    -- instead of sorting every session (and, with a query, searching every session's texts).
    CREATE INDEX sidecar_sessions_listing ON sidecar_sessions (modified_ms DESC, (folder || '/' || file_name));
    CREATE INDEX sidecar_sessions_cwd ON sidecar_sessions (cwd, area, modified_ms DESC);

    CREATE TABLE sidecar_lines (
        session_id  text NOT NULL REFERENCES sidecar_sessions (id) ON DELETE CASCADE,
        seq         bigint NOT NULL,
        entry_id    text,
        line        bytea NOT NULL,
        PRIMARY KEY (session_id, seq)
    );
    -- lz4 reads a large session back several times faster than the default pglz (where the server has it).
    DO $$ BEGIN
        ALTER TABLE sidecar_lines ALTER COLUMN line SET COMPRESSION lz4;
    EXCEPTION WHEN OTHERS THEN NULL;
    END $$;

    -- The text of each user or assistant message, for session/list's query (a trigram index).
    CREATE TABLE sidecar_texts (
        session_id  text NOT NULL REFERENCES sidecar_sessions (id) ON DELETE CASCADE,
        seq         bigint NOT NULL,
        text        text NOT NULL,
        PRIMARY KEY (session_id, seq)
    );
    CREATE INDEX sidecar_texts_search ON sidecar_texts USING gin (lower(text) gin_trgm_ops);

    CREATE TABLE sidecar_blobs (
        digest  text PRIMARY KEY,
        data    bytea NOT NULL
    );

    -- Files of an imported root that are no session (a .torn aside, a .bak), by their path in the root.
    CREATE TABLE sidecar_files (
        path  text PRIMARY KEY,
        mode  integer NOT NULL,
        data  bytea NOT NULL
    );
    """
    ],
    # 2: queries match as the file store does (Python's casefold, not lower()); an append does less:
    # no foreign keys to check (each append's own fenced update proves its session is there; a
    # session's lines and texts are deleted with it explicitly).
    [
        """
    ALTER TABLE sidecar_texts ADD COLUMN folded text;
    ALTER TABLE sidecar_sessions ADD COLUMN name_folded text, ADD COLUMN title_folded text;
    ALTER TABLE sidecar_lines DROP CONSTRAINT IF EXISTS sidecar_lines_session_id_fkey;
    ALTER TABLE sidecar_texts DROP CONSTRAINT IF EXISTS sidecar_texts_session_id_fkey;
    DROP INDEX IF EXISTS sidecar_texts_search;
    """,
        _fold_existing,
        """
    ALTER TABLE sidecar_texts ALTER COLUMN folded SET NOT NULL;
    CREATE INDEX sidecar_texts_search ON sidecar_texts USING gin (folded gin_trgm_ops);
    """,
    ],
    # 3: a line is kept compressed in its row (storage MAIN) rather than moved to the TOAST table
    # past ~2 kB (EXTENDED, the default): a large line (a tool result) is then read back without a
    # TOAST index lookup per line. The SELECT of bench/load.py's 20,000-line session (~6,000 of its
    # lines over 2 kB), same client CPU: 109-111 ms instead of 119 at load 2 (medians of 9, the same
    # rows in both layouts in one database); 168 instead of 254 at load 4 (EXTERNAL, uncompressed out
    # of line, 185; pglz in the row 227). A small part of the whole open (~290 ms). A line that does
    # not fit a page even compressed still goes out of line. Rows written before keep their place.
    [
        """
    ALTER TABLE sidecar_lines ALTER COLUMN line SET STORAGE MAIN;
    """
    ],
    # 4: emptying the trash and collecting blobs (erasing.py). ``trashed_ms``: when a session went to
    # the trash (``--older-than`` counts from it, as the file store counts from the file's ctime); a
    # session trashed before this version counts from the upgrade. ``stored_ms``: when a blob was
    # stored or last reused (its file's mtime in the file store): a blob is collected only past its
    # grace hour; blobs stored before this version get the upgrade's time (the column's default,
    # evaluated once: the rows are not rewritten).
    [
        """
    ALTER TABLE sidecar_sessions ADD COLUMN trashed_ms bigint;
    UPDATE sidecar_sessions SET trashed_ms = (extract(epoch FROM now()) * 1000)::bigint WHERE area = 'trash';
    ALTER TABLE sidecar_blobs ADD COLUMN stored_ms bigint NOT NULL DEFAULT (extract(epoch FROM now()) * 1000)::bigint;
    """
    ],
    # 5: ``titled``: the session's first line is oh-my-pi's title line, so its one name is that line's
    # title (else the header's), not its last session_info (store/files/titles.py); set for the rows before it
    # from their first lines.
    [
        """
    ALTER TABLE sidecar_sessions ADD COLUMN IF NOT EXISTS titled boolean NOT NULL DEFAULT false;
    """,
        _mark_titled,
    ],
]

SCHEMA_VERSION = len(MIGRATIONS)


def schema_version(conn: psycopg.Connection) -> int | None:
    """The version the database is at; None when it holds no schema of ours."""
    has_table = conn.execute("SELECT to_regclass('sidecar_schema') IS NOT NULL").fetchone()
    if not has_table or not has_table[0]:
        ours = conn.execute("SELECT to_regclass('sidecar_sessions') IS NOT NULL").fetchone()
        if ours and ours[0]:
            raise DatabaseSchemaMismatch(
                "the database has a sidecar_sessions table but no sidecar_schema version table: "
                "it was not made by session-sidecar; use another database",
            )
        return None
    row = conn.execute("SELECT max(version) FROM sidecar_schema").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def ensure_schema(database: Database, migrate: bool = True) -> int:
    """Bring the database to ``SCHEMA_VERSION``; returns the version it was at (0: empty).

    With ``migrate`` false a database that is not at our version is refused
    instead (``DatabaseSchemaMismatch`` saying what to run).
    """

    def run(conn: psycopg.Connection) -> int:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        found = schema_version(conn)
        at = found or 0
        if at > SCHEMA_VERSION:
            raise DatabaseSchemaMismatch(
                f"the database's schema is version {at}, newer than this session-sidecar knows "
                f"({SCHEMA_VERSION}); upgrade session-sidecar, or use another database",
                found=at,
                known=SCHEMA_VERSION,
            )
        if at < SCHEMA_VERSION and not migrate:
            raise DatabaseSchemaMismatch(
                f"the database's schema is version {at}, this session-sidecar needs {SCHEMA_VERSION}; "
                "start session-sidecar with --database-url once to migrate it",
                found=at,
                known=SCHEMA_VERSION,
            )
        if found is None:
            conn.execute(
                "CREATE TABLE sidecar_schema (version integer PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())"
            )
        for version in range(at + 1, SCHEMA_VERSION + 1):
            for step in MIGRATIONS[version - 1]:
                if callable(step):
                    step(conn)
                else:
                    conn.execute(step)
            conn.execute("INSERT INTO sidecar_schema (version) VALUES (%s)", (version,))
        return at

    return database.transaction(run, "migrate the schema")
