"""The listing index's tables, its rows as the code sees them, and opening it (made anew on a version change).

``files``: one row per file of a listed folder, session or not (a row remembers
the size and mtime it was read at). ``texts``: the message texts in FTS5 with
the trigram tokenizer, rowid ``file_id << 32 | n``, each row several texts of
one file joined, with their lengths (indexsearch.py). It keeps which rows hold a
trigram, not where (``detail=none``): half the size and half the build time of
positions, which only a phrase query would read, and a query checks its rows'
texts anyway. ``pending``: rows not yet moved into it (see index.py). ``meta``:
name, title and id casefolded, the rest of what a query looks in.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .listing import iso_from_ms

SCHEMA_VERSION = 6  # 3: meta (name, title and id casefolded, for queries); 4: a text row holds several texts
# 5: the trigram index keeps no positions (detail=none); 6: titled (the file starts with oh-my-pi's title line:
# its name is oh-my-pi's under either compatibility, store/files/titles.py), assistant_turns and last_role (oh-my-pi's
# picker skips a stub, listing.py's is_stub)

SCHEMA = """
CREATE TABLE files(
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  dir TEXT NOT NULL,
  area TEXT NOT NULL,
  size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  is_session INTEGER NOT NULL,
  session_id TEXT, cwd TEXT, header_ts TEXT, title TEXT, parent_session TEXT,
  name TEXT, message_count INTEGER, first_message TEXT, last_activity INTEGER,
  modified_ms INTEGER, tokens_total INTEGER, tokens_last INTEGER, text_seq INTEGER,
  meta TEXT, titled INTEGER, assistant_turns INTEGER, last_role TEXT
);
CREATE VIRTUAL TABLE texts USING fts5(text, lengths UNINDEXED, tokenize='trigram', detail=none);
CREATE TABLE pending(id INTEGER PRIMARY KEY, text TEXT NOT NULL, lengths TEXT);
"""

# The indexes of ``files`` besides its path: dropped while a cold rebuild loads every row into an
# empty table and made again after (one sort each instead of a random insert per row), in its transaction.
FILES_INDEXES = {
    "files_order": "CREATE INDEX files_order ON files(area, modified_ms DESC, path)",
    "files_dir": "CREATE INDEX files_dir ON files(dir)",
    "files_parent": "CREATE INDEX files_parent ON files(parent_session)",
    # narrow: a query's scan of meta reads this, not the wide rows
    "files_meta": "CREATE INDEX files_meta ON files(meta)",
}

INSERT_FILE = (
    "INSERT INTO files(id, path, dir, area, size, mtime_ns, is_session, session_id, cwd, header_ts, title,"
    " parent_session, name, message_count, first_message, last_activity, modified_ms, tokens_total,"
    " tokens_last, text_seq, meta, titled, assistant_turns, last_role) VALUES (" + ",".join("?" * 24) + ")"
)
UPDATE_FILE = (
    "UPDATE files SET path=?, dir=?, area=?, size=?, mtime_ns=?, is_session=?, session_id=?, cwd=?,"
    " header_ts=?, title=?, parent_session=?, name=?, message_count=?, first_message=?, last_activity=?,"
    " modified_ms=?, tokens_total=?, tokens_last=?, text_seq=?, meta=?, titled=?, assistant_turns=?,"
    " last_role=? WHERE id=?"
)

COLUMNS = (
    "id, path, area, session_id, cwd, header_ts, title, parent_session, name, message_count, "
    "first_message, modified_ms, tokens_total, tokens_last, mtime_ns, titled"
)


@dataclass(slots=True)
class Row:
    """One listed session as the index holds it."""

    id: int
    path: str
    area: str
    session_id: str
    cwd: str
    header_ts: str | None
    title: str | None
    parent_session: str | None
    name: str | None
    message_count: int
    first_message: str
    modified_ms: int
    tokens_total: int
    tokens_last: int
    mtime_ns: int
    titled: int | None = 0  # (1: the file starts with a title line)
    snippet: str | None = None

    @property
    def created(self) -> str:
        return self.header_ts if self.header_ts is not None else iso_from_ms(self.mtime_ns // 1_000_000)


def _give_back_space(conn: sqlite3.Connection) -> None:
    """The pages an older index's tables held returned to the disk (they would stay in the file, free,
    as large as that index was): cheap right after the drop, when the tables are empty. Another
    process holding the index open may keep it from running; the space is then reused as it fills."""
    try:
        conn.execute("VACUUM")
    except sqlite3.OperationalError:
        pass


def connect(
    path: Path, busy_ms: int, contains: Callable[[object, str], bool], holds: Callable[[object, str | None, str], bool]
) -> tuple[sqlite3.Connection, dict[str, dict[str, tuple[int, int]]]]:
    """The index at ``path`` (its tables made anew when their version is not ours), and what it knows:
    folder -> path -> (size, mtime_ns) of every row."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=busy_ms / 1000, isolation_level=None, check_same_thread=False)
    try:
        conn.execute(f"PRAGMA busy_timeout={int(busy_ms)}")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.create_function("contains", 2, contains, deterministic=True)
        conn.create_function("holds", 3, holds, deterministic=True)
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            conn.execute("BEGIN IMMEDIATE")
            remade = conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION
            if remade:
                for _kind, name in conn.execute(
                    "SELECT type, name FROM sqlite_master WHERE type IN ('table') AND name NOT LIKE 'sqlite_%'"
                    " AND name NOT LIKE 'texts_%'"
                ).fetchall():
                    conn.execute(f'DROP TABLE IF EXISTS "{name}"')
                for statement in [*SCHEMA.split(";"), *FILES_INDEXES.values()]:
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            conn.execute("COMMIT")
            if remade and version != 0:
                _give_back_space(conn)
        known: dict[str, dict[str, tuple[int, int]]] = {}
        for file_path, folder, size, mtime in conn.execute("SELECT path, dir, size, mtime_ns FROM files"):
            known.setdefault(folder, {})[file_path] = (size, mtime)
    except BaseException:
        conn.close()
        raise
    return conn, known
