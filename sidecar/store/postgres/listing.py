"""``session/list`` answered in SQL: the session rows' listing fields, newest first,
and a query as pi has it (a case-insensitive substring of the name, the title,
the id or any message text), the message texts searched through a trigram
index and the first matching one cut into a snippet, all in one statement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.rows import dict_row

from ..indexsearch import first_around  # the file store's snippet rule, so both stores cut alike
from .db import Database
from .rows import Placement


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
    where = ["s.area = ANY(%(areas)s)"]
    args: dict[str, Any] = {"areas": areas, "limit": limit}
    if cwd is not None:
        where.append("s.cwd = %(cwd)s")
        args["cwd"] = cwd
    if after is not None:
        where.append("(s.modified_ms < %(mod)s OR (s.modified_ms = %(mod)s AND s.folder || '/' || s.file_name > %(key)s))")
        args["mod"], args["key"] = after
    hit = ""
    snippet_column = "NULL::text AS hit"
    if query:
        args["pattern"] = _like(query)
        hit = (
            "LEFT JOIN LATERAL (SELECT t.text FROM sidecar_texts t WHERE t.session_id = s.id "
            "AND lower(t.text) LIKE %(pattern)s ORDER BY t.seq LIMIT 1) hit ON true"
        )
        snippet_column = "hit.text AS hit"
        where.append(
            "(hit.text IS NOT NULL OR lower(coalesce(s.name, '')) LIKE %(pattern)s "
            "OR lower(coalesce(s.title, '')) LIKE %(pattern)s OR lower(s.id) LIKE %(pattern)s)"
        )
    sql = (
        "SELECT s.id, s.area, s.folder, s.file_name, s.cwd, s.created, s.modified_ms, s.message_count, "
        f"s.first_message, s.name, s.title, s.parent_session, s.tokens_total, s.tokens_last, {snippet_column} "
        f"FROM sidecar_sessions s {hit} WHERE {' AND '.join(where)} "
        "ORDER BY s.modified_ms DESC, s.folder || '/' || s.file_name LIMIT %(limit)s"
    )

    def run(conn: psycopg.Connection) -> list[dict[str, Any]]:
        with conn.cursor(row_factory=dict_row) as cur:
            cur.execute(sql, args, prepare=True)
            return cur.fetchall()

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
                name=row["name"],
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
