"""``empty-trash`` and blob collection on PostgreSQL, with the file store's answers (upkeep/trash.py).

Emptying the trash erases each trashed session in its own transaction: its row is locked first (a sidecar
that opens it meanwhile waits, then finds it gone), a session a sidecar holds under a lease that has
not expired is kept and said so, and its lines, search texts and the files kept beside it (a migration's
``.v<N>.bak``, a ``.torn`` aside) go with it. ``older_than_s`` counts from ``trashed_ms``, when the session
went to the trash (the file store counts from the file's ctime, which a move sets).

A blob is collected only when no line of any session (live, archived or trashed) refers to it and it was not
stored or reused in the grace hour, as on files. The race with an append that names an existing blob is
closed by row locks, not by the grace hour alone: every write that puts lines naming blobs into the database
(append, create, rewrite: writer.py) first touches those blobs' rows (``stored_ms``) in its own transaction,
and fails whole when one is gone. The collection, in one transaction, first locks the rows of the blobs past
their grace (``FOR UPDATE``: it waits for a write that touched one to commit, and a write that comes later
waits for the collection), and only then reads which blobs the lines refer to, with a snapshot that sees
every write that touched a locked blob. So a blob is deleted only when no committed line names it and no
write can name it any more without failing; a crash halfway rolls the whole collection back.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import psycopg

from ...format.jsonl import BLOB_PREFIX
from ..usage import BLOB_GRACE_S, Erased
from .db import Database, OutcomeUnknown
from .rows import Placement
from .upkeep import LOCATION_PREFIX

# Digests named by a line: the same byte pattern the file store searches for (upkeep/usage.py). ``encode(line,
# 'escape')`` makes any bytes text without touching ASCII other than the backslash, which the pattern has not.
_REFERENCED = (
    "SELECT DISTINCT m[1] FROM sidecar_lines l, "
    "regexp_matches(encode(l.line, 'escape'), '\"' || %(prefix)s || '([0-9a-f]{64})', 'g') AS m "
    "WHERE position(convert_to('\"' || %(prefix)s, 'UTF8') IN l.line) > 0"
)
_SIZE = (
    "octet_length(s.tail) + coalesce((SELECT sum(octet_length(l.line) + 1) FROM sidecar_lines l "
    "WHERE l.session_id = s.id), 0)"
)


def empty_trash(db: Database, older_than_s: int | None, now_ns: int, dry_run: bool) -> Erased:
    """Erase trashed sessions (those trashed longer ago than ``older_than_s``, when given) and their kept files."""
    cutoff_ms = None if older_than_s is None else (now_ns - older_than_s * 1_000_000_000) // 1_000_000
    trashed = db.read(
        lambda conn: conn.execute(
            f"SELECT s.id, s.folder, s.file_name, {_SIZE} FROM sidecar_sessions s WHERE s.area = 'trash' "
            "AND (%s::bigint IS NULL OR coalesce(s.trashed_ms, 0) < %s::bigint) ORDER BY s.folder, s.file_name",
            (cutoff_ms, cutoff_ms),
        ).fetchall(),
        "read the trash",
    )
    erased = Erased()
    for session_id, folder, file_name, size in trashed:
        place = Placement("trash", folder, file_name).relative
        if dry_run:
            erased.files.append(Path(LOCATION_PREFIX + place))
            erased.bytes += int(size)
            continue
        try:
            outcome = db.run(partial(_erase_in, session_id, place), f"erase session {session_id} from the trash")
        except OutcomeUnknown as exc:  # the transaction is wholly done or wholly not; the next run tells
            erased.skipped.append((Path(LOCATION_PREFIX + place), str(exc)))
            continue
        if isinstance(outcome, str):
            if outcome:
                erased.skipped.append((Path(LOCATION_PREFIX + place), outcome))
            continue
        for path, nbytes in outcome:
            erased.files.append(Path(LOCATION_PREFIX + path))
            erased.bytes += nbytes
    return erased


def _erase_in(session_id: str, place: str, conn: psycopg.Connection) -> list[tuple[str, int]] | str:
    return _erase(conn, session_id, place)


def _erase(conn: psycopg.Connection, session_id: str, place: str) -> list[tuple[str, int]] | str:
    """One trashed session and its kept files, in one transaction: what was erased, or why it was kept
    ("" when it left the trash meanwhile: restored, or erased by another run)."""
    with conn.transaction():
        row = conn.execute(
            f"SELECT s.area, s.lease_owner, s.lease_expires > now(), {_SIZE} FROM sidecar_sessions s "
            "WHERE s.id = %s FOR UPDATE",
            (session_id,),
        ).fetchone()
        if row is None or row[0] != "trash":
            return ""
        if row[1] is not None and row[2]:  # this sidecar's own hold too, as a file lock is
            return (
                f"session {session_id} is open for writing in a sidecar ({row[1]}); "
                "run empty-trash again once it is closed"
            )
        kept = conn.execute(
            "DELETE FROM sidecar_files WHERE starts_with(path, %s) RETURNING path, octet_length(data)",
            (place + ".",),
        ).fetchall()
        # No foreign keys (schema version 2): the lines and texts go with the session explicitly.
        conn.execute("DELETE FROM sidecar_lines WHERE session_id = %s", (session_id,))
        conn.execute("DELETE FROM sidecar_texts WHERE session_id = %s", (session_id,))
        conn.execute("DELETE FROM sidecar_sessions WHERE id = %s", (session_id,))
        return [(place, int(row[3]))] + sorted((path, int(size)) for path, size in kept)


def collect_blobs(db: Database, now_ms: int, dry_run: bool, grace_s: int = BLOB_GRACE_S) -> Erased:
    """Delete (or, with ``dry_run``, list) the blobs past their grace that no line refers to (see the module doc)."""
    cutoff_ms = now_ms - grace_s * 1000

    def run(conn: psycopg.Connection) -> list[tuple[str, int]]:
        with conn.transaction():
            lock = "" if dry_run else " FOR UPDATE"
            candidates = [
                r[0]
                for r in conn.execute(
                    f"SELECT digest FROM sidecar_blobs WHERE stored_ms < %s ORDER BY digest{lock}", (cutoff_ms,)
                ).fetchall()
            ]
            if not candidates:
                return []
            referenced = [r[0] for r in conn.execute(_REFERENCED, {"prefix": BLOB_PREFIX}).fetchall()]
            verb = "SELECT digest, octet_length(data) FROM sidecar_blobs" if dry_run else "DELETE FROM sidecar_blobs"
            returning = "" if dry_run else " RETURNING digest, octet_length(data)"
            rows = conn.execute(
                f"{verb} WHERE digest = ANY(%s::text[]) AND digest <> ALL(%s::text[]){returning}",
                (candidates, referenced),
            ).fetchall()
            return sorted((digest, int(size)) for digest, size in rows)

    erased = Erased()
    try:
        collected = db.run(run, "collect the blobs no session refers to", write=not dry_run)
    except OutcomeUnknown as exc:  # one transaction: wholly done or not; stats tells
        erased.skipped.append((Path(LOCATION_PREFIX + "blobs"), str(exc)))
        return erased
    for digest, size in collected:
        erased.files.append(Path(LOCATION_PREFIX + "blobs/" + digest))
        erased.bytes += size
    return erased
