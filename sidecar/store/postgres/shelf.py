"""The PostgreSQL store's answers about its sessions as a whole: the listing and the upkeep.

A mixin of ``PostgresStore`` (store.py), which holds ``db`` and ``root``: the
listing and its cursors come from SQL (listing.py), ``session/stats`` and
``session/prune`` from the tables (upkeep.py), empty-trash and blob collection
in transactions (erasing.py). Nothing here holds a session.
"""

from __future__ import annotations

import builtins
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from .listing import decode_cursor, list_sessions

if TYPE_CHECKING:
    from ...work import Work
    from ..base import Cursor, HeldUpkeep, ListPage, ListQuery
    from ..session import Session
    from ..usage import Erased, SessionFile, StoreUsage
    from .db import Database


class ShelfQueries:
    db: Database
    root: Path

    if TYPE_CHECKING:  # what PostgresStore's other base (HeldSessions) provides

        def held_sessions(self) -> list[Session]: ...

    # -- listing -------------------------------------------------------------------------

    def list(self, query: ListQuery, work: Work) -> ListPage:
        page = list_sessions(self.db, query)
        if query.after is None:  # in-memory sessions have no row: they lead the first page, as in a file root
            from ..index.inmemory import listed_in_memory

            page.sessions[:0] = listed_in_memory(query, self.held_sessions())
        return page

    def decode_cursor(self, cursor: str) -> Cursor | None:
        return decode_cursor(cursor)

    def reindex(self) -> int:
        row = self.db.read(lambda conn: conn.execute("SELECT count(*) FROM sidecar_sessions").fetchone())
        assert row is not None  # (count(*) always answers a row)
        return int(row[0])

    def upkeep_held(self, held: builtins.list[HeldUpkeep]) -> AbstractContextManager[None]:
        return nullcontext()

    def run_upkeep(self, held: builtins.list[HeldUpkeep]) -> None:
        pass

    # -- upkeep: session/stats and session/prune from the tables (postgres/upkeep.py) ---------

    def usage(self, find_unreferenced: bool) -> StoreUsage:
        from .upkeep import measure

        return measure(self.db, self.root, find_unreferenced)

    def pinned(self, found: SessionFile) -> bool:
        from .upkeep import pinned

        return pinned(self.db, found.session_id)

    # -- upkeep that erases: empty-trash and blob collection (postgres/erasing.py) ---------

    def empty_trash(self, older_than_s: int | None, now_ns: int, dry_run: bool) -> Erased:
        from .erasing import empty_trash

        return empty_trash(self.db, older_than_s, now_ns, dry_run)

    def collect_blobs(self, dry_run: bool) -> Erased:
        from .erasing import collect_blobs
        from .rows import now_ms

        return collect_blobs(self.db, now_ms(), dry_run)
