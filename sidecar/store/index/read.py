"""Reading session files into the listing index's rows and texts: whole files, and appended lines folded
into a row without reading its file (both in the caller's transaction)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

from ...format.jsonl import Entry
from . import workers as indexwork
from .listing import Accumulator, decode_line, modified_ms
from .scan import Loader
from .schema import FILES_INDEXES, INSERT_FILE, UPDATE_FILE
from .search import SHIFT, delete_texts, folded_meta, text_rows

_BATCH = 256  # files whose new rows (and texts) go in by one statement
BULK_ROWS = 1000  # files read into an empty index past which its indexes are made after the rows
Known = dict[str, dict[str, tuple[int, int]]]  # folder -> path -> (size, mtime_ns) of every row
# What fold_file selects of a row: id, size, is_session, message_count, first_message, last_activity, name,
# tokens_total, tokens_last, text_seq, header_ts, title, session_id, assistant_turns, last_role.
FoldRow = tuple[
    int,
    int,
    int,
    int,
    str | None,
    int | None,
    str | None,
    int | None,
    int | None,
    int,
    str | None,
    str | None,
    str | None,
    int | None,
    str | None,
]


def read_files(
    conn: sqlite3.Connection,
    items: list[tuple[int, str, str, str]],
    known: Known,
    check: Callable[[int, int], None] | None,
    delete: Callable[[sqlite3.Connection, str], None],
    load: Loader,
) -> None:
    """(Re)read each (index, path, folder, area) whole into its row and texts (in the caller's transaction).

    New rows and all texts go in by batches (one statement per batch); a
    file with a row already is updated in place and its texts replaced.
    """
    bulk = len(items) >= BULK_ROWS and conn.execute("SELECT 1 FROM files LIMIT 1").fetchone() is None
    if bulk:
        # Every row into an empty table (a cold rebuild): in path order (the path index grows at its
        # end), the other indexes made once all rows are in. A rollback brings them back.
        items = sorted(items, key=lambda item: item[1])
        for name in FILES_INDEXES:
            conn.execute(f"DROP INDEX IF EXISTS {name}")
    existing: dict[str, int] = {}
    if len(items) == 1:
        found = conn.execute("SELECT id FROM files WHERE path=?", (items[0][1],)).fetchone()
        if found is not None:
            existing[items[0][1]] = found[0]
    else:
        for folder in {item[2] for item in items}:
            existing.update(conn.execute("SELECT path, id FROM files WHERE dir=?", (folder,)))
    next_id = (conn.execute("SELECT max(id) FROM files").fetchone()[0] or 0) + 1
    # (Reading ahead in threads was slower: the parse holds the GIL. Many files go to worker processes.)
    reads = indexwork.read_files([item[1] for item in items], load)
    try:
        _store_reads(conn, items, reads, existing, next_id, known, check, delete)
    finally:
        reads.close()  # (workers stopped at once when the read stops early: a cancel, an error)
    if bulk:
        for statement in FILES_INDEXES.values():
            conn.execute(statement)


def _store_reads(
    conn: sqlite3.Connection,
    items: list[tuple[int, str, str, str]],
    reads: Iterator[indexwork.Read],
    existing: dict[str, int],
    next_id: int,
    known: Known,
    check: Callable[[int, int], None] | None,
    delete: Callable[[sqlite3.Connection, str], None],
) -> None:
    rows: list[tuple[object, ...]] = []
    texts: list[tuple[int, str, str | None]] = []

    def flush() -> None:
        if rows:
            conn.executemany(INSERT_FILE, rows)
            rows.clear()
        if texts:
            conn.executemany("INSERT INTO pending(id, text, lengths) VALUES (?, ?, ?)", texts)
            texts.clear()

    for done, ((_, path, folder, area), read) in enumerate(zip(items, reads)):
        if check is not None:
            check(done, len(items))
        file_id = existing.get(path)
        if read is None:  # gone (or unreadable) since the scan
            if file_id is not None:
                delete(conn, path)
            else:
                known.get(folder, {}).pop(path, None)
            continue
        size, mtime, fields, chunks = read
        if file_id is None:
            file_id = next_id
            next_id += 1
            fresh = True
        else:
            delete_texts(conn, file_id)
            fresh = False
        values = (
            (path, folder, area, size, mtime, 1, *fields)
            if fields is not None
            else ((path, folder, area, size, mtime, 0) + (None,) * 17)
        )
        if fresh:
            rows.append((file_id,) + values)
        else:
            conn.execute(UPDATE_FILE, values + (file_id,))
        first_rowid = file_id << SHIFT  # its text rows' rowids: first_rowid | n, n below 2**SHIFT
        texts.extend([(first_rowid + n, joined, lengths) for n, (joined, lengths) in enumerate(chunks)])
        known.setdefault(folder, {})[path] = (size, mtime)
        if len(rows) >= _BATCH:
            flush()
    flush()


def fold_file(
    conn: sqlite3.Connection,
    known: Known,
    path: Path,
    area: str,
    entries: list[Entry],
    read_into: Callable[[sqlite3.Connection, str, str, str, int, int], object],
) -> None:
    """``entries`` the sidecar appended to ``path`` folded into its row, in the caller's transaction;
    the file read again (``read_into``) when its row is not the file before them."""
    key = str(path)
    st = os.stat(path)
    row = conn.execute(
        "SELECT id, size, is_session, message_count, first_message, last_activity, name, tokens_total,"
        " tokens_last, text_seq, header_ts, title, session_id, assistant_turns, last_role FROM files WHERE path=?",
        (key,),
    ).fetchone()
    grown = sum(len(entry.raw) + 1 for entry in entries)
    if row is None or not row[2] or row[1] + grown != st.st_size:
        read_into(conn, key, str(path.parent), area, 0, 0)
    else:
        fold_appended(conn, known, path, entries, st, row)


def fold_appended(
    conn: sqlite3.Connection, known: Known, path: Path, entries: list[Entry], st: os.stat_result, row: FoldRow
) -> None:
    """Fold the ``entries`` the sidecar appended into the file's ``row`` (as selected by ListingIndex.appended).

    A line is decoded only when its entry's envelope does not say enough: an entry the listing ignores,
    or a message neither user nor assistant (only counted), is not."""
    key = str(path)
    file_id, _, _, count, first, last, name, total, last_tokens, seq, header_ts, title, session_id, turns, role = row
    acc = Accumulator(count, first or "", last or 0, name, total or 0, last_tokens or 0, turns or 0, role)
    texts = []
    for entry in entries:
        skip = listing_skip(entry)
        if skip:
            if skip == _COUNTED:
                acc.count += 1
                acc.last_role = entry.head.role if type(entry.head.role) is str else None  # type: ignore[union-attr]  # _COUNTED: a head is there
            continue
        line = decode_line(entry.raw)
        if line is None:
            continue
        text = acc.feed(line)
        if text:
            texts.append(text)
    added = text_rows((file_id << SHIFT) | seq, texts) if texts else []
    conn.executemany("INSERT INTO pending(id, text, lengths) VALUES (?, ?, ?)", added)
    conn.execute(
        "UPDATE files SET size=?, mtime_ns=?, message_count=?, first_message=?, last_activity=?,"
        " name=?, tokens_total=?, tokens_last=?, text_seq=?, modified_ms=?, meta=?, assistant_turns=?, last_role=?"
        " WHERE id=?",
        (
            st.st_size,
            st.st_mtime_ns,
            acc.count,
            acc.first,
            acc.last_activity,
            acc.name,
            acc.tokens_total,
            acc.tokens_last,
            seq + len(added),
            modified_ms(acc.last_activity, header_ts, st.st_mtime_ns // 1_000_000),
            folded_meta(acc.name, title, session_id),
            acc.assistants,
            acc.last_role,
            file_id,
        ),
    )
    known.setdefault(str(path.parent), {})[key] = (st.st_size, st.st_mtime_ns)


_IGNORED, _COUNTED = 1, 2


def listing_skip(entry: Entry) -> int:
    """0 when the entry's line must be decoded for the listing (Accumulator.feed); _IGNORED when feed
    would change nothing (neither a message nor session_info); _COUNTED when it would only count it
    (a message object whose role is neither user nor assistant)."""
    kind = entry.type
    if kind == "message":
        head = entry.head  # (set exactly when the line's message is an object)
        role = None if head is None else head.role
        return 0 if head is None or role == "user" or role == "assistant" else _COUNTED
    return 0 if kind == "session_info" else _IGNORED
