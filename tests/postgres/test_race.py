"""Two writers racing for one session under lease expiry (issue 12 part 3 and 6): the first is
SIGKILLed or SIGSTOPped mid-burst, the second takes the session when the lease expires, a
stopped first one is let go again. Over every trial: 0 forked trees (each entry is the child of
the line before it), 0 acknowledged entries lost, 0 interleaved batches, and a writer that
lost its lease never appends again. SIDECAR_PG_RACE_TRIALS sets the trials (default 200)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import psycopg

from sidecar.store.postgres.db import connect_checked
from sidecar.store.postgres.rows import Placement
from sidecar.store.postgres.schema import ensure_schema
from sidecar.store.postgres.writer import PgWriter, release

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRIALS = int(os.environ.get("SIDECAR_PG_RACE_TRIALS", "200"))
LEASE = 0.3


class Writer:
    def __init__(self, url: str, session_id: str, owner: str) -> None:
        self.owner = owner
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.postgres.race_writer", url, session_id, owner, str(LEASE)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        self.acked: list[tuple[str, str]] = []
        self.took = threading.Event()
        self.lost = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for text in self.proc.stdout:  # type: ignore[union-attr]
            words = text.split()
            if not text.endswith("\n"):
                continue  # cut by a SIGKILL while printed: the test never saw that acknowledgement
            if words[:1] == ["ack"] and len(words) == 3:
                self.acked.append((words[1], words[2]))
            elif words[:1] == ["took"]:
                self.took.set()
            elif words[:1] == ["lost"]:
                self.lost.set()

    def wait_acks(self, count: int, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while len(self.acked) < count and time.monotonic() < deadline and self.proc.poll() is None:
            time.sleep(0.005)
        assert len(self.acked) >= count, f"{self.owner} acknowledged {len(self.acked)} batches"

    def kill(self) -> None:
        try:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.kill()
        except ProcessLookupError:
            pass
        self.proc.wait()


def trial(url: str, n: int, rng: random.Random) -> str:
    session_id = f"race{n}"
    db = connect_checked(url)
    writer = PgWriter(db, session_id, Placement("live", "--w--", f"r_{session_id}.jsonl"), "setup", LEASE)
    writer.create(
        json.dumps(
            {"type": "session", "version": 3, "id": session_id, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
        ).encode()
        + b"\n"
    )
    release(db, session_id, "setup", writer.fence)
    db.close()
    how = rng.choice(["kill", "stop"])
    first = Writer(url, session_id, f"A{n}")
    second = None
    try:
        first.wait_acks(rng.randint(1, 6))
        time.sleep(rng.random() * 0.01)  # land anywhere in the burst, mid-append too
        first.proc.send_signal(signal.SIGKILL if how == "kill" else signal.SIGSTOP)
        second = Writer(url, session_id, f"B{n}")
        second.wait_acks(3)
        if how == "stop":
            first.proc.send_signal(signal.SIGCONT)
            # Its lease is gone: its next append is refused and it says so.
            assert first.lost.wait(10), "a writer that lost its lease kept appending"
            assert first.proc.wait(10) == 3
        acked_first = list(first.acked)
        second.wait_acks(len(second.acked) + 2)
    finally:
        first.kill()
        if second is not None:
            second.kill()
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT line FROM sidecar_lines WHERE session_id = %s ORDER BY seq", (session_id,)
        ).fetchall()
    lines = [json.loads(bytes(r[0])) for r in rows]
    for before, after in zip(lines[1:], lines[2:]):
        assert after["parentId"] == before["id"], f"trial {n}: the tree forked at {after['id']}"
    assert lines[1]["parentId"] is None
    at = {line["id"]: i for i, line in enumerate(lines)}
    assert len(at) == len(lines), f"trial {n}: an entry written twice"
    for a, b in acked_first + second.acked:
        assert a in at and b in at and at[b] == at[a] + 1, f"trial {n}: acknowledged batch {a} lost or interleaved"
    owners = [line["id"].split("-")[0] for line in lines[1:]]
    switch = owners.index(f"B{n}")
    assert all(o == f"A{n}" for o in owners[:switch]) and all(o == f"B{n}" for o in owners[switch:]), (
        f"trial {n}: the two writers' entries interleave"
    )
    return how


def test_two_writers_racing_under_lease_expiry(pg_url: str) -> None:
    db = connect_checked(pg_url)
    ensure_schema(db)
    db.close()
    rng = random.Random(int(os.environ.get("SIDECAR_PG_RACE_SEED", "12")))
    seeds = [rng.randrange(1 << 30) for _ in range(TRIALS)]
    started = time.monotonic()
    with ThreadPoolExecutor(8) as pool:
        kinds = list(pool.map(lambda n: trial(pg_url, n, random.Random(seeds[n])), range(TRIALS)))
    print(
        f"\n  {TRIALS} trials ({kinds.count('kill')} SIGKILL, {kinds.count('stop')} SIGSTOP) in "
        f"{time.monotonic() - started:.1f} s: 0 forked trees, 0 lost or interleaved acknowledged entries"
    )
