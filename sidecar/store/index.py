"""The listing index: what ``session/list`` returns, kept in sqlite beside the session files.

The files stay the truth. Each row remembers the size and mtime of the file it
was read from; a list first compares those with the folders' files (one stat
each, no reads) and reads again only what changed behind the sidecar's back,
what is new, and drops what is gone. The sidecar's own appends update a row in
the same step as the write, from the appended lines alone, so the next list
finds it fresh. A missing or damaged index is rebuilt from the files;
``session-sidecar reindex`` rebuilds it on demand.

Message text goes into an FTS5 table (trigram tokenizer: case-insensitive
substring match, as pi's query is), one row per message, rowid
``file_id << 32 | n``, so one file's rows are a rowid range.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from stat import S_ISREG
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from .listing import Accumulator, decode_line, iso_from_ms, modified_ms, summarize_full

log = logging.getLogger(__name__)

INDEX_DIR = ".index"
INDEX_NAME = "sessions.sqlite3"
SCHEMA_VERSION = 2
_SHIFT = 32
_SCAN_THREADS = 8  # stat calls release the GIL; a slow file system answers several at once
_CHECK_EVERY = 64  # files between progress checks when they need no reading
SNIPPET_OPEN, SNIPPET_CLOSE, SNIPPET_ELLIPSIS = "**", "**", "…"
SNIPPET_TOKENS = 48  # trigram tokens: about characters

_SCHEMA = """
CREATE TABLE files(
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  dir TEXT NOT NULL,
  area TEXT NOT NULL,
  size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  is_session INTEGER NOT NULL,
  session_id TEXT, cwd TEXT, header_ts TEXT, title TEXT, parent_session TEXT,
  name TEXT, message_count INTEGER, first_message TEXT, last_activity INTEGER,
  modified_ms INTEGER, tokens_total INTEGER, tokens_last INTEGER, text_seq INTEGER
);
CREATE INDEX files_order ON files(area, modified_ms DESC, path);
CREATE INDEX files_dir ON files(dir);
CREATE INDEX files_parent ON files(parent_session);
CREATE VIRTUAL TABLE texts USING fts5(text, tokenize='trigram');
CREATE TABLE pending(id INTEGER PRIMARY KEY, text TEXT NOT NULL);
"""

_COLUMNS = (
    "id, path, area, session_id, cwd, header_ts, title, parent_session, name, message_count, "
    "first_message, modified_ms, tokens_total, tokens_last, mtime_ns"
)


@dataclass(slots=True)
class Row:
    """One listed session as the index holds it."""

    id: int
    path: str
    area: str
    session_id: str
    cwd: str
    header_ts: str | None
    title: str | None
    parent_session: str | None
    name: str | None
    message_count: int
    first_message: str
    modified_ms: int
    tokens_total: int
    tokens_last: int
    mtime_ns: int
    snippet: str | None = None

    @property
    def created(self) -> str:
        return self.header_ts if self.header_ts is not None else iso_from_ms(self.mtime_ns // 1_000_000)


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
        # How long a write waits for another sidecar's transaction before the list reads the files instead.
        self.busy_ms = 10_000

    # -- connection ------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = self._connect()
        return self._conn

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=self.busy_ms / 1000, isolation_level=None, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout={int(self.busy_ms)}")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.create_function("contains", 2, _contains, deterministic=True)
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version != SCHEMA_VERSION:
                conn.execute("BEGIN IMMEDIATE")
                if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                    for (kind, name) in conn.execute(
                        "SELECT type, name FROM sqlite_master WHERE type IN ('table') AND name NOT LIKE 'sqlite_%'"
                        " AND name NOT LIKE 'texts_%'"
                    ).fetchall():
                        conn.execute(f"DROP TABLE IF EXISTS \"{name}\"")
                    for statement in _SCHEMA.split(";"):
                        if statement.strip():
                            conn.execute(statement)
                    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                conn.execute("COMMIT")
            known: dict[str, dict[str, tuple[int, int]]] = {}
            for path, folder, size, mtime in conn.execute("SELECT path, dir, size, mtime_ns FROM files"):
                known.setdefault(folder, {})[path] = (size, mtime)
        except BaseException:
            conn.close()
            raise
        self._known = known
        return conn

    def _discard(self) -> None:
        """Throw the index away (damaged): the next use rebuilds it from the files."""
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
            self._conn = None
        self._known = {}
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(str(self.path) + suffix)
            except FileNotFoundError:
                pass

    def _run(self, action: Callable[[sqlite3.Connection], Any]) -> Any:
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
                    log.warning("listing index %s is unusable (%s); rebuilding it from the session files", self.path, exc)
                    self._discard()
                except sqlite3.DatabaseError as exc:
                    if attempt:
                        raise
                    log.warning("listing index %s is damaged (%s); rebuilding it from the session files", self.path, exc)
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

    # -- keeping rows fresh ----------------------------------------------------------

    def sync(self, folders: Iterable[tuple[Path, str]], prune: Iterable[tuple[Path, str]] = (),
             check: Callable[[int, int], None] | None = None) -> None:
        """Bring the rows of ``folders`` (each with its area) in line with their files.

        ``prune`` (base, area) pairs: also drop rows of folders below ``base``
        that are no longer there.
        """
        bases = {str(base) for base, _ in prune}
        folders = list(folders)

        def action(conn: sqlite3.Connection) -> None:
            seen_all: list[tuple[str, str, str, int, int, bool]] = []
            gone: list[str] = []
            scanned: set[str] = set()
            listings = self._scan([folder for folder, _ in folders])
            for (folder, area), files in zip(folders, listings):
                key = str(folder)
                scanned.add(key)
                known = self._known.get(key, {})
                for path, size, mtime in files:
                    seen_all.append((path, key, area, size, mtime, known.get(path) != (size, mtime)))
                if len(known) > len(files) or any(path not in known for path, _, _ in files):
                    present = {path for path, _, _ in files}
                    gone.extend(p for p in known if p not in present)
            for folder_key, rows in self._known.items():
                if folder_key not in scanned and os.path.dirname(folder_key) in bases and not os.path.isdir(folder_key):
                    gone.extend(rows)
            stale = any(item[5] for item in seen_all)
            if not stale and not gone:
                if check is not None:  # progress over what was checked, now and then
                    for index in range(0, len(seen_all), _CHECK_EVERY):
                        check(index, len(seen_all))
                return
            conn.execute("BEGIN IMMEDIATE")
            try:
                for path in gone:
                    self._delete(conn, path)
                for index, (path, folder, area, size, mtime, changed) in enumerate(seen_all):
                    if check is not None and (changed or index % _CHECK_EVERY == 0):
                        check(index, len(seen_all))
                    if changed:
                        self._read_into(conn, path, folder, area, size, mtime)
                conn.execute("COMMIT")
            except BaseException:
                self._rollback()
                self._reload_known(conn)
                raise

        self._run(action)

    def _scan(self, folders: list[Path]) -> list[list[tuple[str, int, int]]]:
        """(path, size, mtime_ns) of each folder's session files: one lstat each, folders in parallel threads."""
        if len(folders) < 8:
            return [_scan_folder(folder) for folder in folders]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=_SCAN_THREADS, thread_name_prefix="index-scan")
        return list(self._pool.map(_scan_folder, folders))

    def _reload_known(self, conn: sqlite3.Connection) -> None:
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
        try:
            with open(path, "rb") as handle:
                data = handle.read()
            st = os.stat(path)
            size, mtime = st.st_size, st.st_mtime_ns
        except OSError:
            self._delete(conn, path)
            return
        full = summarize_full(Path(path), data, mtime // 1_000_000)
        existing = conn.execute("SELECT id FROM files WHERE path=?", (path,)).fetchone()
        if existing is not None:
            file_id = existing[0]
            _delete_texts(conn, file_id)
        if full is None:
            values: tuple[Any, ...] = (path, folder, area, size, mtime, 0) + (None,) * 14
        else:
            summary, acc, texts = full
            header_ts = summary.created if len(data) and _header_has_timestamp(data) else None
            values = (
                path, folder, area, size, mtime, 1,
                summary.session_id, summary.cwd, header_ts, summary.title, summary.parent_session,
                acc.name, acc.count, acc.first, acc.last_activity, summary.modified_ms,
                acc.tokens_total, acc.tokens_last, len(texts),
            )
            values = values[:19]
        if existing is None:
            file_id = conn.execute(
                "INSERT INTO files(path, dir, area, size, mtime_ns, is_session, session_id, cwd, header_ts, title,"
                " parent_session, name, message_count, first_message, last_activity, modified_ms, tokens_total,"
                " tokens_last, text_seq) VALUES (" + ",".join("?" * 19) + ")",
                values[:19],
            ).lastrowid
        else:
            conn.execute(
                "UPDATE files SET path=?, dir=?, area=?, size=?, mtime_ns=?, is_session=?, session_id=?, cwd=?,"
                " header_ts=?, title=?, parent_session=?, name=?, message_count=?, first_message=?, last_activity=?,"
                " modified_ms=?, tokens_total=?, tokens_last=?, text_seq=? WHERE id=?",
                values[:19] + (file_id,),
            )
        if full is not None:
            conn.executemany(
                "INSERT INTO pending(id, text) VALUES (?, ?)",
                (((file_id << _SHIFT) | n, text) for n, text in enumerate(full[2])),
            )
        self._known.setdefault(folder, {})[path] = (size, mtime)

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

    def appended(self, path: Path, area: str, lines: list[bytes]) -> None:
        """The sidecar appended ``lines`` to ``path``: fold them into its row (the file is not read)."""
        def action(conn: sqlite3.Connection) -> None:
            key = str(path)
            conn.execute("BEGIN IMMEDIATE")
            try:
                st = os.stat(path)
                row = conn.execute(
                    "SELECT id, size, is_session, message_count, first_message, last_activity, name, tokens_total,"
                    " tokens_last, text_seq, header_ts FROM files WHERE path=?",
                    (key,),
                ).fetchone()
                grown = sum(len(line) + 1 for line in lines)
                if row is None or not row[2] or row[1] + grown != st.st_size:
                    self._read_into(conn, key, str(path.parent), area, 0, 0)
                else:
                    file_id, _, _, count, first, last, name, total, last_tokens, seq, header_ts = row
                    acc = Accumulator(count, first or "", last or 0, name, total or 0, last_tokens or 0)
                    texts = []
                    for raw in lines:
                        line = decode_line(raw)
                        if line is None:
                            continue
                        text = acc.feed(line)
                        if text:
                            texts.append(text)
                    conn.executemany(
                        "INSERT INTO pending(id, text) VALUES (?, ?)",
                        (((file_id << _SHIFT) | (seq + n), text) for n, text in enumerate(texts)),
                    )
                    conn.execute(
                        "UPDATE files SET size=?, mtime_ns=?, message_count=?, first_message=?, last_activity=?,"
                        " name=?, tokens_total=?, tokens_last=?, text_seq=?, modified_ms=? WHERE id=?",
                        (
                            st.st_size, st.st_mtime_ns, acc.count, acc.first, acc.last_activity, acc.name,
                            acc.tokens_total, acc.tokens_last, seq + len(texts),
                            modified_ms(acc.last_activity, header_ts, st.st_mtime_ns // 1_000_000), file_id,
                        ),
                    )
                    self._known.setdefault(str(path.parent), {})[key] = (st.st_size, st.st_mtime_ns)
                conn.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise

        self._safely(action)

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
    ) -> list[Row]:
        """Up to ``limit`` sessions in pi's order (newest activity first, then path), after the cursor."""
        where = ["is_session=1", f"area IN ({','.join('?' * len(areas))})"]
        args: list[Any] = list(areas)
        if folders is not None:
            where.append(f"dir IN ({','.join('?' * len(folders))})")
            args += [str(f) for f in folders]
        if after is not None:
            where.append("(modified_ms < ? OR (modified_ms = ? AND path > ?))")
            args += [-after[0], -after[0], after[1]]
        match = None
        if query:
            needle = query.casefold()
            # pi's rule: a case-insensitive substring of the name, title, id or any message text.
            meta = "contains(name, ?) OR contains(title, ?) OR contains(session_id, ?)"
            if len(needle) >= 3:
                match = '"' + query.replace('"', '""') + '"'
                where.append(f"(id IN (SELECT rowid >> {_SHIFT} FROM texts WHERE texts MATCH ?) OR {meta})")
                args += [match, needle, needle, needle]
            else:  # below the trigram index's reach: every text is read
                where.append(f"(id IN (SELECT rowid >> {_SHIFT} FROM texts WHERE contains(text, ?)) OR {meta})")
                args += [needle, needle, needle, needle]
        sql = f"SELECT {_COLUMNS} FROM files WHERE {' AND '.join(where)} ORDER BY modified_ms DESC, path LIMIT ?"
        args.append(limit)

        def action(conn: sqlite3.Connection) -> list[Row]:
            if query:
                self._drain(conn)
            rows = [Row(*values) for values in conn.execute(sql, args)]
            if query:
                for row in rows:
                    row.snippet = self._snippet(conn, row.id, query, match)
            return rows

        return self._run(action)

    def _snippet(self, conn: sqlite3.Connection, file_id: int, query: str, match: str | None) -> str | None:
        low, high = file_id << _SHIFT, (file_id + 1) << _SHIFT
        if match is not None:
            found = conn.execute(
                f"SELECT snippet(texts, 0, ?, ?, ?, {SNIPPET_TOKENS}) FROM texts WHERE texts MATCH ?"
                " AND rowid >= ? AND rowid < ? ORDER BY rowid LIMIT 1",
                (SNIPPET_OPEN, SNIPPET_CLOSE, SNIPPET_ELLIPSIS, match, low, high),
            ).fetchone()
            return found[0] if found else None
        needle = query.casefold()
        for (text,) in conn.execute("SELECT text FROM texts WHERE rowid >= ? AND rowid < ? ORDER BY rowid", (low, high)):
            at = text.casefold().find(needle)
            if at >= 0:
                start, end = max(0, at - SNIPPET_TOKENS // 2), min(len(text), at + len(needle) + SNIPPET_TOKENS // 2)
                return (
                    (SNIPPET_ELLIPSIS if start else "") + text[start:at] + SNIPPET_OPEN + text[at:at + len(needle)]
                    + SNIPPET_CLOSE + text[at + len(needle):end] + (SNIPPET_ELLIPSIS if end < len(text) else "")
                )
        return None

    def _drain(self, conn: sqlite3.Connection) -> None:
        """Move pending texts into the full-text index.

        Reading a file or an append only stores its texts (a plain insert);
        the trigram index, which costs several times more, is built when a
        query first needs it, so a cold listing and every append stay cheap.
        """
        if conn.execute("SELECT 1 FROM pending LIMIT 1").fetchone() is None:
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("INSERT INTO texts(rowid, text) SELECT id, text FROM pending")
            conn.execute("DELETE FROM pending")
            conn.execute("COMMIT")
        except BaseException:
            self._rollback()
            raise

    def build_search(self) -> None:
        """Build the full-text index of everything read so far (reindex does, so queries start warm)."""
        self._run(self._drain)

    def lineage(self, session_id: str) -> list[str]:
        """Ids of the sessions forked from ``session_id`` (its direct children)."""
        return self._run(
            lambda conn: [r[0] for r in conn.execute(
                "SELECT session_id FROM files WHERE parent_session=? AND is_session=1 ORDER BY path", (session_id,)
            )]
        )


def _delete_texts(conn: sqlite3.Connection, file_id: int) -> None:
    bounds = (file_id << _SHIFT, (file_id + 1) << _SHIFT)
    conn.execute("DELETE FROM texts WHERE rowid >= ? AND rowid < ?", bounds)
    conn.execute("DELETE FROM pending WHERE id >= ? AND id < ?", bounds)


def _scan_folder(folder: Path) -> list[tuple[str, int, int]]:
    base = str(folder)
    try:
        names = os.listdir(base)
    except (FileNotFoundError, NotADirectoryError):
        return []
    out = []
    for name in names:
        if not name.endswith(".jsonl"):
            continue
        path = base + os.sep + name
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if S_ISREG(st.st_mode):
            out.append((path, st.st_size, st.st_mtime_ns))
    return out


def _contains(text: Any, needle: str) -> bool:
    return isinstance(text, str) and needle in text.casefold()


def _busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc)
    return "locked" in text or "busy" in text


def _header_has_timestamp(data: bytes) -> bool:
    for raw in data.split(b"\n", 8):
        line = decode_line(raw)
        if line is not None:
            return isinstance(line.timestamp, str)
    return False
