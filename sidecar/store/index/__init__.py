"""The listing index: what ``session/list`` answers, kept in SQLite beside the session files.

The file backend (``store/files/``) keeps it and the PostgreSQL backend cuts its
snippets and summaries by the same rules. ``sqlite.py`` is the index itself
(``ListingIndex``), ``schema.py`` its tables, ``scan.py`` a folder's files,
``read.py`` files into rows and appended lines folded into them, ``workers.py``
a cold rebuild's files read in worker processes, ``search.py`` queries,
``build.py`` the full-text build off the request path, ``watch.py`` which
folders changed (inotify), ``listing.py`` a file's summary, cursors and sort.

This face stays cheap to import: a name is loaded from its module when first
asked for (a worker process imports ``workers.py`` alone).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazyface import lazy_names

if TYPE_CHECKING:
    from .listing import Accumulator, Summary, decode_line, iso_from_ms, modified_ms
    from .search import first_around
    from .sqlite import INDEX_DIR, INDEX_NAME, IndexUnavailable, ListingIndex

_WHERE = {
    "Accumulator": "listing",
    "Summary": "listing",
    "decode_line": "listing",
    "iso_from_ms": "listing",
    "modified_ms": "listing",
    "first_around": "search",
    "INDEX_DIR": "sqlite",
    "INDEX_NAME": "sqlite",
    "IndexUnavailable": "sqlite",
    "ListingIndex": "sqlite",
}

__all__ = [
    "Accumulator",
    "INDEX_DIR",
    "INDEX_NAME",
    "IndexUnavailable",
    "ListingIndex",
    "Summary",
    "decode_line",
    "first_around",
    "iso_from_ms",
    "modified_ms",
]


__getattr__ = lazy_names(__name__, _WHERE, globals())
