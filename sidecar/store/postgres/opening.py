"""Making the PostgreSQL store from the settings: connect (a bad URL, an unreachable server or
wrong credentials fail here, before any call), bring the schema forward, then serve."""

from __future__ import annotations

from pathlib import Path

from ...config import Settings
from .db import DEFAULT_TIMEOUT, connect_checked
from .schema import ensure_schema
from .store import PostgresStore


def postgres_store(root: Path, settings: Settings) -> PostgresStore:
    url = settings.store.databaseUrl
    assert url, "postgres_store needs store.databaseUrl"
    database = connect_checked(url, DEFAULT_TIMEOUT)
    try:
        ensure_schema(database)
    except BaseException:
        database.close()
        raise
    return PostgresStore(root, settings, database, settings.store.leaseSeconds)
