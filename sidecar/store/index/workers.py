"""What the listing index keeps of one file (its row's fields and its text rows), read in this process or,
for a cold rebuild of many files, in worker processes.

Reading and summarizing is most of a cold rebuild's CPU (100,000 files: about
two thirds), and it holds the GIL, so threads cannot share it out. Past
``PARALLEL_FROM`` files it goes to worker processes: each is this module run
by the same interpreter (``python -m sidecar.store.index.workers``), reading
batches of paths on its stdin and writing what it read, in msgpack, on its
stdout. Batch ``i`` goes to worker ``i % n`` and results are taken in batch
order, so the index is written in the same order with or without workers; a
worker blocked on its full stdout pipe is the bound on what waits for the
parent, which alone writes SQLite. (Not multiprocessing: spawn imports the
caller's ``__main__`` again in every worker, and a fork would copy the
sidecar's threads' locks in whatever state they are in.) A worker that dies
leaves its batches to this process.

``SESSION_SIDECAR_INDEX_WORKERS`` sets how many (0: none). By default one
fewer than the CPUs this process may run on (the parent keeps one busy
writing), at most 4, and none on 2 CPUs or fewer or in a frozen executable:
on the shared 2-core machine of bench/scale.py, 100,000 files took 9.3-12.4 s
wall and 8.7-9.9 s CPU in one process, 8.8-15.2 s wall and 10.1-11.9 s CPU
(parent and workers) with 1 or 2 workers, at load 3-6: no gain in wall time
for a sixth more CPU. Where cores are free, the parent's part (about 4.5 s:
SQLite, the indexes, the scan) is what is left.
"""

from __future__ import annotations

import logging
import mmap
import os
import struct
import subprocess
import sys
import threading
from collections.abc import Generator
from pathlib import Path
from typing import IO, cast

import msgspec

from .listing import summarize_full
from .scan import Loader
from .scan import load as load_file
from .search import folded_meta, text_chunks

log = logging.getLogger(__name__)

PARALLEL_FROM = 4000  # files to read past which workers pay for their start (a few hundred ms)
_BATCH = 250  # files per task
_MOST = 4  # workers by default at most (the parent's SQLite writes bound what more would give)

# A session's row from session_id to last_role (schema.py's files columns): session_id, cwd, header_ts,
# title, parent_session, name, message_count, first_message, last_activity, modified_ms, tokens_total,
# tokens_last, text_seq, meta, titled, assistant_turns, last_role.
Fields = tuple[
    str,
    str,
    str | None,
    str | None,
    str | None,
    str | None,
    int,
    str,
    int,
    int,
    int,
    int,
    int,
    str,
    int,
    int,
    str | None,
]
# (size, mtime_ns, the row's fields or None when not a session, text rows), or None when the file is gone
# or unreadable.
Read = tuple[int, int, Fields | None, list[tuple[str, str | None]]] | None
# A Read as it comes back from a worker (msgpack has no tuples).
_SentRead = tuple[int, int, list[object] | None, list[list[str | None]]] | None


