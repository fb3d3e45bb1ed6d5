"""A session's lease, across hosts: taking it as the session is read, giving it up, renewing it.

One writer per session: the session row carries a lease (``lease_owner``,
``lease_fence``, ``lease_expires``). Opening for writing takes it when it is
free or expired, adding one to the fence; the lines are read in the same
transaction, after the row is locked, so the new owner sees every line the old
one committed. The fence is then checked by every append (writer.py): a writer
that lost its lease can never append afterwards.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import cast

import psycopg
from psycopg.rows import dict_row

from ...errors import SessionLocked, SessionNotFound, StorageError
from ...format.jsonl import ParsedFile
from ...format.linelist import LineParser, parse_lines
from .db import Database, OutcomeUnknown
from .rows import Placement, SessionRow, join_file

log = logging.getLogger(__name__)

DEFAULT_LEASE_SECONDS = 30.0

_SESSION_COLUMNS = (
    "id, area, folder, file_name, cwd, created, parent_session, title, name, first_message, message_count, "
    "last_activity, modified_ms, tokens_total, tokens_last, line_count, tail, lease_owner, lease_fence, lease_expires"
)


@dataclass(slots=True)
class Stored:
    """A session as read from the database: its row, and its file as its lines (each without its
    newline) and its tail (the bytes after the last newline). The lines are parsed as they came
    (format/linelist.py): the file itself is joined only when asked for (``data``)."""

    row: SessionRow
    lines: list[bytes]
    tail: bytes
    fence: int | None  # the lease taken with it (None: read-only)
    parser: LineParser | None = None  # fed the lines as they arrived (open_stored's ``parse``)

    @property
    def placement(self) -> Placement:
        return Placement(self.row["area"], self.row["folder"], self.row["file_name"])

    @property
    def size(self) -> int:
        """The file's length in bytes."""
        return sum(map(len, self.lines)) + len(self.lines) + len(self.tail)

    @property
    def data(self) -> bytes:
        """The session's file, byte for byte (joined on each call)."""
        return join_file(self.lines, self.tail)

    def parsed(self) -> ParsedFile:
        """The session's file parsed (as ``parse_file`` of ``data``); ``NotASession`` when it is none."""
        parser, self.parser = self.parser, None
        if parser is None:
            return parse_lines(self.lines, self.tail)
        return parser.finish(self.tail)


def lease_interval(seconds: float) -> float:
    return max(0.05, float(seconds))


def _locked(row: SessionRow, session_id: str) -> SessionLocked:
    return SessionLocked(
        f"session {session_id} is held for writing by another sidecar ({row['lease_owner']}) "
        f"until {row['lease_expires'].isoformat() if row['lease_expires'] else 'it closes it'}; "
        "open it with readOnly, or again once that sidecar closes it or its lease expires",
        sessionId=session_id,
        owner=row["lease_owner"],
        # data.path as the file store gives it (PROTOCOL.md): the session's location, pg:<area>/<folder>/<file>
        path="pg:" + Placement(row["area"], row["folder"], row["file_name"]).relative,
    )


def open_stored(
    db: Database,
    session_id: str,
    owner: str | None,
    lease_seconds: float,
    area: str | None = None,
    parse: bool = False,
) -> Stored:
    """The session's bytes and row; with ``owner``, its lease taken (SessionLocked when another holds it);
    with ``parse``, its lines parsed as they arrive (``Stored.parsed`` finishes it)."""

    def run(conn: psycopg.Connection) -> Stored:
        with conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
            fence = None
            if owner is not None:
                cur.execute(
                    "UPDATE sidecar_sessions SET lease_owner = %s, lease_fence = lease_fence + 1, "
                    "lease_expires = now() + %s * interval '1 second' "
                    "WHERE id = %s AND (lease_owner IS NULL OR lease_owner = %s OR lease_expires <= now()) "
                    "RETURNING lease_fence",
                    (owner, lease_interval(lease_seconds), session_id, owner),
                )
                taken = cur.fetchone()
                if taken is not None:
                    fence = taken["lease_fence"]
            cur.execute(f"SELECT {_SESSION_COLUMNS} FROM sidecar_sessions WHERE id = %s", (session_id,))
            row = cast("SessionRow | None", cur.fetchone())  # (dict_row: a dict of _SESSION_COLUMNS)
            if row is None or (area is not None and row["area"] != area):
                raise SessionNotFound(f"no session {session_id} in the database", sessionId=session_id)
            if owner is not None and fence is None:
                raise _locked(row, session_id)
            parser = LineParser() if parse else None
            return Stored(row, _lines(conn, _SELECT_LINES, (session_id,), parser), bytes(row["tail"]), fence, parser)

    return db.run(run, f"open session {session_id}", write=owner is not None)


