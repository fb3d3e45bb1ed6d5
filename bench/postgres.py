"""The PostgreSQL store's figures against their goals (issue 12 part 7), each ratio measured in one run.

    .venv/bin/python bench/postgres.py [--database-url URL] [--quick] [--parts append,list,open]

Without a URL (or $SIDECAR_TEST_DATABASE_URL) a throwaway cluster is started
with scripts/pg.sh and stopped at the end. Measured at the store's level (the
writer, the SQL listing, loading a session's lines), not through JSON-RPC:

1. one-entry append p50 / p99 on PostgreSQL (lease and fence checked, listing
   fields kept, one statement) vs a bare INSERT of the same line committed on
   its own (same driver, same server), the two taking turns call by call so
   the machine's load weighs on both alike, and vs the file store's append
   (fsync after an assistant message, as the default policy does). CPU time
   per call is this process's (all its threads: the driver, the watchdog).
2. batch append, 100 entries a call: entries/s (median of 5 rounds, the batches made before
   the clock starts) and CPU per call.
3. session/list's SQL over 10,000 sessions (bench/many_sessions.py's root,
   imported with migrate), warm, and with a query (snippet included).
4. open + buildContext of bench/load.py's 20,000-entry session from
   PostgreSQL (read-only, as the store opens it) vs the file store's first
   open (no tree cache), taking turns with session 5's read (the rows joined
   into one file, then parsed); wall and CPU time, this process's and the
   server backend's, medians of the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import load  # noqa: E402
import many_sessions  # noqa: E402
import psycopg  # noqa: E402
from pgserver import fresh_database  # noqa: E402

from sidecar.context.build import build_context  # noqa: E402
from sidecar.format.jsonl import parse_file  # noqa: E402
from sidecar.store.base import FsyncPolicy
from sidecar.store.files.session import FileSession as Session  # noqa: E402
from sidecar.store.files.writer import SessionWriter  # noqa: E402
from sidecar.store.postgres.db import connect_checked  # noqa: E402
from sidecar.store.postgres.lease import open_stored  # noqa: E402
from sidecar.store.postgres.listing import list_page  # noqa: E402
from sidecar.store.postgres.rows import Placement, join_file  # noqa: E402
from sidecar.store.postgres.schema import ensure_schema  # noqa: E402
from sidecar.store.postgres.session import session_of  # noqa: E402
from sidecar.store.postgres.transfer import import_root  # noqa: E402
from sidecar.store.postgres.writer import PgWriter  # noqa: E402
from sidecar.store.tree import SessionTree  # noqa: E402


def _line(n: int, role: str = "assistant") -> bytes:
    return json.dumps(
        {
            "type": "message",
            "id": f"{n:08x}",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {
                "role": role,
                "content": [{"type": "text", "text": f"reply {n} with a few words in it"}],
                "provider": "anthropic",
                "model": "m",
                "usage": {"input": 10, "output": 5, "totalTokens": 15},
                "stopReason": "stop",
                "timestamp": 1_700_000_000_000 + n,
            },
        },
        separators=(",", ":"),
    ).encode()


HEADER = b'{"type":"session","version":3,"id":"bench","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/bench"}'


def _pct(times: list[float], q: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_append(url: str, count: int, flush: bool = True) -> dict[str, float]:
    """With ``flush`` false both sides commit without waiting for the WAL flush (synchronous_commit
    off): what is left is the statement's own cost, which a fast disk would leave as the ratio."""
    if not flush:
        url = url + ("&" if "?" in url else "?") + "options=-csynchronous_commit%3Doff"
    db = connect_checked(url)
    ensure_schema(db)
    session_id = f"bench-{uuid.uuid4().hex[:8]}"
    writer = PgWriter(db, session_id, Placement("live", "--bench--", f"b_{session_id}.jsonl"), "bench", 60)
    writer.create(HEADER + b"\n")
    pg, bare, pg_cpu, bare_cpu = [], [], 0.0, 0.0
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS bare_lines")
        conn.execute("CREATE TABLE bare_lines (session_id text, seq bigint, line bytea, PRIMARY KEY (session_id, seq))")
        for n in range(count + 50):
            line = _line(1000 + n)
            c, t = time.process_time(), time.perf_counter()
            writer.append([line], durable=True)
            took, cpu = time.perf_counter() - t, time.process_time() - c
            if n >= 50:  # the first 50 warm both (prepared statements, caches)
                pg.append(took)
                pg_cpu += cpu
            c, t = time.process_time(), time.perf_counter()
            conn.execute("INSERT INTO bare_lines VALUES (%s, %s, %s)", ("bench", n, line), prepare=True)
            took, cpu = time.perf_counter() - t, time.process_time() - c
            if n >= 50:
                bare.append(took)
                bare_cpu += cpu
        conn.execute("DROP TABLE bare_lines")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        fw = SessionWriter(path, FsyncPolicy.ASSISTANT, exists=False)
        fw.create(HEADER + b"\n")
        files = []
        for n in range(count):
            line = _line(n)
            t = time.perf_counter()
            fw.append([line], durable=True)
            files.append(time.perf_counter() - t)
        fw.close()
    # The batches are made before the clock starts: the figure is the store's, not json.dumps' (making
    # 100 lines took ~0.7 ms of the ~1.4 ms of CPU per call that was counted before session 5's round 2).
    calls = max(20, count // 10)
    rounds = 5
    batches = [[_line(200_000 + n * 100 + i) for i in range(100)] for n in range(calls * rounds)]
    rates, batch_cpu = [], []
    for r in range(rounds):
        c, t = time.process_time(), time.perf_counter()
        for batch in batches[r * calls : (r + 1) * calls]:
            writer.append(batch, durable=True)
        rates.append(calls * 100 / (time.perf_counter() - t))
        batch_cpu.append((time.process_time() - c) / calls)
    batch_rate = statistics.median(rates)
    del batches
    writer.close()
    db.close()
    return {
        "pg_p50": statistics.median(pg),
        "pg_p99": _pct(pg, 0.99),
        "pg_cpu": pg_cpu / count,
        "bare_p50": statistics.median(bare),
        "bare_cpu": bare_cpu / count,
        "file_p50": statistics.median(files),
        "batch_rate": batch_rate,
        "batch_cpu": statistics.median(batch_cpu),
    }


def bench_list(url: str, sessions: int, repeat: int) -> dict[str, float]:
    root = HERE / "data" / f"many-{sessions}"
    if not root.exists():
        many_sessions.generate(root, sessions=sessions)
    db = connect_checked(url)
    ensure_schema(db)
    t = time.perf_counter()
    import_root(db, root)
    imported = time.perf_counter() - t
    list_page(db, ["live"], None, None, None, 50)
    warm, query = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        rows = list_page(db, ["live"], None, None, None, 50)
        warm.append(time.perf_counter() - t)
        t = time.perf_counter()
        found = list_page(db, ["live"], None, None, "branch leaf", 50)
        query.append(time.perf_counter() - t)
    assert rows and found and found[0].snippet
    db.close()
    return {"list": min(warm), "query": min(query), "import": imported}


def _open_as_before(db, session_id: str) -> None:
    """Session 5's read, kept to measure against in the same run: the rows joined into the file,
    then parse_file of it (each line cut out of the joined file again)."""
    stored = open_stored(db, session_id, None, 30)
    parsed = parse_file(join_file(stored.lines, stored.tail))
    tree = SessionTree()
    tree.add_parsed(parsed.items)
    build_context(tree.path(tree.leaf_id))


def _open_as_the_store_does(db, session_id: str) -> None:
    """PostgresStore's read-only open (store.py ``_load``): the rows, parsed as they came, into a session."""
    stored = open_stored(db, session_id, None, 30, parse=True)
    session, _ = session_of(stored, PgWriter(db, session_id, stored.placement, "bench", 30, stored=stored), True)
    build_context(session.tree.path(session.leaf_id))


def bench_open(url: str, repeat: int) -> dict[str, float]:
    path = load.DATA
    if not path.exists():
        load.generate(path)
    db = connect_checked(url)
    ensure_schema(db)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "--bench--").mkdir()
        (root / "--bench--" / path.name).write_bytes(path.read_bytes())
        import_root(db, root)
    session_id = json.loads(path.read_bytes().split(b"\n", 1)[0])["id"]
    # The server backend's CPU (/proc/<pid>/stat, where this machine can read it): where the
    # decompression of the rows lands.
    backend = db.read(lambda conn: conn.info.backend_pid)
    ways = {"pg": lambda: _open_as_the_store_does(db, session_id), "before": lambda: _open_as_before(db, session_id)}
    times: dict[str, list[tuple[float, float, float]]] = {"pg": [], "before": [], "files": []}
    for _ in range(repeat):
        for name, way in ways.items():
            s, c, t = _backend_cpu(backend), time.process_time(), time.perf_counter()
            way()
            times[name].append((time.perf_counter() - t, time.process_time() - c, _backend_cpu(backend) - s))
        c, t = time.process_time(), time.perf_counter()
        session, _ = Session.load(path, FsyncPolicy.ASSISTANT, read_only=True)
        build_context(session.tree.path(session.leaf_id))
        session.close()
        times["files"].append((time.perf_counter() - t, time.process_time() - c, 0.0))
        del session
    db.close()
    figures = {}
    for name, rounds in times.items():
        for column, what in enumerate(("open", "cpu", "server_cpu")):
            figures[f"{name}_{what}"] = statistics.median(r[column] for r in rounds)
    return figures


