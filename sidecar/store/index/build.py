"""The listing index's full-text build: pending texts moved into the trigram index off the request path.

Reading a file or an append only stores its texts (a plain insert, table
``pending``); the trigram index, which costs several times more, is built
later, so a cold listing and every append stay cheap. A query moves a few
pending texts itself; many (after a rebuild) are moved by a background thread
on its own connection, a chunk per transaction, so a write waits for one chunk
at most. Until they are moved, a query reads them row by row (indexsearch.py):
the same answer, slower.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

from .search import drain_chunk

log = logging.getLogger(__name__)

DRAIN_INLINE = 200  # pending text rows a query moves into the full-text index itself, on its own path
# What the builder moves per transaction: up to this many rows and about this much text. Larger chunks
# cost less in all (fewer merges: 250 rows a chunk 28 s of CPU at 100,000 files, 4,000 rows 22 s) but
# hold a waiting write longer.
DRAIN_CHUNK = 1000
DRAIN_CHARS = 4 << 20


def drain(conn: sqlite3.Connection) -> None:
    """Move every pending text into the full-text index, a chunk per transaction."""
    while drain_chunk(conn, DRAIN_CHUNK, DRAIN_CHARS):
        pass


class SearchBuilder:
    """The background thread that builds the full-text index of an index file's pending texts."""

    def __init__(self, path: Path, busy_ms: Callable[[], int]) -> None:
        self._path = path
        self._busy_ms = busy_ms
        self.thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    @property
    def running(self) -> bool:
        thread = self.thread
        return thread is not None and thread.is_alive()

    def drain_some(self, conn: sqlite3.Connection) -> None:
        """Before a query: a few pending texts are indexed now; many are left to the background thread."""
        if self.running:
            return
        if conn.execute("SELECT 1 FROM pending LIMIT 1").fetchone() is None:
            return
        if conn.execute(f"SELECT 1 FROM pending LIMIT 1 OFFSET {DRAIN_INLINE}").fetchone() is None:
            drain_chunk(conn, DRAIN_INLINE + 1, DRAIN_CHARS)
        else:
            self.start()

    def start(self) -> None:
        with self._lock:
            if self.running:
                return
            self._stopping.clear()
            self.thread = threading.Thread(target=self._build, name="index-search", daemon=True)
            self.thread.start()

    def stop(self) -> None:
        with self._lock:
            thread, self.thread = self.thread, None
            if thread is not None:
                self._stopping.set()
                thread.join()

    def _build(self) -> None:
        busy_ms = self._busy_ms()
        try:
            conn = sqlite3.connect(self._path, timeout=busy_ms / 1000, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            log.info("full-text index not built in the background (%s); queries read the texts", exc)
            return
        try:
            conn.execute(f"PRAGMA busy_timeout={int(busy_ms)}")
            while not self._stopping.is_set() and drain_chunk(conn, DRAIN_CHUNK, DRAIN_CHARS):
                pass
        except sqlite3.Error as exc:
            log.info("full-text index build stopped (%s); queries read the texts not yet indexed", exc)
        finally:
            conn.close()
