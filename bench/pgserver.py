"""The PostgreSQL server a benchmark measures against: the one it is given, else a throwaway cluster.

With no URL (and no $SIDECAR_TEST_DATABASE_URL) a cluster is started with
scripts/pg.sh in a temporary folder and stopped when the benchmark is done;
each benchmark works in a database of its own, dropped at the end.
"""

from __future__ import annotations

import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

PG_SH = Path(__file__).resolve().parent.parent / "scripts" / "pg.sh"


@contextmanager
def server(url: str | None) -> Iterator[str]:
    """``url``, or the URL of a cluster started for the block (and stopped after it)."""
    if url:
        yield url
        return
    cluster = tempfile.mkdtemp(prefix="bench-pg-") + "/cluster"
    started = subprocess.run(["bash", str(PG_SH), "start", cluster], check=True, capture_output=True, text=True)
    try:
        yield started.stdout.strip().splitlines()[-1]
    finally:
        subprocess.run(["bash", str(PG_SH), "stop", cluster], check=False)


@contextmanager
def fresh_database(url: str | None) -> Iterator[str]:
    """The URL of a new database on ``url``'s server (see ``server``), dropped after the block."""
    with server(url) as server_url:
        name = "bench_" + uuid.uuid4().hex[:8]
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        try:
            yield urlunsplit(urlsplit(server_url)._replace(path="/" + name))
        finally:
            with psycopg.connect(server_url, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
