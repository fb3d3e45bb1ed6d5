"""``session/stats`` and ``session/prune`` on PostgreSQL: what the tables hold, in the file store's terms.

A session's bytes are those of the pi file ``export-root`` writes for it (every line and its newline, then the
tail), so stats read the same on both stores for the same sessions. Its age is the listing's ``modified`` (the
last entry's time, else the header's): a row has no file time. Blob references are found by a byte search of
the lines in SQL, no line is parsed; names come from the session row, labels from the lines that hold one.
"""

from __future__ import annotations

from pathlib import Path

import psycopg

from ...format.jsonl import BLOB_PREFIX, parse_line
from ..files.usage import AREAS
from ..index.sqlite import INDEX_DIR
from ..tree import SessionTree
from ..usage import SessionFile, StoreUsage, folder_bytes
from .db import Database
from .rows import Placement

LOCATION_PREFIX = "pg:"
_TABLES = ("sidecar_sessions", "sidecar_lines", "sidecar_texts", "sidecar_blobs", "sidecar_files")


def measure(db: Database, root: Path, find_unreferenced: bool) -> StoreUsage:
    # (each session: id, area, folder, file name, modified ms, bytes; the blobs' count and bytes; the
    # indexes' bytes; each unreferenced blob's digest and bytes)
    def run(
        conn: psycopg.Connection,
    ) -> tuple[list[tuple[str, str, str, str, int, int]], tuple[int, int], int, list[tuple[str, int]] | None]:
        sessions = conn.execute(
            "SELECT s.id, s.area, s.folder, s.file_name, s.modified_ms, octet_length(s.tail)"
            " + coalesce((SELECT sum(octet_length(l.line) + 1) FROM sidecar_lines l WHERE l.session_id = s.id), 0)"
            " FROM sidecar_sessions s ORDER BY s.modified_ms DESC, s.file_name DESC, s.id DESC"
        ).fetchall()
        blobs = conn.execute("SELECT count(*), coalesce(sum(octet_length(data)), 0) FROM sidecar_blobs").fetchone()
        indexes = conn.execute(
            "SELECT coalesce(sum(pg_indexes_size(to_regclass(t))), 0) FROM unnest(%s::text[]) AS t", (list(_TABLES),)
        ).fetchone()
        assert blobs is not None and indexes is not None  # (an aggregate always answers a row)
        unreferenced = None
        if find_unreferenced:
            # A blob is referenced by any line of any session, live, archived or trashed.
            unreferenced = conn.execute(
                "SELECT b.digest, octet_length(b.data) FROM sidecar_blobs b WHERE NOT EXISTS ("
                " SELECT 1 FROM sidecar_lines l WHERE position(convert_to(%s || b.digest, 'UTF8') IN l.line) > 0)"
                " ORDER BY b.digest",
                ('"' + BLOB_PREFIX,),
            ).fetchall()
        return sessions, blobs, int(indexes[0]), unreferenced

    sessions, blobs, indexes, unreferenced = db.read(run, "measure the store")
    usage = StoreUsage(bytes_by_area={area: 0 for area in AREAS})
    for session_id, area, folder, file_name, modified_ms, size in sessions:
        place = Placement(area, folder, file_name).relative
        usage.sessions.append(
            SessionFile(
                Path(LOCATION_PREFIX + place), area, folder, session_id, int(size), int(modified_ms) * 1_000_000
            )
        )
        usage.bytes_by_area[area] += int(size)
    usage.blob_count, usage.blob_bytes = int(blobs[0]), int(blobs[1])
    # The database's indexes, and what stays below the root on this host (prompt history).
    usage.index_bytes = indexes + folder_bytes(root / INDEX_DIR)
    if unreferenced is not None:
        usage.unreferenced_blobs = [Path(LOCATION_PREFIX + "blobs/" + digest) for digest, _ in unreferenced]
        usage.unreferenced_bytes = sum(int(size) for _, size in unreferenced)
    return usage


def pinned(db: Database, session_id: str | None) -> bool:
    """Named now, or labelled now (a label line may have been cleared by a later one: the tree decides)."""

    def run(conn: psycopg.Connection) -> tuple[tuple[str | None] | None, list[bytes]]:
        name = conn.execute("SELECT name FROM sidecar_sessions WHERE id = %s", (session_id,)).fetchone()
        labels = conn.execute(
            'SELECT line FROM sidecar_lines WHERE session_id = %s AND position(\'"type":"label"\'::bytea IN line) > 0'
            " ORDER BY seq",
            (session_id,),
        ).fetchall()
        return name, [bytes(row[0]) for row in labels]

    name, label_lines = db.read(run, f"read the name and labels of session {session_id}")
    if name is not None and name[0]:
        return True
    if not label_lines:
        return False
    # Each line on its own: they are no file (no header first), and a line that does not parse is no label.
    tree = SessionTree()
    tree.add_parsed([entry for entry in map(parse_line, label_lines) if entry is not None])
    return bool(tree.labels)