def read_file(path: str, load: Loader = load_file) -> Read:
    """What the index keeps of the file at ``path``."""
    content = load(path)
    if content is None:
        return None
    data, size, mtime = content
    try:
        full = summarize_full(path, data, mtime // 1_000_000, join_texts=False)
    finally:
        if isinstance(data, mmap.mmap):
            data.close()
    if full is None:
        return size, mtime, None, []
    summary, acc, texts = full
    chunks = text_chunks(texts) if texts else []
    fields: Fields = (
        summary.session_id,
        summary.cwd,
        summary.created if summary.header_timestamp else None,
        summary.title,
        summary.parent_session,
        acc.name,
        acc.count,
        acc.first,
        acc.last_activity,
        summary.modified_ms,
        acc.tokens_total,
        acc.tokens_last,
        len(chunks),
        folded_meta(acc.name, summary.title, summary.session_id),
        int(summary.titled),
        acc.assistants,
        acc.last_role,
    )
    return size, mtime, fields, chunks


def _read_batch(paths: list[str]) -> list[Read]:
    return [read_file(path) for path in paths]


def workers() -> int:
    """How many worker processes a large read uses (0: it reads in this process)."""
    configured = os.environ.get("SESSION_SIDECAR_INDEX_WORKERS")
    if configured is not None:
        try:
            return max(0, int(configured))
        except ValueError:
            pass
    if getattr(sys, "frozen", False):  # (a frozen executable cannot spawn the interpreter it was built from)
        return 0
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return min(cpus - 1, _MOST) if cpus > 2 else 0


def read_files(paths: list[str], load: Loader = load_file) -> Generator[Read, None, None]:
    """``read_file`` of each path, in order: by worker processes when there are many and ``load`` is the
    file system's own (a replaced one, as tests do, is only seen by this process). A generator either way:
    closing it stops the workers."""
    count = workers() if len(paths) >= PARALLEL_FROM and load is load_file else 0
    if count:
        return _in_workers(paths, count)
    return (read_file(path, load) for path in paths)


_LENGTH = struct.Struct("<I")
_encode = msgspec.msgpack.Encoder().encode
_decode_paths = msgspec.msgpack.Decoder(list[str]).decode
_decode_reads = msgspec.msgpack.Decoder().decode


def _send(stream: IO[bytes], payload: bytes) -> None:
    stream.write(_LENGTH.pack(len(payload)))
    stream.write(payload)
    stream.flush()


def _receive(stream: IO[bytes]) -> bytes | None:
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        return None
    size = _LENGTH.unpack(head)[0]
    payload = stream.read(size)
    return payload if len(payload) == size else None


def _as_read(item: _SentRead) -> Read:
    if item is None:
        return None
    size, mtime, fields, chunks = item
    # (the values read_file gave the worker, lists again)
    return (
        size,
        mtime,
        cast(Fields, tuple(fields)) if fields is not None else None,
        [cast("tuple[str, str | None]", tuple(chunk)) for chunk in chunks],
    )


class _Worker:
    """One worker process and the thread that hands it its batches."""

    def __init__(self, batches: list[list[str]]) -> None:
        package_parent = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_parent, env.get("PYTHONPATH")]))
        self.process = subprocess.Popen(
            [sys.executable, "-m", __name__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            close_fds=True,
        )
        self._feeder = threading.Thread(target=self._feed, args=(batches,), name="index-worker-feed", daemon=True)
        self._feeder.start()

    def _feed(self, batches: list[list[str]]) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            for batch in batches:
                _send(stdin, _encode(batch))
            stdin.close()
        except (OSError, ValueError):  # (the worker is gone or being stopped: its batches are read here)
            pass

    def result(self) -> list[Read] | None:
        """The next batch's reads, or None when the worker is gone."""
        stdout = self.process.stdout
        assert stdout is not None
        try:
            payload = _receive(stdout)
        except (OSError, ValueError):
            return None
        if payload is None:
            return None
        return [_as_read(item) for item in _decode_reads(payload)]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        self.process.wait()
        self._feeder.join()


def _in_workers(paths: list[str], count: int) -> Generator[Read, None, None]:
    batches = [paths[start : start + _BATCH] for start in range(0, len(paths), _BATCH)]
    pool: list[_Worker | None] = []
    try:
        for n in range(count):
            try:
                pool.append(_Worker(batches[n::count]))
            except OSError:  # (no process could be started: this one reads)
                pool.append(None)
        for number, batch in enumerate(batches):
            worker = pool[number % count]
            reads = worker.result() if worker is not None else None
            if reads is None or len(reads) != len(batch):
                if worker is not None:
                    log.warning(
                        "listing index worker %d stopped (exit status %s); this process reads its files",
                        worker.process.pid,
                        worker.process.poll(),
                    )
                    worker.stop()
                    pool[number % count] = None
                reads = _read_batch(batch)
            yield from reads
    finally:
        for worker in pool:
            if worker is not None:
                worker.stop()


def _serve() -> None:
    """A worker: batches of paths in, what the index keeps of each file out (see the module's docstring)."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while (payload := _receive(stdin)) is not None:
        _send(stdout, _encode(_read_batch(_decode_paths(payload))))


if __name__ == "__main__":
    _serve()
