"""A query over the listing index: the newest sessions holding a text, in pi's order, with a snippet each.

pi's rule: a session matches when the query is a case-insensitive substring of
its name, title, id or any message text. Two ways to find them, and a query
uses the cheaper for what it asks:

- The walk: sessions in listing order (newest first), each checked by reading
  its own texts (one rowid range of the texts table and of ``pending``). It
  stops at a full page, so a query most sessions answer (a common word) costs
  a page's worth of files however large the store is.
- The set: the full-text index (trigram FTS5) names every matching text at
  once, the listing order is applied to those sessions. A query few sessions
  answer is found this way without reading them.

A query walks a few pages' worth of sessions first; when that did not fill
the page, the set finds the rest (after the last session walked). Texts not
yet moved into the full-text index (``pending``) are read in both.

The snippet is cut around the first matching text of the session, in message
order, the same way whether that text is indexed or still pending.

A row of the texts tables holds several consecutive texts of one file (all of
a small file's, as a cold rebuild reads it; those of one append), joined by a
newline, with their lengths: a hundred thousand files make a hundred thousand
rows, not millions, and the trigram index has one entry per file and trigram
instead of one per message and trigram (it builds several times faster). A
needle without a newline matches a row exactly when it matches one of its
texts; one with a newline is checked text by text.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any, TypeVar

from ...trigrams import trigram_terms

SHIFT = 32  # a row's rowid: file_id << SHIFT | its number in the file, so one file's texts are a rowid range
SEPARATOR = "\n"  # between the texts of one row
_ROW_CHARS = 1 << 18  # a row holds a file's next texts up to about this many characters (a 1 GB session: many rows)
SNIPPET_OPEN, SNIPPET_CLOSE, SNIPPET_ELLIPSIS = "**", "**", "…"
SNIPPET_CONTEXT = 24  # characters kept on each side of the match
_WALK_PAGES = 2  # sessions walked before the set is asked: this many pages' worth (plus _WALK_EXTRA)
_WALK_EXTRA = 32
_ORDER = "ORDER BY modified_ms DESC, path"
_AFTER = "(modified_ms < ? OR (modified_ms = ? AND path > ?))"


def query_rows(
    conn: sqlite3.Connection,
    columns: str,
    where: list[str],
    args: list[object],
    query: str,
    limit: int,
) -> list[tuple[tuple[Any, ...], str | None]]:
    """Up to ``limit`` (row values, snippet) of the sessions ``where`` selects that match ``query``, in order.

    ``columns`` must start with ``id, path`` and hold ``name``, ``title``,
    ``session_id`` and ``modified_ms`` at the positions ``_meta`` expects
    (see index.py's ``_COLUMNS``); the caller holds one read snapshot.
    """
    needle = query.casefold()
    found: list[tuple[tuple[Any, ...], str | None]] = []
    budget = limit * _WALK_PAGES + _WALK_EXTRA
    walked = 0
    last: tuple[int, str] | None = None
    for values in conn.execute(
        f"SELECT {columns} FROM files WHERE {' AND '.join(where)} {_ORDER} LIMIT ?", [*args, budget]
    ):
        walked += 1
        last = (values[_MODIFIED], values[1])
        snippet = first_hit(conn, values[0], needle)
        if snippet is not None or _meta_matches(values, needle):
            found.append((values, snippet))
            if len(found) == limit:
                return found
    if walked < budget:
        return found  # every selected session was walked
    if last is not None:
        where, args = where + [_AFTER], args + [last[0], last[0], last[1]]
    ids = matching_ids(conn, query, needle)
    if not ids:
        return found
    sql = (
        f"SELECT {columns} FROM files WHERE {' AND '.join(where)} AND id IN (SELECT value FROM json_each(?))"
        f" {_ORDER} LIMIT ?"
    )
    for values in conn.execute(sql, [*args, "[" + ",".join(map(str, ids)) + "]", limit - len(found)]).fetchall():
        found.append((values, first_hit(conn, values[0], needle)))
    return found


def matching_ids(conn: sqlite3.Connection, query: str, needle: str) -> set[int]:
    """Ids of every file whose texts (indexed or pending), name, title or id hold the needle."""
    grams = trigram_terms(query)  # (the index keeps no positions: indexschema.py)
    if grams and len(needle) >= 3:
        # The rows holding each of the query's trigrams somewhere, then the needle itself checked in them.
        texts = conn.execute(
            f"SELECT DISTINCT rowid >> {SHIFT} FROM texts WHERE texts MATCH ? AND holds(text, lengths, ?)",
            (grams, needle),
        )
    else:  # below the trigram index's reach: every text is read
        texts = conn.execute(f"SELECT DISTINCT rowid >> {SHIFT} FROM texts WHERE holds(text, lengths, ?)", (needle,))
    ids = {file_id for (file_id,) in texts}
    # Texts not yet in the full-text index (being built) are read row by row: same answer, slower.
    ids.update(
        file_id
        for (file_id,) in conn.execute(
            f"SELECT DISTINCT id >> {SHIFT} FROM pending WHERE holds(text, lengths, ?)", (needle,)
        )
    )
    if _META_SEPARATOR in needle:
        meta = conn.execute(
            "SELECT id FROM files WHERE contains(name, ?) OR contains(title, ?) OR contains(session_id, ?)",
            (needle, needle, needle),
        )
    else:  # instr in C over a column casefolded when written (its own index: a narrow scan)
        meta = conn.execute("SELECT id FROM files INDEXED BY files_meta WHERE instr(meta, ?) > 0", (needle,))
    ids.update(file_id for (file_id,) in meta)
    return ids


# Positions in index.py's _COLUMNS of what the walk reads itself.
_SESSION_ID, _TITLE, _NAME, _MODIFIED = 3, 6, 8, 11


def _meta_matches(values: tuple[object, ...], needle: str) -> bool:
    return any(
        isinstance(field, str) and needle in field.casefold()
        for field in (values[_NAME], values[_TITLE], values[_SESSION_ID])
    )


def folded_meta(name: str | None, title: str | None, session_id: str | None) -> str:
    """What a query's needle is looked for in besides the texts, casefolded once when the row is written."""
    return _META_SEPARATOR.join(field.casefold() for field in (name, title, session_id) if isinstance(field, str))


_META_SEPARATOR = "\n"  # a needle holding it is matched field by field instead


def first_hit(conn: sqlite3.Connection, file_id: int, needle: str) -> str | None:
    """The snippet around the first text of the file (indexed or pending, in message order) holding ``needle``."""
    bounds = (file_id << SHIFT, (file_id + 1) << SHIFT)
    indexed = first_around(
        _texts_of(
            conn.execute(
                "SELECT rowid, text, lengths FROM texts WHERE rowid >= ? AND rowid < ? ORDER BY rowid", bounds
            ),
            needle,
        ),
        needle,
    )
    pending = first_around(
        _texts_of(
            conn.execute("SELECT id, text, lengths FROM pending WHERE id >= ? AND id < ? ORDER BY id", bounds), needle
        ),
        needle,
    )
    if pending is not None and (indexed is None or pending[0] < indexed[0]):
        indexed = pending
    return indexed[1] if indexed is not None else None


def _texts_of(rows: Iterable[tuple[int, str, str | None]], needle: str) -> Iterable[tuple[tuple[int, int], str]]:
    """((rowid, n), text) of each text of ``rows`` that may hold ``needle`` (a row that cannot is not split)."""
    whole = SEPARATOR not in needle
    for rowid, text, lengths in rows:
        if whole and needle not in text.casefold():
            continue
        for n, part in enumerate(split_row(text, lengths)):
            yield (rowid, n), part


def text_rows(first_rowid: int, texts: list[str]) -> list[tuple[int, str, str | None]]:
    """(rowid, joined text, lengths) rows holding ``texts`` in order, rowids counting up from ``first_rowid``."""
    return [(first_rowid + n, joined, lengths) for n, (joined, lengths) in enumerate(text_chunks(texts))]


def text_chunks(texts: list[str]) -> list[tuple[str, str | None]]:
    """``texts`` in order as (joined text, lengths) rows, each up to about ``_ROW_CHARS`` characters."""
    if texts and sum(map(len, texts)) < _ROW_CHARS:  # (nearly every file: one row, made without a loop in Python)
        return [(SEPARATOR.join(texts), " ".join(map(str, map(len, texts))) if len(texts) > 1 else None)]
    rows: list[tuple[str, str | None]] = []
    start, size = 0, 0
    for end, text in enumerate(texts, 1):
        size += len(text)
        if size >= _ROW_CHARS or end == len(texts):
            part = texts[start:end]
            rows.append((SEPARATOR.join(part), " ".join([str(len(t)) for t in part]) if len(part) > 1 else None))
            start, size = end, 0
    return rows


def split_row(text: str, lengths: str | None) -> list[str]:
    """The texts a row holds (``text_rows`` joined them)."""
    if lengths is None:
        return [text]
    parts, at = [], 0
    for size in map(int, lengths.split()):
        parts.append(text[at : at + size])
        at += size + 1
    return parts


K = TypeVar("K")


def first_around(rows: Iterable[tuple[K, str]], needle: str) -> tuple[K, str] | None:
    """(rowid, snippet) of the first text holding ``needle`` (casefolded), cut around it."""
    for rowid, text in rows:
        folded = text.casefold()
        at = folded.find(needle)
        if at < 0:
            continue
        size = len(needle)
        if len(folded) != len(text):  # casefolding changed lengths (ß -> ss): find the match in the text itself
            at, size = _unfolded_span(text, needle) or (min(at, len(text) - 1), 1)
        start, end = max(0, at - SNIPPET_CONTEXT), min(len(text), at + size + SNIPPET_CONTEXT)
        return rowid, (
            (SNIPPET_ELLIPSIS if start else "")
            + text[start:at]
            + SNIPPET_OPEN
            + text[at : at + size]
            + SNIPPET_CLOSE
            + text[at + size : end]
            + (SNIPPET_ELLIPSIS if end < len(text) else "")
        )
    return None


def _unfolded_span(text: str, needle: str) -> tuple[int, int] | None:
    """Where in ``text`` the casefolded ``needle`` starts, and how many of text's characters it covers
    (None when it starts or ends inside one character's folding)."""
    for start in range(len(text)):
        folded = ""
        for end in range(start, len(text)):
            folded += text[end].casefold()
            if not needle.startswith(folded):
                break
            if folded == needle:
                return start, end - start + 1
    return None


def contains(text: object, needle: str) -> bool:
    return isinstance(text, str) and needle in text.casefold()


def holds(text: object, lengths: str | None, needle: str) -> bool:
    """Whether one of the texts of a row holds ``needle`` (casefolded)."""
    if not isinstance(text, str) or needle not in text.casefold():
        return False
    return SEPARATOR not in needle or any(needle in part.casefold() for part in split_row(text, lengths))


def drain_chunk(conn: sqlite3.Connection, limit: int, max_chars: int | None = None) -> bool:
    """Move up to ``limit`` pending rows (lowest ids first, and no more than about ``max_chars`` characters)
    into the full-text index; False when none were left."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        edge, chars = None, 0
        for row_id, size in conn.execute("SELECT id, length(text) FROM pending ORDER BY id LIMIT ?", (int(limit),)):
            edge, chars = row_id, chars + size
            if max_chars is not None and chars >= max_chars:
                break
        if edge is None:
            conn.execute("COMMIT")
            return False
        conn.execute(
            "INSERT INTO texts(rowid, text, lengths) SELECT id, text, lengths FROM pending WHERE id <= ?", (edge,)
        )
        conn.execute("DELETE FROM pending WHERE id <= ?", (edge,))
        conn.execute("COMMIT")
        return True
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def delete_texts(conn: sqlite3.Connection, file_id: int) -> None:
    bounds = (file_id << SHIFT, (file_id + 1) << SHIFT)
    conn.execute("DELETE FROM texts WHERE rowid >= ? AND rowid < ?", bounds)
    conn.execute("DELETE FROM pending WHERE id >= ? AND id < ?", bounds)
