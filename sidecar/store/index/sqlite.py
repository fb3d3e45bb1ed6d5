"""The listing index: what ``session/list`` returns, kept in sqlite beside the session files.

The files stay the truth. Each row remembers the size and mtime of the file it
was read from; a list compares those with the files of each folder that may
have changed (one stat each, no reads) and reads again only what changed
behind the sidecar's back, what is new, and drops what is gone. Which folders
may have changed, inotify says (watch.py): a watched folder with no event
since its last scan is not looked at; without inotify every folder is. The
sidecar's own appends update a row from the appended lines alone, so the next
list finds it fresh (the rpc layer may hold an inline append's update until
just after its answer; see SidecarProtocol.run_upkeep). A missing or damaged
index is rebuilt from the files (in one transaction, new rows and texts by
batches); ``session-sidecar reindex`` rebuilds it on demand. A folder scan
also removes the hidden temp files that killed creates and migrations left
(their process gone).

Message text goes into an FTS5 table (trigram tokenizer: case-insensitive
substring match, as pi's query is), a row holding a file's texts joined (a
large file's in several rows, an append's in one), rowid ``file_id << 32 |
n``, so one file's rows are a rowid range. Texts are first stored plain
(``pending``); a query moves a few into the FTS table itself, and many (after
a rebuild) are moved by a background thread on its own connection, a chunk
per transaction. Until they are, a query also reads the pending texts row by
row: the same answer, slower. How a query uses both: indexsearch.py. A cold
rebuild of many files reads them in worker processes (indexwork.py).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from ...format.jsonl import Entry
from .build import SearchBuilder, drain
from .listing import STUB_SQL
from .read import BULK_ROWS, fold_file, read_files
from .scan import load as _load
from .scan import scan_folder as _scan_folder
from .schema import COLUMNS as _COLUMNS  # noqa: F401
from .schema import Row, connect
from .search import contains as _contains
from .search import delete_texts as _delete_texts
from .search import holds as _holds
from .search import query_rows
from .watch import FolderWatch

log = logging.getLogger(__name__)

T = TypeVar("T")

INDEX_DIR = ".index"
INDEX_NAME = "sessions.sqlite3"
_SCAN_THREADS = 8  # stat calls release the GIL; a slow file system answers several at once
_SLOW_STAT_S = 50e-6  # a stat this slow or slower: the folders are scanned in threads (local disks: 3-7 us)
_BUILD_AFTER = 64  # files read by one sync past which the background builder starts at once
_CACHE_KIB = -2000  # sqlite's default page cache (negative: KiB)
_BULK_CACHE_KIB = -32768  # while a sync reads BULK_ROWS files or more


class IndexUnavailable(Exception):
    """The index could not be used (locked past the busy timeout); callers fall back to the files."""


class ListingIndex:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.path = self.root / INDEX_DIR / INDEX_NAME
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        # path -> (size, mtime_ns) of every row, grouped by folder: what a list compares stats with.
        self._known: dict[str, dict[str, tuple[int, int]]] = {}
        self._pool: ThreadPoolExecutor | None = None
        # Folders with no change since their last scan (inotify), which a list need not look at.
        self._watch = FolderWatch(str(self.root))
        # Builds the full-text index of pending texts off the request path (after a rebuild).
        self.search_builder = SearchBuilder(self.path, lambda: self.busy_ms)
        # How long a write waits for another sidecar's transaction before the list reads the files instead.
        self.busy_ms = 10_000

    # -- connection ------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = self._connect()
        return self._conn

    def _connect(self) -> sqlite3.Connection:
        conn, self._known = connect(self.path, self.busy_ms, _contains, _holds)
        self._watch.forget()
        return conn

    def _discard(self) -> None:
        """Throw the index away (damaged): the next use rebuilds it from the files."""
        self.search_builder.stop()
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
            self._conn = None
        self._known = {}
        self._watch.forget()
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(str(self.path) + suffix)
            except FileNotFoundError:
                pass

    def _run(self, action: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``action`` on the connection; a damaged index is discarded and the action run once more."""
        with self._lock:
            for attempt in (0, 1):
                try:
                    return action(self._connection())
                except sqlite3.OperationalError as exc:
                    if _busy(exc):
                        self._rollback()
                        raise IndexUnavailable(str(exc)) from exc
                    if attempt:
                        raise
                    log.warning(
                        "listing index %s is unusable (%s); rebuilding it from the session files", self.path, exc
                    )
                    self._discard()
                except sqlite3.DatabaseError as exc:
                    if attempt:
                        raise
                    log.warning(
                        "listing index %s is damaged (%s); rebuilding it from the session files", self.path, exc
                    )
                    self._discard()
        raise AssertionError("unreachable")

    def _rollback(self) -> None:
        if self._conn is not None and self._conn.in_transaction:
            try:
                self._conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self._watch.close()
        self.search_builder.stop()

    # -- keeping rows fresh ----------------------------------------------------------

    def sync(
        self,
        folders: Iterable[tuple[Path, str]],
        prune: Iterable[tuple[Path, str]] = (),
        check: Callable[[int, int], None] | None = None,
    ) -> None:
        """Bring the rows of ``folders`` (each with its area) in line with their files.

        ``prune`` (base, area) pairs: also drop rows of folders below ``base``
        that are no longer there.

        A folder the watch saw no change in since its last scan is not looked
        at: its rows stand as they are.
        """
        bases = {str(base) for base, _ in prune}
        folders = list(folders)
        requested = {str(folder) for folder, _ in folders}

        def action(conn: sqlite3.Connection) -> None:
            watch = self._watch
            watch.drain()
            todo = [(folder, area) for folder, area in folders if not watch.unchanged(str(folder))]
            for folder, _ in todo:
                watch.arm(str(folder))  # before the scan: what changes during it raises an event
            try:
                read = update(conn, todo)
            except BaseException:
                watch.forget([str(folder) for folder, _ in todo])
                raise
            if check is not None and not read:
                # Nothing to read: one report over what is listed (and one point where a cancel is seen).
                listed = sum(len(self._known.get(key, ())) for key in requested)
                check(listed, listed)

        def update(conn: sqlite3.Connection, todo: list[tuple[Path, str]]) -> int:
            """Bring the rows of ``todo`` in line with their files; the number of files read."""
            changed: list[tuple[int, str, str, str]] = []  # (its place among the files scanned, path, folder, area)
            gone: list[str] = []
            listings = self._scan([folder for folder, _ in todo])
            scanned = 0
            for (folder, area), files in zip(todo, listings):
                key = str(folder)
                known = self._known.get(key, {})
                if files != known:  # (one comparison in C for a folder nothing changed in: most, after a start)
                    for place, (path, stat) in enumerate(files.items(), scanned):
                        if known.get(path) != stat:
                            changed.append((place, path, key, area))
                    gone.extend(path for path in known if path not in files)
                scanned += len(files)
            for folder_key, rows in self._known.items():
                if (
                    folder_key not in requested
                    and os.path.dirname(folder_key) in bases
                    and not os.path.isdir(folder_key)
                ):
                    gone.extend(rows)
            if not changed and not gone:
                return 0
            read = len(changed)
            many = read >= BULK_ROWS
            if (
                many
            ):  # a larger page cache while many rows go in (for the path index and the sorts that make the others)
                conn.execute(f"PRAGMA cache_size={_BULK_CACHE_KIB}")
            conn.execute("BEGIN IMMEDIATE")
            try:
                for path in gone:
                    self._delete(conn, path)
                self._read_many(conn, changed, check)
                conn.execute("COMMIT")
            except BaseException:
                self._rollback()
                self._reload_known(conn)
                raise
            finally:
                if many:
                    try:
                        conn.execute(f"PRAGMA cache_size={_CACHE_KIB}")
                    except sqlite3.Error:  # (never the error to report: the one that stopped the read is)
                        pass
            if read >= _BUILD_AFTER:
                self.search_builder.start()
            return read

        self._run(action)

    def _scan(self, folders: list[Path]) -> list[dict[str, tuple[int, int]]]:
        """path -> (size, mtime_ns) of each folder's session files: one lstat each.

        Folders are scanned in parallel threads only when the file system is slow to answer (the
        first folder's lstat calls took _SLOW_STAT_S each or more: a network file system answers
        several at once). A local one answers in a few microseconds, which threads only slow down
        (the GIL taken back after every call: 10,000 files took 34 ms in one thread, 62 ms in eight
        on a 2-core machine), and a first list after a start pays for every file."""
        if len(folders) < 8:
            return [_scan_folder(folder) for folder in folders]
        start = time.perf_counter()
        first = _scan_folder(folders[0])
        if time.perf_counter() - start < _SLOW_STAT_S * (len(first) + 1):
            return [first, *map(_scan_folder, folders[1:])]
        return [first, *self._scan_pool().map(_scan_folder, folders[1:])]

    def _reload_known(self, conn: sqlite3.Connection) -> None:
        self._watch.forget()
        known: dict[str, dict[str, tuple[int, int]]] = {}
        try:
            for path, folder, size, mtime in conn.execute("SELECT path, dir, size, mtime_ns FROM files"):
                known.setdefault(folder, {})[path] = (size, mtime)
        except sqlite3.Error:
            pass
        self._known = known

    def _delete(self, conn: sqlite3.Connection, path: str) -> None:
        row = conn.execute("SELECT id FROM files WHERE path=?", (path,)).fetchone()
        if row is not None:
            file_id = row[0]
            _delete_texts(conn, file_id)
            conn.execute("DELETE FROM files WHERE id=?", (file_id,))
        self._known.get(os.path.dirname(path), {}).pop(path, None)

    def _read_into(self, conn: sqlite3.Connection, path: str, folder: str, area: str, size: int, mtime: int) -> None:
        """(Re)read one file whole into its row and texts."""
        self._read_many(conn, [(0, path, folder, area)], None)

    def _read_many(
        self,
        conn: sqlite3.Connection,
        items: list[tuple[int, str, str, str]],
        check: Callable[[int, int], None] | None,
    ) -> None:
        """(Re)read each (index, path, folder, area) whole into its row and texts (in the caller's transaction)."""
        read_files(conn, items, self._known, check, self._delete, _load)

    def _scan_pool(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=_SCAN_THREADS, thread_name_prefix="index-scan")
        return self._pool

    def refresh(self, path: Path, area: str) -> None:
        """Read one file into the index now (a new file, a fork)."""

        def action(conn: sqlite3.Connection) -> None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                self._read_into(conn, str(path), str(path.parent), area, 0, 0)
                conn.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise

        self._safely(action)

    def appended(self, path: Path, area: str, entries: list[Entry]) -> None:
        """The sidecar appended ``entries`` (their lines held) to ``path``: fold them into its row (the file
        is not read)."""
        self.appended_to([(path, area, entries)])

    def appended_to(self, jobs: list[tuple[Path, str, list[Entry]]]) -> None:
        """``appended`` of each job (each of another file) in one transaction: a commit costs more than
        folding a run of appends. When that fails, each file's alone, failing (or not) as alone."""

        def action(conn: sqlite3.Connection) -> None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for path, area, entries in jobs:
                    fold_file(conn, self._known, path, area, entries, self._read_into)
                conn.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise

        if len(jobs) == 1:
            self._safely(action)
            return
        try:
            self._run(action)
        except (sqlite3.Error, IndexUnavailable, OSError):
            with self._lock:
                self._reload_known_safely()  # (what the folds before the failure noted was rolled back)
            for job in jobs:
                self.appended_to([job])

    def moved(self, source: Path, target: Path | None, area: str | None) -> None:
        """A file was renamed (archive, restore) or left the listed areas (``target`` None: trash)."""

        def action(conn: sqlite3.Connection) -> None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if target is None or area is None:
                    self._delete(conn, str(source))
                else:
                    self._delete(conn, str(target))
                    conn.execute(
                        "UPDATE files SET path=?, dir=?, area=? WHERE path=?",
                        (str(target), str(target.parent), area, str(source)),
                    )
                    old = self._known.get(str(source.parent), {}).pop(str(source), None)
                    if old is not None:
                        self._known.setdefault(str(target.parent), {})[str(target)] = old
                conn.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise

        self._safely(action)

    def _safely(self, action: Callable[[sqlite3.Connection], None]) -> None:
        """Index upkeep after a write: a failure here never fails the write (the next list reads the file)."""
        try:
            self._run(action)
        except (sqlite3.Error, IndexUnavailable, OSError) as exc:
            log.warning("listing index not updated (%s); the next list reads the changed files", exc)
            with self._lock:
                self._reload_known_safely()

    def _reload_known_safely(self) -> None:
        if self._conn is not None:
            self._reload_known(self._conn)

    def rebuild(self, folders: Iterable[tuple[Path, str]]) -> int:
        """Discard the index and read every file of ``folders`` again; returns the sessions indexed."""
        with self._lock:
            self._discard()
            self.sync(folders)
            self.build_search()
            return self._run(lambda conn: conn.execute("SELECT count(*) FROM files WHERE is_session=1").fetchone()[0])

    # -- queries -------------------------------------------------------------------

    def page(
        self,
        areas: list[str],
        folders: list[Path] | None,
        after: tuple[int, str] | None,
        query: str | None,
        limit: int,
        skip_stubs: bool = False,
    ) -> list[Row]:
        """Up to ``limit`` sessions in pi's order (newest activity first, then path), after the cursor;
        ``skip_stubs``: without the sessions oh-my-pi's picker passes over (listing.py's is_stub)."""
        where = ["is_session=1", f"area IN ({','.join('?' * len(areas))})"]
        if skip_stubs:
            where.append(f"NOT {STUB_SQL}")
        args: list[object] = list(areas)
        if folders is not None:
            where.append(f"dir IN ({','.join('?' * len(folders))})")
            args += [str(f) for f in folders]
        if after is not None:
            where.append("(modified_ms < ? OR (modified_ms = ? AND path > ?))")
            args += [-after[0], -after[0], after[1]]
        order = f"SELECT {_COLUMNS} FROM files WHERE {' AND '.join(where)} ORDER BY modified_ms DESC, path LIMIT ?"

        def action(conn: sqlite3.Connection) -> list[Row]:
            if query:
                self.search_builder.drain_some(conn)
            conn.execute("BEGIN")  # one snapshot: a text moved from pending to texts meanwhile is seen once
            try:
                if not query:
                    return [Row(*values) for values in conn.execute(order, [*args, limit])]
                found = query_rows(conn, _COLUMNS, where, args, query, limit)
            finally:
                conn.execute("COMMIT")
            rows = []
            for values, snippet in found:
                row = Row(*values)
                row.snippet = snippet
                rows.append(row)
            return rows

        return self._run(action)

    def build_search(self) -> None:
        """Build the full-text index of everything read so far (reindex does, so queries start warm)."""
        self.search_builder.stop()
        self._run(drain)

    def lineage(self, session_id: str) -> list[str]:
        """Ids of the sessions forked from ``session_id`` (its direct children)."""
        return self._run(
            lambda conn: [
                r[0]
                for r in conn.execute(
                    "SELECT session_id FROM files WHERE parent_session=? AND is_session=1 ORDER BY path", (session_id,)
                )
            ]
        )


def _busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc)
    return "locked" in text or "busy" in text
