"""The durability point of one spec session: records appended, metadata.json replaced.

session.jsonl is opened ``O_APPEND`` and never rewritten: a batch of records
goes out in one ``write`` (a failed one is cut back to the old length, so
memory and disk agree), then metadata.json is written to a temp file and
renamed over the old one. The flock on session.jsonl is the one-writer rule,
as for pi files (store/files/lock.py). A partial last line found on open is moved
to ``session.jsonl.torn`` before the first append, so the next record starts
on a line of its own.
"""

from __future__ import annotations

import os
from pathlib import Path

from ...errors import SessionExists, StorageError
from ..base import FsyncPolicy
from ..files.lock import lock_path, unlock
from ..files.writer import DIR_MODE, FILE_MODE, _write_all, atomic_write, fsync_dir
from .layout import METADATA_FILE, SESSION_FILE
from .records import Record, SessionMetadata, encode_metadata, encode_record


class SpecWriter:
    def __init__(self, folder: Path, policy: FsyncPolicy, *, exists: bool) -> None:
        self.folder = folder
        self.path = folder / SESSION_FILE
        self.policy = policy
        self.exists = exists
        self.error: StorageError | None = None
        self.lock_fd: int | None = None
        self.torn_tail_at: int | None = None
        self.needs_newline = False
        self.last_start = self.last_end = 0
        self._fd: int | None = None

    # -- the interface Session relies on ------------------------------------------

    def check(self) -> None:
        if self.error is not None:
            raise self.error

    def stat_fd(self) -> int | None:
        return self._fd

    @property
    def sync_pending(self) -> bool:
        return False  # every append is as durable as its policy asks before it returns

    def sync_deferred(self) -> None:
        """Every append is forced to disk before it returns (as the policy asks): nothing is deferred."""

    def flush(self) -> None:
        if self._fd is not None:
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        unlock(self.lock_fd)
        self.lock_fd = None

    # -- spec writes -------------------------------------------------------------

    def create(self, metadata: SessionMetadata) -> None:
        """The session's folder with an empty session.jsonl and its metadata.json, all or nothing (S7.1)."""
        if self.folder.exists():
            raise SessionExists(f"{self.folder} already exists", path=str(self.folder))
        staging = self.folder.with_name(f".{self.folder.name}.new-{os.getpid()}")
        try:
            os.makedirs(self.folder.parent, mode=DIR_MODE, exist_ok=True)
            os.mkdir(staging, DIR_MODE)
            fd = os.open(staging / SESSION_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
            os.fsync(fd)
            os.close(fd)
            atomic_write(staging / METADATA_FILE, encode_metadata(metadata))
            os.rename(staging, self.folder)
            fsync_dir(self.folder.parent)
        except OSError as exc:
            for leftover in (staging / SESSION_FILE, staging / METADATA_FILE):
                leftover.unlink(missing_ok=True)
            if staging.exists():
                staging.rmdir()
            raise StorageError(f"could not create {self.folder}: {exc.strerror or exc}", path=str(self.folder)) from exc
        self.lock_fd = lock_path(self.path)
        self.exists = True

    def append(self, records: list[Record], metadata: SessionMetadata, durable: bool) -> None:
        """``records`` in one write, then ``metadata``; on failure the file is as it was."""
        fd = self._open()
        if self.torn_tail_at is not None:
            self._set_aside_torn(fd, self.torn_tail_at)
        if records:
            data = b"".join(encode_record(r) + b"\n" for r in records)
            start = os.lseek(fd, 0, os.SEEK_END)
            try:
                _write_all(fd, data)
                if durable or self.policy is FsyncPolicy.ALWAYS:
                    os.fsync(fd)
            except OSError as exc:
                try:
                    os.ftruncate(fd, start)
                except OSError:
                    self.error = StorageError(
                        f"could not append to {self.path} nor undo the partial write: {exc.strerror or exc}; "
                        "open the session again",
                        path=str(self.path),
                        latched=True,
                    )
                    raise self.error from exc
                raise StorageError(
                    f"could not append to {self.path}: {exc.strerror or exc}; nothing was written",
                    path=str(self.path),
                    latched=False,
                ) from exc
            self.last_start, self.last_end = start, start + len(data)
        self.write_metadata(metadata)

    def write_metadata(self, metadata: SessionMetadata) -> None:
        """metadata.json replaced by a temp file renamed over it (readers see the old or the new one, whole).

        Not forced to disk: it is derived from session.jsonl, and an open checks it against the records
        (session.py ``_metadata_of``), so after a crash an old or empty one is put right from them.
        """
        path = self.folder / METADATA_FILE
        tmp = path.with_name(f".{METADATA_FILE}.tmp-{os.getpid()}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
            try:
                _write_all(fd, encode_metadata(metadata))
            finally:
                os.close(fd)
            os.replace(tmp, path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            # The records are on disk; metadata.json is rebuilt from them on the next open.
            raise StorageError(
                f"could not write {self.folder / METADATA_FILE}: {exc.strerror or exc}",
                path=str(self.folder / METADATA_FILE),
            ) from exc

    def _open(self) -> int:
        if self._fd is None:
            try:
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0))
            except OSError as exc:
                raise StorageError(f"could not open {self.path}: {exc.strerror or exc}", path=str(self.path)) from exc
        return self._fd

    def _set_aside_torn(self, fd: int, at: int) -> None:
        """Keep a crash's partial last line in session.jsonl.torn, then cut it off (S7.9)."""
        with open(self.path, "rb") as file:
            file.seek(at)
            torn = file.read()
        with open(self.path.with_name(SESSION_FILE + ".torn"), "ab") as kept:
            kept.write(torn + b"\n")
        os.ftruncate(fd, at)
        os.fsync(fd)
        self.torn_tail_at = None
