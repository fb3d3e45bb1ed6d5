"""Prompt history: what a user typed, across sessions, for recall (up-arrow) and search (ctrl-r).

Not part of any session file: a session replays a conversation, the history
recalls prompts. It lives in sqlite beside the listing index
(``<root>/.index/history.sqlite3``): a table of prompts and an FTS5 index on
them (trigram tokenizer: case-insensitive substring match, as a ctrl-r search
expects), kept in step by triggers.

Adding never delays the caller: prompts go to a queue that one writer thread
drains, a run of them per transaction. A read first waits for what was queued
before it, so a search right after an add finds it. A prompt equal to the last
one stored for the same cwd is not stored again (pressing enter twice on the
same prompt is one line of history, as in a shell).
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..format.jsstr import from_stored_text, stored_text
from ..trigrams import trigram_terms

log = logging.getLogger(__name__)

HISTORY_NAME = "history.sqlite3"
SCHEMA_VERSION = 1
MAX_PROMPT_CHARS = 100_000
_MAX_ID = 2**63 - 1
# Ordered by relevance, the newest this many matches are ranked.
RANKED_MATCHES = 2000

_SCHEMA = """
CREATE TABLE prompts(
  id INTEGER PRIMARY KEY,
  prompt TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  cwd TEXT
);
CREATE INDEX prompts_cwd ON prompts(cwd, id);
CREATE VIRTUAL TABLE prompts_fts USING fts5(prompt, content='prompts', content_rowid='id', tokenize='trigram');
CREATE TRIGGER prompts_ai AFTER INSERT ON prompts BEGIN
  INSERT INTO prompts_fts(rowid, prompt) VALUES (new.id, new.prompt);
END;
CREATE TRIGGER prompts_ad AFTER DELETE ON prompts BEGIN
  INSERT INTO prompts_fts(prompts_fts, rowid, prompt) VALUES ('delete', old.id, old.prompt);