# Rows a chunk, when the session is parsed as it arrives: the server decompresses and sends the next
# chunk while this one is parsed (2 CPUs: the two overlap). bench's 20,000-entry session at load 10,
# medians of 9 in turns: 64 a chunk 358 ms wall, 128-1,024 295-315 ms, one result 475 ms.
STREAM_CHUNK = 256
# libpq's chunked rows mode (what ``Cursor.stream``'s size asks for) came with libpq 17.
_CAN_STREAM = psycopg.pq.version() >= 170000

_SELECT_LINES = "SELECT line FROM sidecar_lines WHERE session_id = %s ORDER BY seq"
_SELECT_LINES_SINCE = "SELECT line FROM sidecar_lines WHERE session_id = %s AND seq >= %s ORDER BY seq"
_SELECT_LINES_BETWEEN = "SELECT line FROM sidecar_lines WHERE session_id = %s AND seq >= %s AND seq < %s ORDER BY seq"


def _lines(
    conn: psycopg.Connection,
    query: str,
    params: tuple[object, ...],
    parser: LineParser | None = None,
) -> list[bytes]:
    """The session's lines ``query`` selects (all of them, or those since a line), in order; with
    ``parser``, each chunk fed to it as it arrives.

    Binary, so each comes as its bytes (not hex text twice its size). Without a parser they are
    taken from the whole result as they are: no row objects for a session's tens of thousands of lines.

    Measured on bench/load.py's 50 MB session (session 5): binary COPY of the same rows took as long
    and as much CPU; one server-side ``string_agg`` into a single buffer took longer (the server
    grows the buffer, and its sort spills), so the rows stay rows. Session 6: COPY in CSV (its bytes
    the file's, with quote and delimiter bytes no JSON line holds raw) needs the lines as text
    (``convert_from``), and the server's UTF-8 check and CSV scan of them took 2-3x this SELECT's
    server CPU and wall time. Parsing each chunk while the server sends the next, with no join
    (bench/postgres.py, load 7-10): open + buildContext 442-513 ms wall and 120-142 ms of CPU,
    against 682-724 ms and 171-204 ms for the whole result joined and parsed, in turns."""
    with conn.cursor(binary=True) as cur:
        if parser is not None and _CAN_STREAM:
            lines: list[bytes] = []
            chunk: list[bytes] = []
            add = chunk.append
            for (line,) in cur.stream(query, params, size=STREAM_CHUNK):
                add(line or b"")
                if len(chunk) == STREAM_CHUNK:
                    parser.feed(chunk)
                    lines += chunk
                    chunk.clear()
            parser.feed(chunk)
            lines += chunk
            return lines
        cur.execute(query, params)
        result = cur.pgresult
        if result is None:
            lines = []
        else:
            value = result.get_value
            lines = [value(row, 0) or b"" for row in range(result.ntuples)]
        if parser is not None:
            parser.feed(lines)
        return lines


def read_since(
    db: Database,
    session_id: str,
    seq: int,
    parser: LineParser | None = None,
    upto: int | None = None,
) -> tuple[list[bytes], int, bytes]:
    """Lines from ``seq`` on (before ``upto`` when given), the line count and the tail now: what a
    read-only opener has not seen. With ``parser`` (``LineParser.after_header``), the lines are
    parsed as they arrive, as the open parses them (``_lines``)."""

    def run(conn: psycopg.Connection) -> tuple[list[bytes], int, bytes]:
        with conn.transaction():
            row = conn.execute("SELECT line_count, tail FROM sidecar_sessions WHERE id = %s", (session_id,)).fetchone()
            if row is None:
                raise SessionNotFound(f"session {session_id} is no longer in the database", sessionId=session_id)
            if upto is None:
                lines = _lines(conn, _SELECT_LINES_SINCE, (session_id, seq), parser)
            else:
                lines = _lines(conn, _SELECT_LINES_BETWEEN, (session_id, seq, upto), parser)
            return lines, int(row[0]), bytes(row[1])

    return db.read(run, f"read session {session_id}")


def release(db: Database, session_id: str, owner: str, fence: int) -> None:
    """Give the lease up (session/close); nothing to do when it was lost already."""

    def run(conn: psycopg.Connection) -> None:
        conn.execute(
            "UPDATE sidecar_sessions SET lease_owner = NULL, lease_expires = NULL "
            "WHERE id = %s AND lease_owner = %s AND lease_fence = %s",
            (session_id, owner, fence),
        )

    try:
        db.run(run, f"release session {session_id}")
    except (StorageError, OutcomeUnknown) as exc:  # it expires by itself
        log.warning("could not release the lease of session %s (%s); it expires by itself", session_id, exc)


def renew_all(db: Database, owner: str, lease_seconds: float) -> int:
    """Extend every lease ``owner`` holds; returns how many."""

    def run(conn: psycopg.Connection) -> int:
        cur = conn.execute(
            "UPDATE sidecar_sessions SET lease_expires = now() + %s * interval '1 second' WHERE lease_owner = %s",
            (lease_interval(lease_seconds), owner),
        )
        return cur.rowcount

    return db.run(run, "renew leases")
