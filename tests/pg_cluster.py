"""A PostgreSQL server for the tests: the one scripts/test.sh started
(``SIDECAR_TEST_DATABASE_URL``), else a throwaway cluster started here with
scripts/pg.sh and stopped when the tests end. Each test gets a database of its own."""

from __future__ import annotations

import os
import subprocess
import tempfile
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

REPO = Path(__file__).resolve().parents[1]
URL_ENV = "SIDECAR_TEST_DATABASE_URL"
DIR_ENV = "SIDECAR_TEST_PG_DIR"


class Cluster:
    def __init__(self) -> None:
        self.url = os.environ.get(URL_ENV)
        self.dir = os.environ.get(DIR_ENV)
        self._owned: str | None = None

    def start(self) -> None:
        if self.url:
            return
        base = tempfile.mkdtemp(prefix="sidecar-pg-")
        self._owned = base
        self.dir = os.path.join(base, "cluster")
        out = subprocess.run(
            ["bash", str(REPO / "scripts" / "pg.sh"), "start", self.dir],
            check=True,
            capture_output=True,
            text=True,
            timeout=600,
        )
        self.url = out.stdout.strip().splitlines()[-1]

    def stop(self) -> None:
        if self._owned is not None:
            subprocess.run(["bash", str(REPO / "scripts" / "pg.sh"), "stop", self.dir], check=False, timeout=120)
            os.rmdir(self._owned) if os.path.isdir(self._owned) else None

    def with_db(self, name: str) -> str:
        parts = urlsplit(self.url)
        return urlunsplit(parts._replace(path="/" + name))

    def new_database(self) -> tuple[str, str]:
        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return name, self.with_db(name)

    def drop_database(self, name: str) -> None:
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    @property
    def bin(self) -> str:
        return Path(self.dir, "bin").read_text().strip()

    @property
    def port(self) -> int:
        return int(urlsplit(self.url).port)

    def pg_ctl(self, *args: str) -> subprocess.CompletedProcess:
        """pg_ctl on the cluster; the server's output goes to its log (never to our pipe, which it would hold open)."""
        command = [f"{self.bin}/pg_ctl", "-D", f"{self.dir}/data", "-l", f"{self.dir}/server.log", *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        return subprocess.run(command, check=True, capture_output=True, text=True, timeout=120)
