"""A read-only holder on PostgreSQL catching up with another host's appends (PgSession.catch_up), issue 12.

    .venv/bin/python bench/pg_catchup.py [--database-url URL] [--rounds N] [--sizes 1000,10000]

For each size, a session of a header and 20 entries is opened read-only; the writer's next
N lines (messages, a label, a custom entry and a damaged line now and then, as a host appends
them) are then put in its rows, and the holder catches up. Measured in turns, round by round, on
fresh holders of the same state:

- ``now``: the store's catch-up (the rows parsed as they arrive, format/linelist.py);
- ``before``: session 6's first catch-up, kept here to measure against in the same run: every row
  fetched as a tuple, copied to bytes, the lines joined into one buffer and parsed from it;
- ``files``: the file store's follow of the same lines appended to a session file (the reference).

Wall time, this process's CPU time and the server backend's (/proc, in clock ticks of 10 ms: a
rough figure), medians of the rounds.
Without a URL (or $SIDECAR_TEST_DATABASE_URL) a throwaway cluster is started with scripts/pg.sh.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import psycopg  # noqa: E402
from pgserver import fresh_database  # noqa: E402
from postgres import _backend_cpu  # noqa: E402

from sidecar.store.base import (
    FileChange,  # noqa: E402
    FsyncPolicy,  # noqa: E402
)
from sidecar.store.files.session import FileSession as Session  # noqa: E402
from sidecar.store.postgres.db import connect_checked  # noqa: E402
from sidecar.store.postgres.lease import open_stored  # noqa: E402
from sidecar.store.postgres.lines import insert_lines  # noqa: E402
from sidecar.store.postgres.schema import ensure_schema  # noqa: E402
from sidecar.store.postgres.session import PgSession, session_of  # noqa: E402
from sidecar.store.postgres.transfer import import_root  # noqa: E402
from sidecar.store.postgres.writer import PgWriter  # noqa: E402

SESSION_ID = "0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
BASE = 20


def _lines(first: int, count: int) -> list[bytes]:
    out = []
    for n in range(first, first + count):
        common = {"id": f"{n:08x}", "parentId": f"{n - 1:08x}" if n else None, "timestamp": "2026-01-01T00:00:00.000Z"}
        if n % 97 == 0:
            out.append(b"{a damaged line")
        if n % 50 == 7:
            obj = {"type": "label", **common, "targetId": f"{n - 2:08x}", "label": f"l{n}"}
        elif n % 50 == 9:
            obj = {"type": "custom", **common, "customType": "ext", "data": {"n": n}}
        else:
            role = "assistant" if n % 2 else "user"
            obj = {
                "type": "message",
                **common,
                "message": {
                    "role": role,
                    "content": [{"type": "text", "text": f"reply {n} with a few words in it " * 4}],
                    "timestamp": 1_700_000_000_000 + n,
                    **(
                        {
                            "provider": "anthropic",
                            "model": "m",
                            "stopReason": "stop",
                            "usage": {"input": 10, "output": 5, "totalTokens": 15},
                        }
                        if role == "assistant"
                        else {}
                    ),
                },
            }
        out.append(json.dumps(obj, separators=(",", ":")).encode())
    return out


HEADER = json.dumps(
    {"type": "session", "version": 3, "id": SESSION_ID, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/bench"},
    separators=(",", ":"),
).encode()


def _catch_up_as_before(session: PgSession) -> FileChange | None:
    """Session 6's first catch-up (before the rows were parsed as they arrive), kept to measure against."""
    db = session.writer.db

    def run(conn: psycopg.Connection) -> list[bytes]:
        with conn.transaction():
            conn.execute("SELECT line_count, tail FROM sidecar_sessions WHERE id = %s", (session.id,)).fetchone()
            rows = conn.execute(
                "SELECT line FROM sidecar_lines WHERE session_id = %s AND seq >= %s ORDER BY seq",
                (session.id, session.writer.line_count),
            ).fetchall()
            return [bytes(r[0]) for r in rows]

    lines = db.read(run)
    data = b"\n".join(lines) + b"\n"
    appended = session._add_tail(data, session.known_size)
    session.known_size += len(data)
    session.writer.line_count += len(lines)
    session.writer.size = session.known_size
    return FileChange(appended=appended)


