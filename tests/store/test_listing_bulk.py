"""A cold rebuild's fast paths read what the plain paths read: many rows into an empty index (its other
indexes made after the rows), and lines decoded into typed Structs before the untyped fallback."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from session_builders import (
    assistant,
    entry,
    header,
    labelled_session,
    message,
    service,
    stamp,
    tool_result,
    user,
    write_session,
)

from sidecar import wire
from sidecar.format.titleslot import slot_line
from sidecar.store.files.layout import encode_cwd
from sidecar.store.index import listing
from sidecar.store.index import read as indexread
from sidecar.store.index import sqlite as index_module
from sidecar.store.index.schema import FILES_INDEXES
from sidecar.store.index.search import split_row
from sidecar.store.index.sqlite import INDEX_DIR, INDEX_NAME


def odd_sessions(root: Path) -> None:
    """Sessions of every shape the listing reads, several per folder."""
    for n in range(4):
        cwd = f"/work/odd-{n % 2}"
        folder = root / encode_cwd(cwd)
        entries = [
            message("u1", None, user(f"first question {n}", timestamp=1_700_000_000_000 + n), 1),
            message("a1", "u1", assistant(f"answer {n}"), 2),
            entry("label", "l1", "a1", 3, targetId="u1", label="start"),
            entry("session_info", "i1", "l1", 4, name=f"  named {n}  "),
            entry("custom", "c1", "i1", 5, customType="ext", data={"k": n}),
            entry("compaction", "k1", "c1", 6, summary="earlier", firstKeptEntryId="u1", tokensBefore=100),
            # Content and usage of other shapes than the typed decoder takes (decoded again untyped):
            message("u2", "k1", {"role": "user", "content": {"not": "a list"}, "timestamp": 7}, 7),
            message("u3", "u2", {"role": "user", "content": ["a string block", {"type": "text", "text": "mixed"}]}, 8),
            message("a2", "u3", assistant("no total", usage={"input": 4, "output": 6}), 9),
            message("a3", "a2", assistant("usage text", usage="twelve"), 10),
            message(
                "a4",
                "a3",
                {"role": "assistant", "content": [], "stopReason": "stop", "usage": {"totalTokens": 0, "input": 1}},
                11,
            ),
            message("t1", "a4", tool_result("call-1", f"tool output {n}"), 12),
            message(
                "u4",
                "t1",
                {
                    "role": "user",
                    "content": [{"type": "image", "data": "x"}, {"type": "text", "text": 5}],
                    "timestamp": "bad",
                },
                13,
            ),
            "{not json at all",
            "",
            '{"type":"message","id":"s1","parentId":"u4","timestamp":"'
            + stamp(14)
            + '","message":{"role":"user","content":"lone \\ud800 surrogate"}}',
            message("z1", "s1", {"role": "user", "content": [{"type": "text", "text": "after all of it"}]}, 15),
        ]
        extra = {"title": f"header title {n}"} if n % 2 else {"parentSession": f"/elsewhere/{n}.jsonl"}
        path = write_session(
            folder / f"2025-01-01T00-00-0{n}-000Z_odd-{n}.jsonl", header(f"odd-{n}", cwd=cwd, **extra), entries
        )
        if n == 3:  # oh-my-pi's title line before the header
            path.write_bytes(slot_line("slot title", stamp(20), "user") + b"\n" + path.read_bytes())
    (root / encode_cwd("/work/odd-0") / "2025-01-01T00-00-09-000Z_notes.jsonl").write_text('{"type":"note"}\n')


def index_contents(root: Path) -> tuple[list[tuple], list[tuple]]:
    """Every row of the index but its id, and every text by (path, n): what a list and a query read."""
    conn = sqlite3.connect(root / INDEX_DIR / INDEX_NAME)
    try:
        columns = [c[1] for c in conn.execute("PRAGMA table_info(files)") if c[1] not in ("id", "path", "dir")]
        rows = conn.execute(f"SELECT path, {', '.join(columns)}, id FROM files ORDER BY path").fetchall()
        paths = {row[-1]: Path(row[0]).relative_to(root).as_posix() for row in rows}
        texts = sorted(
            (paths[rowid >> 32], rowid & 0xFFFFFFFF, n, text)
            for rowid, joined, lengths in [
                *conn.execute("SELECT rowid, text, lengths FROM texts"),
                *conn.execute("SELECT id, text, lengths FROM pending"),
            ]
            for n, text in enumerate(split_row(joined, lengths))
        )
        return [(Path(r[0]).relative_to(root).as_posix(), *r[1:-1]) for r in rows], texts
    finally:
        conn.close()


def listed(svc, **params):
    return [s for s in svc.list(wire.ListParams(all=True, limit=1000, includeArchived=True, **params)).sessions]


def _bulk_from(monkeypatch, rows: int) -> None:
    monkeypatch.setattr(indexread, "BULK_ROWS", rows)
    monkeypatch.setattr(index_module, "BULK_ROWS", rows)


@pytest.fixture
def two_roots(tmp_path):
    """The same sessions in two roots: one is indexed by the bulk path, the other file by file."""
    first = tmp_path / "bulk"
    first.mkdir()
    odd_sessions(first)
    svc = service(first)
    labelled_session(svc)  # written through the service: labels, a name, a custom entry and a compaction
    svc.close_all()
    svc.store.catalog.index.close()
    shutil.rmtree(first / INDEX_DIR)
    second = tmp_path / "plain"
    shutil.copytree(first, second)
    return first, second


def test_a_bulk_read_into_an_empty_index_gives_the_rows_and_texts_of_a_plain_read(two_roots, monkeypatch):
    bulk_root, plain_root = two_roots
    _bulk_from(monkeypatch, 10**9)
    plain = service(plain_root)
    plain_listed = listed(plain)
    _bulk_from(monkeypatch, 2)
    bulk = service(bulk_root)
    bulk_listed = listed(bulk)
    assert len(bulk_listed) == 5

    def comparable(sessions):
        return [
            (
                Path(s.path).name,
                s.sessionId,
                s.cwd,
                s.created,
                s.modified,
                s.messageCount,
                s.firstMessage,
                s.name,
                s.title,
                s.parentSession,
                s.tokens,
            )
            for s in sessions
        ]

    assert comparable(bulk_listed) == comparable(plain_listed)
    assert index_contents(bulk_root) == index_contents(plain_root)
    # The other indexes are there again after the rows, and queries answer alike.
    conn = sqlite3.connect(bulk_root / INDEX_DIR / INDEX_NAME)
    made = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    conn.close()
    assert set(FILES_INDEXES) <= made
    for query in ("mixed", "first question 2", "slot title", "named 1", "after all"):
        assert [s.sessionId for s in listed(bulk, query=query)] == [s.sessionId for s in listed(plain, query=query)]
        assert listed(bulk, query=query)
    for svc in (bulk, plain):
        svc.store.catalog.index.close()


def test_a_bulk_read_stopped_halfway_leaves_the_index_whole_and_the_next_list_reads_every_file(two_roots, monkeypatch):
    root, _ = two_roots
    _bulk_from(monkeypatch, 2)
    svc = service(root)
    index = svc.store.catalog.index
    folders = [(folder, "") for folder in svc.store.layout.project_dirs()]

    def stop_at_third(done: int, total: int) -> None:
        if done == 3:
            raise KeyboardInterrupt("stopped")

    with pytest.raises(KeyboardInterrupt):
        index.sync(folders, check=stop_at_third)
    conn = sqlite3.connect(root / INDEX_DIR / INDEX_NAME)
    assert conn.execute("SELECT count(*) FROM files").fetchone() == (0,)
    made = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    conn.close()
    assert set(FILES_INDEXES) <= made  # the rollback brought back what the bulk read dropped
    assert len(listed(svc)) == 5
    index.close()


def test_typed_line_decoding_reads_what_untyped_decoding_reads(tmp_path, monkeypatch):
    root = tmp_path
    odd_sessions(root)
    files = sorted(root.glob("*/*.jsonl"))
    typed = [listing.summarize_full(path, path.read_bytes(), 0) for path in files]

    def refuse(raw):
        raise listing.msgspec.ValidationError("untyped only")

    monkeypatch.setattr(listing, "_typed_decode", refuse)
    untyped = [listing.summarize_full(path, path.read_bytes(), 0) for path in files]

    def fields(full):
        if full is None:
            return None
        summary, acc, texts = full
        return (summary, [getattr(acc, name) for name in acc.__slots__], texts)

    assert [fields(f) for f in typed] == [fields(f) for f in untyped]
    assert sum(f is not None for f in typed) == 4 and len(files) == 5  # (and the file that is no session)
    odd = next(f for f in typed if f is not None and f[0].session_id == "odd-0")
    assert odd[1].tokens_total > 0 and "mixed" in odd[2] and odd[1].name == "named 0"


def test_a_file_that_grows_while_it_is_read_is_read_to_its_end_with_the_size_after(tmp_path, monkeypatch):
    from sidecar.store.index import scan as indexscan

    path = tmp_path / "growing.jsonl"
    path.write_bytes(b'{"type":"session","id":"g"}\n')
    real_read = indexscan.os.read
    grown = []

    def read_then_grow(fd: int, size: int) -> bytes:
        data = real_read(fd, size)
        if not grown:  # another program appends between our stat and our read's end
            grown.append(True)
            with open(path, "ab") as out:
                out.write(b'{"type":"message"}\n')
        return data

    monkeypatch.setattr(indexscan, "MAP_THRESHOLD", 1 << 30)  # read, not mapped (SIDECAR_TEST_MAP_ALL maps all)
    monkeypatch.setattr(indexscan.os, "read", read_then_grow)
    data, size, mtime = indexscan.load(str(path))
    assert data == b'{"type":"session","id":"g"}\n{"type":"message"}\n'
    assert size == len(data) and mtime == path.stat().st_mtime_ns
    monkeypatch.setattr(indexscan.os, "read", real_read)
    assert indexscan.load(str(tmp_path / "gone.jsonl")) is None
    assert indexscan.load(str(path))[0] == data


def test_a_read_spread_over_worker_processes_gives_the_rows_and_texts_of_a_read_in_process(two_roots, monkeypatch):
    """Past indexwork.PARALLEL_FROM files a cold rebuild reads in spawned workers: the same index, the same
    answers, and a stop halfway leaves the index whole with the workers gone."""
    from sidecar.store.index import workers as indexwork

    worker_root, plain_root = two_roots
    for n in range(40):  # more files than folders, in several batches
        relative = Path(encode_cwd(f"/work/many-{n % 3}")) / f"2025-01-02T00-00-{n:02d}-000Z_m{n}.jsonl"
        write_session(
            worker_root / relative,
            header(f"m{n}", cwd=f"/work/many-{n % 3}"),
            [
                message("u1", None, user(f"question {n}\nover two lines", timestamp=n + 1)),
                message("a1", "u1", assistant(f"answer {n}"), 1),
            ],
        )
        (plain_root / relative).parent.mkdir(exist_ok=True)
        shutil.copy2(worker_root / relative, plain_root / relative)  # (its mtime too)
    used, here = [], []
    real, real_batch = indexwork._in_workers, indexwork._read_batch
    monkeypatch.setattr(indexwork, "_in_workers", lambda *args: used.append(args[1]) or real(*args))
    monkeypatch.setattr(indexwork, "_read_batch", lambda paths: here.append(len(paths)) or real_batch(paths))
    monkeypatch.setattr(indexwork, "PARALLEL_FROM", 2)
    monkeypatch.setattr(indexwork, "_BATCH", 7)
    _bulk_from(monkeypatch, 2)
    monkeypatch.setenv("SESSION_SIDECAR_INDEX_WORKERS", "0")
    plain = service(plain_root)
    plain_listed = listed(plain)
    assert used == []
    monkeypatch.setenv("SESSION_SIDECAR_INDEX_WORKERS", "2")
    spread = service(worker_root)
    spread_listed = listed(spread)
    assert used == [2] and len(spread_listed) == 45
    assert here == []  # every batch was read by a worker (none fell back to this process)
    assert [repr(s).replace(str(worker_root), "") for s in spread_listed] == [
        repr(s).replace(str(plain_root), "") for s in plain_listed
    ]
    assert index_contents(worker_root) == index_contents(plain_root)
    for query in ("mixed", "question 3", "two lines", "answer 39", "after all"):
        assert [s.sessionId for s in listed(spread, query=query)] == [s.sessionId for s in listed(plain, query=query)]
        assert listed(spread, query=query)
    for svc in (spread, plain):
        svc.store.catalog.index.close()
    # Stopped halfway: nothing written, and the next list reads every file again.
    shutil.rmtree(worker_root / INDEX_DIR)
    svc = service(worker_root)
    folders = [(folder, "") for folder in svc.store.layout.project_dirs()]

    def stop(done: int, total: int) -> None:
        if done == 20:
            raise KeyboardInterrupt("stopped")

    with pytest.raises(KeyboardInterrupt):
        svc.store.catalog.index.sync(folders, check=stop)
    assert len(used) == 2
    assert index_contents(worker_root) == ([], [])
    assert len(listed(svc)) == 45
    svc.store.catalog.index.close()


def test_workers_that_die_leave_their_files_to_this_process(two_roots, monkeypatch):
    from sidecar.store.index import workers as indexwork

    worker_root, plain_root = two_roots
    here = []
    real_batch = indexwork._read_batch
    monkeypatch.setattr(indexwork, "_read_batch", lambda paths: here.append(len(paths)) or real_batch(paths))
    monkeypatch.setattr(indexwork, "PARALLEL_FROM", 2)
    monkeypatch.setattr(indexwork, "_BATCH", 2)
    monkeypatch.setattr(indexwork.sys, "executable", "/bin/false")  # every worker exits at once
    monkeypatch.setenv("SESSION_SIDECAR_INDEX_WORKERS", "2")
    _bulk_from(monkeypatch, 2)
    died = service(worker_root)
    died_listed = listed(died)
    assert sum(here) == len(list(worker_root.glob("*/*.jsonl"))) == 6  # every file, read here
    monkeypatch.setenv("SESSION_SIDECAR_INDEX_WORKERS", "0")
    plain = service(plain_root)
    assert [repr(s).replace(str(worker_root), "") for s in died_listed] == [
        repr(s).replace(str(plain_root), "") for s in listed(plain)
    ]
    assert index_contents(worker_root) == index_contents(plain_root)
    for svc in (died, plain):
        svc.store.catalog.index.close()


def test_how_many_workers_by_default_and_when_told(monkeypatch):
    from sidecar.store.index import workers as indexwork

    monkeypatch.delenv("SESSION_SIDECAR_INDEX_WORKERS", raising=False)
    seen = {}
    for cpus in (1, 2, 3, 8):
        monkeypatch.setattr(indexwork.os, "sched_getaffinity", lambda _pid, n=cpus: set(range(n)))
        seen[cpus] = indexwork.workers()
    assert seen == {1: 0, 2: 0, 3: 2, 8: 4}  # none on 2 CPUs (no gain measured), else all but the parent's
    monkeypatch.setattr(indexwork.sys, "frozen", True, raising=False)
    assert indexwork.workers() == 0
    monkeypatch.setenv("SESSION_SIDECAR_INDEX_WORKERS", "3")
    assert indexwork.workers() == 3
    assert indexwork.read_files([], indexwork.load_file).__class__.__name__ == "generator"
