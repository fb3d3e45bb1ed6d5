"""How a store is chosen: the settings name the backend, this opens it.

``store.databaseUrl`` set: every session in PostgreSQL (store/postgres/);
``store.format = "spec"``: the session spec's folders (store/spec/); else pi's
files below the root (store/files/). The one module at store's root that
imports a backend, and only inside ``open_store``, so that choosing costs
nothing until a store is opened and a process loads one backend alone.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InvalidParams

if TYPE_CHECKING:
    from ..config import Settings
    from .base import SessionStore
    from .cached import CachedContext
    from .session import Session

# The context at the leaf the next open will have (the file store keeps it in its tree cache; the service builds it).
ContextForCache = Callable[["Session"], "CachedContext | None"]


def open_store(root: Path, settings: Settings, context_for_cache: ContextForCache | None = None) -> SessionStore:
    """The store the settings choose, opened on ``root`` (InvalidParams for settings that cannot go together)."""
    if settings.store.databaseUrl and settings.store.format == "spec":
        raise InvalidParams(
            'store.format "spec" keeps sessions in folders below the root; it cannot be combined '
            "with store.databaseUrl (PostgreSQL holds pi-format sessions): drop one of the two",
            field="store.format",
        )
    if settings.store.databaseUrl:  # every session in PostgreSQL (store/postgres/)
        from .postgres.opening import postgres_store

        return postgres_store(root, settings)
    if settings.store.format == "spec":  # the session spec's folders (store/spec/)
        from .spec.store import SpecStore

        return SpecStore(root, settings)
    from .files.store import FileStore

    return FileStore(root, settings, context_for_cache)