def _reader(db) -> PgSession:
    stored = open_stored(db, SESSION_ID, None, 30, parse=True)
    session, _ = session_of(stored, PgWriter(db, SESSION_ID, stored.placement, "bench", 30, stored=stored), True)
    return session


def bench_size(db, file_path: Path, base: bytes, count: int, rounds: int) -> dict[str, tuple[float, float, float]]:
    appended = _lines(BASE, count)
    held = base.count(b"\n")  # the lines the holders open with (the header, the first entries, a damaged line)
    backend = db.read(lambda conn: conn.info.backend_pid)
    times: dict[str, list[tuple[float, float, float]]] = {"now": [], "before": [], "files": []}
    for round_ in range(rounds):

        def reset(conn: psycopg.Connection) -> None:
            conn.execute("DELETE FROM sidecar_lines WHERE session_id = %s AND seq >= %s", (SESSION_ID, held))
            conn.execute("UPDATE sidecar_sessions SET line_count = %s WHERE id = %s", (held, SESSION_ID))

        db.transaction(reset)
        holders = {"now": _reader(db), "before": _reader(db)}

        def put(conn: psycopg.Connection) -> None:
            insert_lines(conn, SESSION_ID, held, appended, [None] * len(appended), [])
            conn.execute(
                "UPDATE sidecar_sessions SET line_count = %s WHERE id = %s", (held + len(appended), SESSION_ID)
            )

        db.transaction(put)
        file_path.write_bytes(base)
        on_files, _ = Session.load(file_path, FsyncPolicy.ASSISTANT, read_only=True)
        with open(file_path, "ab") as file:
            file.write(b"\n".join(appended) + b"\n")
        ways = {
            "now": lambda: holders["now"].catch_up(),
            "before": lambda: _catch_up_as_before(holders["before"]),
            "files": lambda: on_files.follow(wait=False),
        }
        order = list(ways) if round_ % 2 == 0 else list(reversed(ways))
        counts = {}
        for name in order:
            s, c, t = _backend_cpu(backend), time.process_time(), time.perf_counter()
            change = ways[name]()
            times[name].append((time.perf_counter() - t, time.process_time() - c, _backend_cpu(backend) - s))
            counts[name] = len(change.appended) if change else 0
        assert len(set(counts.values())) == 1 and counts["now"] >= count, counts
        sizes = (holders["now"].known_size, holders["before"].known_size, on_files.known_size)
        assert len(set(sizes)) == 1, sizes
        for session in (*holders.values(), on_files):
            session.close()
    return {
        name: tuple(statistics.median(r[i] for r in rounds_) for i in range(3))  # type: ignore[misc]
        for name, rounds_ in times.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=os.environ.get("SIDECAR_TEST_DATABASE_URL"))
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--sizes", default="1000,10000")
    args = parser.parse_args()
    results = {}
    with fresh_database(args.database_url) as db_url:
        db = connect_checked(db_url)
        ensure_schema(db)
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "root"
            (root / "--bench--").mkdir(parents=True)
            base = HEADER + b"\n" + b"\n".join(_lines(0, BASE)) + b"\n"
            path = root / "--bench--" / f"2026-01-01T00-00-00-000Z_{SESSION_ID}.jsonl"
            path.write_bytes(base)
            import_root(db, root)
            follow_path = Path(tmp) / "follow" / path.name
            follow_path.parent.mkdir()
            for size in (int(s) for s in args.sizes.split(",")):
                results[size] = bench_size(db, follow_path, base, size, args.rounds)
        db.close()
    print(
        f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs; "
        f"medians of {args.rounds} rounds, the three ways in turns"
    )
    print(f"{'lines':>7}  {'way':<7} {'wall ms':>9} {'CPU ms':>8} {'server CPU ms':>14}  wall, CPU vs before")
    for size, ways in results.items():
        for way, (wall, cpu, server) in ways.items():
            ratio, cpu_ratio = wall / ways["before"][0], cpu / ways["before"][1]
            print(
                f"{size:>7,}  {way:<7} {wall * 1e3:>9.1f} {cpu * 1e3:>8.1f} {server * 1e3:>14.1f}  "
                f"{ratio:.2f}x, {cpu_ratio:.2f}x"
            )


if __name__ == "__main__":
    main()
