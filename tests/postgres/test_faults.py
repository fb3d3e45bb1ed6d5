"""Faults (issue 12 part 6): the server restarted mid-burst, the connection killed, the network
stalled. Every acknowledged batch is there afterwards, an unacknowledged one wholly or not at
all, each failing call is answered storageError within a bounded time, and appends work again
once the database is back, in the same process. Figures are printed (pytest -s shows them)."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field

import psycopg

from postgres.proxy import StallingProxy
from sidecar.errors import SessionLocked, StorageError
from sidecar.store.postgres.db import Database, check_url, connect_checked
from sidecar.store.postgres.rows import Placement
from sidecar.store.postgres.schema import ensure_schema
from sidecar.store.postgres.writer import PgWriter, open_stored

TIMEOUT = 2.0
# A call may wait for its own timeout, then for one read settling an unknown outcome.
BOUND = 2 * TIMEOUT + 1.0


def line(entry_id: str) -> bytes:
    return json.dumps(
        {
            "type": "custom",
            "id": entry_id,
            "parentId": None,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "customType": "burst",
            "data": {"n": entry_id},
        },
        separators=(",", ":"),
    ).encode()


HEADER = b'{"type":"session","version":3,"id":"burst","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}'


@dataclass
class Burst:
    acked: list[list[str]] = field(default_factory=list)
    failed: list[list[str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    slowest: float = 0.0
    reopened: int = 0
    first_error_at: float | None = None
    recovered_at: float | None = None


def run_burst(url: str, stop: threading.Event, out: Burst, size: int = 3) -> None:
    db = Database(check_url(url), timeout=TIMEOUT)
    writer = PgWriter(db, "burst", Placement("live", "--w--", "b_burst.jsonl"), "owner", 60)
    writer.create(HEADER + b"\n")
    n = 0
    while not stop.is_set():
        batch = [f"e{n}-{i}" for i in range(size)]
        n += 1
        started = time.monotonic()
        try:
            if writer.error is not None:  # latched: open the session again, as a client would
                stored = open_stored(db, "burst", "owner", 60)
                writer = PgWriter(db, "burst", stored.placement, "owner", 60, stored=stored)
                out.reopened += 1
            writer.append([line(i) for i in batch], durable=True)
            out.acked.append(batch)
            if out.first_error_at is not None and out.recovered_at is None:
                out.recovered_at = time.monotonic()
        except (StorageError, SessionLocked) as exc:
            out.failed.append(batch)
            out.errors.append(exc.kind)
            if out.first_error_at is None:
                out.first_error_at = time.monotonic()
            time.sleep(0.05)
        out.slowest = max(out.slowest, time.monotonic() - started)


def check(url: str, out: Burst) -> None:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT line FROM sidecar_lines WHERE session_id = 'burst' ORDER BY seq").fetchall()
    ids = [json.loads(bytes(r[0]))["id"] for r in rows][1:]
    assert len(ids) == len(set(ids)), "a line was written twice"
    at = {entry_id: index for index, entry_id in enumerate(ids)}
    for batch in out.acked:
        assert all(i in at for i in batch), f"acknowledged batch {batch} lost"
        assert [at[i] for i in batch] == list(range(at[batch[0]], at[batch[0]] + len(batch))), "batch interleaved"
    for batch in out.failed:
        present = [i in at for i in batch]
        assert all(present) or not any(present), f"batch {batch} half there"
    assert out.slowest <= BOUND, f"a call took {out.slowest:.2f} s"
    assert out.recovered_at is not None, "appends never worked again"
    print(
        f"\n  acked {len(out.acked)} batches, failed {len(out.failed)} ({sorted(set(out.errors))}), "
        f"reopened {out.reopened}, slowest call {out.slowest * 1000:.0f} ms, "
        f"back {1000 * (out.recovered_at - out.first_error_at):.0f} ms after the first error"
    )


def with_burst(url: str, fault) -> Burst:
    db = connect_checked(url)
    ensure_schema(db)
    db.close()
    stop, out = threading.Event(), Burst()
    thread = threading.Thread(target=run_burst, args=(url, stop, out), daemon=True)
    thread.start()
    time.sleep(0.5)
    fault(out)
    deadline = time.monotonic() + 30
    while out.recovered_at is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    stop.set()
    thread.join(BOUND + 5)
    assert out.failed, "the fault never reached the writer"
    return out


def test_server_restarted_immediately_mid_burst(pg_url: str, cluster) -> None:
    out = with_burst(pg_url, lambda _: cluster.pg_ctl("restart", "-m", "immediate", "-w", "-t", "60"))
    check(pg_url, out)


def test_connection_killed_mid_burst(pg_url: str) -> None:
    def kill(out: Burst) -> None:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            for _ in range(5):
                conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE application_name = 'session-sidecar' AND pid <> pg_backend_pid()"
                )
                time.sleep(0.2)

    out = with_burst(pg_url, kill)
    check(pg_url, out)


def test_stalled_network_answers_within_the_bound_then_recovers(pg_url: str, cluster) -> None:
    proxy = StallingProxy(cluster.port)
    via = pg_url.replace(f":{cluster.port}/", f":{proxy.port}/")

    def stall(out: Burst) -> None:
        proxy.stall()
        deadline = time.monotonic() + 4 * BOUND
        while len(out.failed) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        proxy.resume()

    try:
        out = with_burst(via, stall)
        check(pg_url, out)
    finally:
        proxy.close()
