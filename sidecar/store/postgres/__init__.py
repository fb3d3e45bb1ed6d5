"""PostgreSQL as a second store: sessions for agents on many hosts (issue 12).

``db`` connects and bounds every call in time, ``schema`` versions the tables,
``rows`` maps a session file onto rows and back, ``writer`` holds a session
under a lease and appends with a fence, ``listing`` answers session/list in
SQL, ``transfer`` imports a file root and exports it back byte for byte.

``opening.postgres_store`` makes the store from the settings (store/choosing.py calls it);
``command.py`` is the command-line driver (migrate, export-root). The face loads a name on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazyface import lazy_names

if TYPE_CHECKING:
    from .opening import postgres_store
    from .store import PostgresStore

_WHERE = {
    "postgres_store": "opening",
    "PostgresStore": "store",
}

__all__ = [
    "PostgresStore",
    "postgres_store",
]


__getattr__ = lazy_names(__name__, _WHERE, globals())