END;
"""


@dataclass(slots=True, frozen=True)
class Prompt:
    id: int
    prompt: str
    created_ms: int
    cwd: str | None


class HistoryUnavailable(OSError):
    """The history database cannot be opened or written."""


class PromptHistory:
    def __init__(self, folder: Path) -> None:
        self.path = folder / HISTORY_NAME
        self._queue: queue.Queue[tuple[str, str | None, int] | threading.Event | None] = queue.Queue()
        self._writer: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._read = threading.local()
        self._error: BaseException | None = None

    # -- writing ---------------------------------------------------------------

    def add(self, prompt: str, cwd: str | None) -> None:
        """Queue a prompt; it is stored by the writer thread (never on the caller's time)."""
        self._ensure_writer()
        # (a lone surrogate, which no UTF-8 text column holds, is stored escaped: format/jsstr.py)
        self._queue.put((stored_text(prompt), None if cwd is None else stored_text(cwd), int(time.time() * 1000)))

    def settle(self) -> None:
        """Wait until everything queued so far is stored (or failed)."""
        if self._writer is None:
            return
        done = threading.Event()
        self._queue.put(done)
        done.wait()
        if self._error is not None:
            error, self._error = self._error, None
            raise HistoryUnavailable(f"could not store prompt history in {self.path}: {error}")

    def close(self) -> None:
        if self._writer is not None:
            self._queue.put(None)
            self._writer.join()
            self._writer = None
        connection = getattr(self._read, "connection", None)
        if connection is not None:
            connection.close()
            self._read.connection = None

    def _ensure_writer(self) -> None:
        if self._writer is not None:
            return
        with self._start_lock:
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_loop, name="prompt-history", daemon=True)
                self._writer.start()

    def _write_loop(self) -> None:
        connection: sqlite3.Connection | None = None
        last: dict[str | None, str] = {}
        while True:
            item = self._queue.get()
            batch: list = [item]
            while True:  # a run of adds in one transaction
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            rows = [b for b in batch if isinstance(b, tuple)]
            if rows:
                try:
                    if connection is None:
                        connection = self._connect()
                    self._store(connection, rows, last)
                except (sqlite3.Error, OSError) as exc:
                    log.warning("prompt history: %s", exc)
                    self._error = exc
                    last.clear()  # the rolled-back rows may have updated it
            for b in batch:
                if isinstance(b, threading.Event):
                    b.set()
            if any(b is None for b in batch):
                if connection is not None:
                    connection.close()
                return

    def _store(
        self, connection: sqlite3.Connection, rows: list[tuple[str, str | None, int]], last: dict[str | None, str]
    ) -> None:
        with connection:  # commits, or rolls back on an error
            connection.execute("BEGIN IMMEDIATE")
            for prompt, cwd, created in rows:
                if cwd not in last:
                    found = connection.execute(
                        "SELECT prompt FROM prompts WHERE cwd IS ? ORDER BY id DESC LIMIT 1", (cwd,)
                    ).fetchone()
                    if found is not None:
                        last[cwd] = found[0]
                if last.get(cwd) == prompt:
                    continue  # the same prompt again: one line of history
                connection.execute(
                    "INSERT INTO prompts(prompt, created_ms, cwd) VALUES (?, ?, ?)", (prompt, created, cwd)
                )
                last[cwd] = prompt

    # -- reading ---------------------------------------------------------------

    def search(self, query: str, cwd: str | None, limit: int, relevance: bool = False) -> list[Prompt]:
        """Prompts matching ``query``, newest first or best match first. One word: a case-insensitive
        substring. Several: each word, in any order, at the start of a word of the prompt ("tokenizer
        parser" finds "fix the parser module bug in the tokenizer"), as oh-my-pi's history matches."""
        self.settle()
        connection = self._reader()
        query, cwd = stored_text(query), None if cwd is None else stored_text(cwd)  # (as add stored them)
        where, args = ("AND p.cwd = ?", [cwd]) if cwd is not None else ("", [])
        words = list(dict.fromkeys(query.split()))
        if len(words) > 1 and "\x00" not in query:
            return self._search_words(connection, words, where, args, limit, relevance)
        # The prompts holding each of the query's trigrams (trigrams.py: a phrase's cost grows with the
        # query times the prompt), then the query itself checked in them.
        terms = trigram_terms(query)
        if terms:
            rows = _indexed(connection, terms, "holds", query.casefold(), where, args, limit, relevance)
        elif "\x00" in query:
            # (no terms: FTS5 indexed no prompt past a NUL) LIKE too reads its pattern as a C string,
            # which ends at NUL; instr and lower count bytes.
            sql = (
                f"SELECT {_COLUMNS} FROM prompts p "
                f"WHERE instr(lower(p.prompt), lower(?)) > 0 {where} ORDER BY p.id DESC LIMIT ?"
            )
            rows = connection.execute(sql, [query, *args, limit]).fetchall()
        else:  # shorter than a trigram: every prompt is read
            # LIKE folds ASCII case as lower() does, at two thirds of instr(lower())'s cost.
            sql = (
                f"SELECT {_COLUMNS} FROM prompts p WHERE p.prompt LIKE ? ESCAPE '\\' {where} ORDER BY p.id DESC LIMIT ?"
            )
            rows = connection.execute(sql, [_like(query), *args, limit]).fetchall()
        return [_prompt(row) for row in rows]

    def _search_words(
        self, connection: sqlite3.Connection, words: list[str], where: str, args: list, limit: int, relevance: bool
    ) -> list[Prompt]:
        """Several words: the prompts holding every trigram of every word (the index), then each word
        checked at a word start in them (``starts_words``). Words shorter than a trigram ask the index
        nothing; a query of such words only reads every prompt, newest first, until ``limit``."""
        terms = " AND ".join(term for term in (trigram_terms(word) for word in words) if term)
        needles = _WORDS_SEPARATOR.join(word.casefold() for word in words)
        if terms:
            rows = _indexed(connection, terms, "starts_words", needles, where, args, limit, relevance)
        else:
            sql = f"SELECT {_COLUMNS} FROM prompts p WHERE starts_words(p.prompt, ?) {where} ORDER BY p.id DESC LIMIT ?"
            rows = connection.execute(sql, [needles, *args, limit]).fetchall()
        return [_prompt(row) for row in rows]

    def recent(self, cwd: str | None, limit: int, before: int | None = None) -> list[Prompt]:
        """The newest prompts (of one cwd, or all), older than the id ``before`` when given."""
        self.settle()
        clauses: list[str] = []
        args: list[str | int] = []
        if cwd is not None:
            clauses.append("cwd = ?")
            args.append(stored_text(cwd))
        if before is not None:
            clauses.append("id < ?")
            args.append(max(min(before, _MAX_ID), -_MAX_ID))  # (ids fit SQLite's 64 bits; a JSON number need not)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = (
            self._reader()
            .execute(
                f"SELECT id, prompt, created_ms, cwd FROM prompts {where} ORDER BY id DESC LIMIT ?", [*args, limit]
            )
            .fetchall()
        )
        return [_prompt(row) for row in rows]

    def _reader(self) -> sqlite3.Connection:
        connection = getattr(self._read, "connection", None)
        if connection is None:
            connection = self._connect()
            self._read.connection = connection
        return connection

    def _connect(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
            connection.create_function("holds", 2, _holds, deterministic=True)
            connection.create_function("starts_words", 2, _starts_words, deterministic=True)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                with connection:
                    connection.execute("BEGIN IMMEDIATE")
                    if connection.execute("PRAGMA user_version").fetchone()[0] == 0:
                        connection.executescript(_SCHEMA)
                        connection.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            elif version != SCHEMA_VERSION:
                connection.close()
                raise HistoryUnavailable(
                    f"{self.path} has prompt history schema {version}, this sidecar knows {SCHEMA_VERSION}; "
                    "use the sidecar that wrote it, or move the file away to start a new history"
                )
            self.path.chmod(0o600)
            return connection
        except sqlite3.Error as exc:
            raise HistoryUnavailable(f"could not open prompt history {self.path}: {exc}") from exc


def _prompt(row: tuple) -> Prompt:
    prompt_id, prompt, created_ms, cwd = row
    return Prompt(prompt_id, from_stored_text(prompt), created_ms, None if cwd is None else from_stored_text(cwd))


_COLUMNS = "p.id, p.prompt, p.created_ms, p.cwd"


def _indexed(
    connection: sqlite3.Connection,
    terms: str,
    check: str,
    needle: str,
    where: str,
    args: list,
    limit: int,
    relevance: bool,
) -> list[tuple]:
    """The rows the trigram index names for ``terms`` that the SQL function ``check`` (holds,
    starts_words) then finds ``needle`` in: newest first, or the newest matches ranked by bm25."""
    if relevance:
        # bm25 costs a step per match: rank the newest matches only, which keeps
        # a common word over a large history as fast as a rare one.
        sql = (
            f"SELECT {_COLUMNS} FROM ("
            f"SELECT prompts_fts.rowid AS id, bm25(prompts_fts) AS score FROM prompts_fts "
            f"JOIN prompts q ON q.id = prompts_fts.rowid WHERE prompts_fts MATCH ? AND {check}(q.prompt, ?) "
            f"ORDER BY prompts_fts.rowid DESC LIMIT {RANKED_MATCHES}) AS m "
            f"JOIN prompts p ON p.id = m.id WHERE 1 {where} ORDER BY m.score, p.id DESC LIMIT ?"
        )
    else:
        # Ordered by the full-text table's own rowid, the matches stream newest
        # first and the limit stops the walk (ordering by the joined table's id
        # would sort every match first: 26 ms against 0.15 ms at 100,000 prompts).
        sql = (
            f"SELECT {_COLUMNS} FROM prompts_fts JOIN prompts p ON p.id = prompts_fts.rowid "
            f"WHERE prompts_fts MATCH ? AND {check}(p.prompt, ?) {where} ORDER BY prompts_fts.rowid DESC LIMIT ?"
        )
    return connection.execute(sql, [terms, needle, *args, limit]).fetchall()


def _holds(prompt: object, needle: str) -> bool:
    """Whether ``prompt`` holds ``needle`` (casefolded), as the trigram index's case-insensitive match."""
    return isinstance(prompt, str) and needle in prompt.casefold()


# Joins a query's casefolded words into one SQL argument: whitespace, so never inside a word.
_WORDS_SEPARATOR = "\n"


def _starts_words(prompt: object, needles: str) -> bool:
    """Whether every word of ``needles`` (casefolded, joined by _WORDS_SEPARATOR) stands at the start
    of a word of ``prompt``: after its start or a character that is no letter or digit. A word that
    itself begins with punctuation (``--force``, ``.env``) may stand anywhere."""
    if not isinstance(prompt, str):
        return False
    text = prompt.casefold()
    for needle in needles.split(_WORDS_SEPARATOR):
        at = text.find(needle)
        while at > 0 and needle[0].isalnum() and text[at - 1].isalnum():
            at = text.find(needle, at + 1)
        if at < 0:
            return False
    return True


def _like(query: str) -> str:
    """The query as a LIKE pattern matching it anywhere, its own % _ and \\ taken literally."""
    return "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