def _backend_cpu(pid: int) -> float:
    """CPU seconds (user + system) the server process ``pid`` has used; 0 where /proc cannot tell."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=os.environ.get("SIDECAR_TEST_DATABASE_URL"))
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--parts", default="append,list,open", help="which figures to measure (comma-separated)")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    with fresh_database(args.database_url) as db_url:
        count = 300 if args.quick else 2000
        a = bench_append(db_url, count) if "append" in parts else None
        unflushed = bench_append(db_url, count, flush=False) if "append" in parts else None
        listing = bench_list(db_url, 2000 if args.quick else 10_000, 5) if "list" in parts else None
        opened = bench_open(db_url, 3 if args.quick else 9) if "open" in parts else None
    rows = []
    if a:
        rows += [
            (
                "append p50 (PostgreSQL)",
                f"{a['pg_p50'] * 1e3:.3f} ms",
                f"bare INSERT {a['bare_p50'] * 1e3:.3f} ms",
                f"ratio {a['pg_p50'] / a['bare_p50']:.2f}x (goal <= 1.5x)",
            ),
            ("append CPU per call", f"{a['pg_cpu'] * 1e3:.3f} ms", f"bare INSERT {a['bare_cpu'] * 1e3:.3f} ms", ""),
            (
                "append p50, no WAL flush wait",
                f"{unflushed['pg_p50'] * 1e3:.3f} ms",
                f"bare INSERT {unflushed['bare_p50'] * 1e3:.3f} ms",
                f"ratio {unflushed['pg_p50'] / unflushed['bare_p50']:.2f}x",
            ),
            ("append p99 (PostgreSQL)", f"{a['pg_p99'] * 1e3:.3f} ms", "", ""),
            (
                "append p50 (file store, fsync)",
                f"{a['file_p50'] * 1e3:.3f} ms",
                "",
                f"PostgreSQL / files {a['pg_p50'] / a['file_p50']:.2f}x",
            ),
            (
                "batch append, 100/call",
                f"{a['batch_rate']:,.0f} entries/s",
                f"CPU {a['batch_cpu'] * 1e3:.2f} ms per call",
                "goal >= 20,000/s (median of 5 rounds)",
            ),
        ]
    if listing:
        rows += [
            (
                f"list, {'2,000' if args.quick else '10,000'} sessions, warm",
                f"{listing['list'] * 1e3:.1f} ms",
                "",
                "goal < 50 ms",
            ),
            ("list with a query + snippet", f"{listing['query'] * 1e3:.1f} ms", "", "goal < 50 ms"),
            ("migrate of that root", f"{listing['import']:.1f} s", "", ""),
        ]
    if opened:
        rows += [
            (
                "open + buildContext, 20,000 entries",
                f"{opened['pg_open'] * 1e3:.0f} ms",
                f"file store first open {opened['files_open'] * 1e3:.0f} ms",
                f"ratio {opened['pg_open'] / opened['files_open']:.2f}x (goal <= 2x)",
            ),
            (
                "  CPU time of it (this process)",
                f"{opened['pg_cpu'] * 1e3:.0f} ms",
                f"file store {opened['files_cpu'] * 1e3:.0f} ms",
                f"ratio {opened['pg_cpu'] / opened['files_cpu']:.2f}x",
            ),
            (
                "  + the server backend's CPU",
                f"{(opened['pg_cpu'] + opened['pg_server_cpu']) * 1e3:.0f} ms",
                f"server {opened['pg_server_cpu'] * 1e3:.0f} ms",
                f"ratio {(opened['pg_cpu'] + opened['pg_server_cpu']) / opened['files_cpu']:.2f}x",
            ),
            (
                "  session 5's read (rows joined)",
                f"{opened['before_open'] * 1e3:.0f} ms",
                f"CPU {opened['before_cpu'] * 1e3:.0f} ms + server {opened['before_server_cpu'] * 1e3:.0f} ms",
                f"ratio {opened['before_open'] / opened['files_open']:.2f}x",
            ),
        ]
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    width = max(len(r[0]) for r in rows)
    for figure, measured, baseline, goal in rows:
        print(f"{figure:<{width}}  {measured:>22}  {baseline:<32}  {goal}")


if __name__ == "__main__":
    main()
