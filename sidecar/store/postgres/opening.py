"""Making the PostgreSQL store from the settings: connect (a bad URL, an unreachable server or
wrong credentials fail here, before any call), bring the schema forward, then serve."""

from __future__ import annotations

from pathlib import Path

from ...config import Settings
from ...errors import InvalidParams
from .db import DEFAULT_TIMEOUT, connect_checked
from .schema import ensure_schema
from .store import PostgresStore


def postgres_store(root: Path, settings: Settings) -> PostgresStore:
    url = settings.store.databaseUrl
    assert url, "postgres_store needs store.databaseUrl"
    if settings.store.compat == "omp":
        # Refused, never quietly turned into "pi": the database holds every session as pi writes it
        # (no title line, images inline), so nothing there would be what oh-my-pi expects.
        raise InvalidParams(
            'store.compat "omp" (oh-my-pi\'s title line, images in its blob folder) is a mode of session files '
            "below oh-my-pi's root; the PostgreSQL store (store.databaseUrl) keeps sessions as pi writes them: "
            'set store.compat to "pi" or leave it unset, or drop store.databaseUrl to keep oh-my-pi\'s files',
            field="store.compat",
        )
    database = connect_checked(url, DEFAULT_TIMEOUT)
    try:
        ensure_schema(database)
    except BaseException:
        database.close()
        raise
    return PostgresStore(root, settings, database, settings.store.leaseSeconds)
