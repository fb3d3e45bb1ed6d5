"""``session/list`` answered in SQL: the session rows' listing fields, newest first,
and a query as pi has it (a case-insensitive substring of the name, the title,
the id or any message text), the message texts searched through a trigram
index and the first matching one cut into a snippet, all in one statement.

Case-insensitive as the file store has it: the query is casefolded by Python
and matched against copies casefolded by Python when written (``folded``,
``name_folded``, ``title_folded``), so "STRASSE" finds "straße" in both stores.
A session id is ASCII (format/ids.py), where lower() and casefold agree.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict, cast

import msgspec
import psycopg
from psycopg.rows import dict_row

from ...format.jsstr import node_utf8
from ..compat import listed_name
from ..index.search import first_around  # the file store's snippet rule, so both stores cut alike
from .db import Database
from .rows import Placement

if TYPE_CHECKING:
    from ..base import ListPage, ListQuery

LOCATION_PREFIX = "pg:"  # a session's ``path`` in results: pg:<area>/<folder>/<file>


@dataclass(slots=True)
class ListedRow:
    session_id: str
    placement: Placement
    cwd: str
    created: str
    modified_ms: int
    message_count: int
    first_message: str
    name: str | None
    title: str | None
    parent_session: str | None
    tokens_total: int
    tokens_last: int
    snippet: str | None = None


class _Row(TypedDict):
    """A row of list_page's SELECT (sidecar_sessions' columns, schema.py, and the first text that matched)."""

    id: str
    area: str
    folder: str
    file_name: str
    cwd: str
    created: str
    modified_ms: int
    message_count: int
    first_message: str
    name: str | None
    title: str | None
    titled: bool
    parent_session: str | None
    tokens_total: int
    tokens_last: int
    hit: str | None


def _like(query: str) -> str:
    escaped = query.casefold().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def list_page(
    db: Database,
    areas: list[str],
    cwd: str | None,
    after: tuple[int, str] | None,
    query: str | None,
    limit: int,
) -> list[ListedRow]:
    """Up to ``limit`` sessions in ``areas``, newest activity first, after the cursor (modified, sort key)."""
    if query and "\x00" in query:
        # PostgreSQL's text holds no NUL (rows.py drops it from the texts it stores): nothing can hold such
        # a query here, and it cannot be sent as a text parameter at all.
        return []
    if query and not query.isascii():
        # A lone surrogate (a string cut inside an emoji) cannot be sent as text; the rows hold the
        # texts it stood in as U+FFFD (read leniently, as the file store's listing reads them): so does the query.
        query = node_utf8(query).decode()
    where = ["s.area = ANY(%(areas)s)"]
    args: dict[str, object] = {"areas": areas, "limit": limit}
    if cwd is not None:
        where.append("s.cwd = %(cwd)s")
        args["cwd"] = cwd
    if after is not None:
        where.append(
            "(s.modified_ms < %(mod)s OR (s.modified_ms = %(mod)s AND s.folder || '/' || s.file_name > %(key)s))"
        )
        args["mod"], args["key"] = after
    hit = ""
    snippet_column = "NULL::text AS hit"
    if query:
        args["pattern"] = _like(query)
        hit = (
            "LEFT JOIN LATERAL (SELECT t.text FROM sidecar_texts t WHERE t.session_id = s.id "
            "AND t.folded LIKE %(pattern)s ORDER BY t.seq LIMIT 1) hit ON true"
        )
        snippet_column = "hit.text AS hit"
        where.append(
            "(hit.text IS NOT NULL OR coalesce(s.name_folded, '') LIKE %(pattern)s "
            "OR coalesce(s.title_folded, '') LIKE %(pattern)s OR lower(s.id) LIKE %(pattern)s)"
        )
    sql = (
        "SELECT s.id, s.area, s.folder, s.file_name, s.cwd, s.created, s.modified_ms, s.message_count, "
        f"s.first_message, s.name, s.title, s.titled, s.parent_session, s.tokens_total, s.tokens_last, {snippet_column} "
        f"FROM sidecar_sessions s {hit} WHERE {' AND '.join(where)} "
        "ORDER BY s.modified_ms DESC, s.folder || '/' || s.file_name LIMIT %(limit)s"
    )

    def run(conn: psycopg.Connection) -> list[_Row]:
        with conn.cursor(row_factory=dict_row) as cur:
            cur.execute(sql, args, prepare=True)
            return cast("list[_Row]", cur.fetchall())  # (dict_row: a dict of the columns selected)

    rows = db.read(run, "list sessions")
    needle = query.casefold() if query else ""
    out = []
    for row in rows:
        snippet = None
        if query and row["hit"] is not None:
            found = first_around([(0, row["hit"])], needle)
            snippet = found[1] if found else None
        out.append(
            ListedRow(
                session_id=row["id"],
                placement=Placement(row["area"], row["folder"], row["file_name"]),
                cwd=row["cwd"],
                created=row["created"],
                modified_ms=row["modified_ms"],
                message_count=row["message_count"],
                first_message=row["first_message"] or "(no messages)",
                name=listed_name("pi", row["titled"], row["name"], row["title"]),  # (the store is pi's)
                title=row["title"],
                parent_session=row["parent_session"],
                tokens_total=row["tokens_total"],
                tokens_last=row["tokens_last"],
                snippet=snippet,
            )
        )
    return out


def sort_key(row: ListedRow) -> tuple[int, str]:
    """What a cursor after ``row`` holds."""
    return row.modified_ms, f"{row.placement.folder}/{row.placement.file_name}"


def list_sessions(db: Database, query: ListQuery) -> ListPage:
    """``session/list``'s page for ``query``."""
    from ..base import Listed, ListPage, key_cursor

    areas = ["live", "archive"] if query.include_archived else ["live"]
    cwd = None if query.all else query.cwd
    rows = list_page(db, areas, cwd, key_cursor(query.after), query.query, query.limit + 1)
    more = len(rows) > query.limit
    rows = rows[: query.limit]
    sessions = [
        Listed(
            session_id=r.session_id,
            location=LOCATION_PREFIX + r.placement.relative,
            cwd=r.cwd,
            created=r.created,
            modified_ms=r.modified_ms,
            message_count=r.message_count,
            first_message=r.first_message,
            tokens_total=r.tokens_total,
            tokens_last=r.tokens_last,
            name=r.name,
            title=r.name,
            parent_session=r.parent_session,
            archived=r.placement.area == "archive",
            snippet=r.snippet,
        )
        for r in rows
    ]
    cursor = encode_cursor(*sort_key(rows[-1])) if more and rows else None
    return ListPage(sessions=sessions, next_cursor=cursor)


def encode_cursor(modified: int, key: str) -> str:
    return base64.urlsafe_b64encode(msgspec.json.encode([modified, key])).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[int, str] | None:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        return msgspec.json.decode(raw, type=tuple[int, str])
    except (ValueError, msgspec.DecodeError, msgspec.ValidationError):
        return None
