"""Moving a session in the database: to another area (archive, trash, restore) or another
project folder (its header's cwd rewritten, every other byte kept).

Each move is one transaction that locks the session row first and refuses a
session another sidecar holds under a lease that has not expired; the caller
(store.py) has released its own hold on the session before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import psycopg

from ...errors import DamagedFile, SessionExists, SessionLocked, SessionNotFound, StorageError
from ...format.jsonl import encode, parse_line
from .db import Database, OutcomeUnknown
from .rows import Placement, now_ms

T = TypeVar("T")

_WHERE = {
    None: "among live or archived sessions",
    "live": "among live sessions",
    "archive": "in the archive",
    "trash": "in the trash",
}


def move_area(db: Database, session_id: str, from_area: str | None, to: str, owner: str, verb: str) -> Placement:
    """Move the session from ``from_area`` (None: live or archive) to ``to``; where it is now."""
    areas = ["live", "archive"] if from_area is None else [from_area]

    def run(conn: psycopg.Connection) -> tuple[str, str, str] | str:
        with conn.transaction():
            row = conn.execute(
                "SELECT area, lease_owner, lease_expires > now(), folder, file_name FROM sidecar_sessions "
                "WHERE id = %s FOR UPDATE",
                (session_id,),
            ).fetchone()
            if row is None or row[0] not in areas:
                return "missing"
            if row[1] is not None and row[1] != owner and row[2]:
                return f"held:{row[1]}"
            moved = conn.execute(
                # When it went to the trash: empty-trash's --older-than counts from it (erasing.py).
                "UPDATE sidecar_sessions SET area = %s, trashed_ms = %s WHERE id = %s RETURNING area, folder, file_name",
                (to, now_ms() if to == "trash" else None, session_id),
            ).fetchone()
            assert moved is not None  # (the row is there: it was locked above)
            _carry_files(conn, Placement(row[0], row[3], row[4]).relative, Placement(*moved).relative)
            return moved

    moved = _moved(db, run, verb, session_id, f"no session {session_id!r} {_WHERE[from_area]}")
    return Placement(*moved)


def move_folder(db: Database, session_id: str, folder: str, cwd: str, owner: str) -> Placement:
    """Give a live session the project folder ``folder`` (of ``cwd``); where it is now."""

    def run(conn: psycopg.Connection) -> Placement | str:
        with conn.transaction():
            row = conn.execute(
                "SELECT area, folder, file_name, lease_owner, lease_expires > now() FROM sidecar_sessions "
                "WHERE id = %s FOR UPDATE",
                (session_id,),
            ).fetchone()
            if row is None or row[0] != "live":
                return "missing"
            if row[3] is not None and row[3] != owner and row[4]:
                return f"held:{row[3]}"
            if row[1] == folder:
                return Placement(row[0], row[1], row[2])
            taken = conn.execute(
                "SELECT 1 FROM sidecar_sessions WHERE area = 'live' AND folder = %s AND file_name = %s",
                (folder, row[2]),
            ).fetchone()
            if taken:
                return "exists"
            for seq, line in conn.execute(
                "SELECT seq, line FROM sidecar_lines WHERE session_id = %s ORDER BY seq LIMIT 4", (session_id,)
            ).fetchall():
                entry = parse_line(bytes(line))
                if entry is not None and entry.type == "session":
                    header = entry.obj()
                    header["cwd"] = cwd
                    conn.execute(
                        "UPDATE sidecar_lines SET line = %s WHERE session_id = %s AND seq = %s",
                        (encode(header), session_id, seq),
                    )
                    break
            else:
                return "damaged"
            conn.execute("UPDATE sidecar_sessions SET folder = %s, cwd = %s WHERE id = %s", (folder, cwd, session_id))
            _carry_files(conn, Placement(row[0], row[1], row[2]).relative, Placement(row[0], folder, row[2]).relative)
            return Placement(row[0], folder, row[2])

    moved = _moved(
        db,
        run,
        "move",
        session_id,
        f"no live session {session_id!r} in the database",
        {
            "exists": SessionExists(
                f"cannot move: {folder}/ already holds a session with that file name", sessionId=session_id
            ),
            "damaged": DamagedFile(
                f"session {session_id} has no session header in its first lines", sessionId=session_id
            ),
        },
    )
    return moved


def _moved(
    db: Database,
    run: Callable[[psycopg.Connection], T | str],
    verb: str,
    session_id: str,
    missing: str,
    refusals: dict[str, Exception] | None = None,
) -> T:
    """Run one move's transaction and turn its refusals ("missing", "held:<owner>", the caller's own) into errors."""
    try:
        moved = db.run(run, f"{verb} session {session_id}")
    except OutcomeUnknown as exc:
        raise StorageError(f"could not {verb} session {session_id}: {exc}", latched=False) from None
    if moved == "missing":
        raise SessionNotFound(f"cannot {verb}: {missing}", sessionId=session_id)
    if refusals and isinstance(moved, str) and moved in refusals:
        raise refusals[moved]
    if isinstance(moved, str):
        raise SessionLocked(
            f"cannot {verb}: session {session_id} is held by another sidecar ({moved[5:]}); open it "
            "with readOnly to read it, or try again once that sidecar closes it or its lease expires",
            sessionId=session_id,
            owner=moved[5:],
        )
    return moved


def _carry_files(conn: psycopg.Connection, before: str, after: str) -> None:
    """The files kept beside a session (a migration's ``.v<N>.bak``, a ``.torn`` aside) go where it goes,
    as the file store moves them with it."""
    if before != after:
        conn.execute(
            "UPDATE sidecar_files SET path = %s || substr(path, %s) WHERE starts_with(path, %s)",
            (after, len(before) + 1, before + "."),
        )
