"""The one place that opens session files for writing.

Each batch of lines goes out in a single ``write`` on an ``O_APPEND``
descriptor, so a crash leaves at most one torn line at the end, never lines
glued together. A failed append is undone: the file is cut back to its old
length and memory forgets the batch. When that cut is verified (the file has
its old length again) the error is not latched: disk and memory agree, and the
append may simply be retried once space returns (``data.latched`` false).
Otherwise (the cut failed, an fsync failed so what reached the disk is
unknown, a first write or a repair failed) it is latched: every later call
fails with the same error until the session is reopened, so memory never runs
ahead of disk unnoticed.
"""

from __future__ import annotations

import os
from pathlib import Path

from ...errors import SessionExists, StorageError
from ..base import FsyncPolicy
from .lock import lock_file, lock_path, unlock

FILE_MODE = 0o600
DIR_MODE = 0o700


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def ensure_dir(folder: Path) -> None:
    """Make ``folder`` and any missing parent, each readable by its owner only."""
    if folder.is_dir():
        return
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=DIR_MODE)
        except FileExistsError:
            pass


def atomic_write(path: Path, data: bytes, backup: Path | None = None) -> None:
    """Replace ``path`` with ``data`` atomically; keep the old file at ``backup``.

    temp file, fsync, (hard-link the original to the backup), rename, fsync the folder.
    """
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        _write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    if backup is not None and path.exists():
        backup.unlink(missing_ok=True)
        try:
            os.link(path, backup)
        except OSError:
            backup.write_bytes(path.read_bytes())
    os.replace(tmp, path)
    fsync_dir(path.parent)


def _create_whole(path: Path, data: bytes, durable: bool) -> int:
    """Make ``path`` holding ``data``, whole or not at all; an ``O_APPEND`` descriptor on it.

    The bytes go to a hidden temp file first, which is then hard-linked into
    place (failing with ``FileExistsError`` if ``path`` exists, as ``O_EXCL``
    would). A crash at any moment leaves no empty or half-written session
    file (a killed create used to leave an empty ``.jsonl`` that no longer
    opened), at worst a hidden temp file.
    """
    tmp = path.with_name(f".{path.name}.new-{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, FILE_MODE)
    try:
        # Locked before it is linked in: the flock belongs to the file, so the
        # session is ours from the instant it appears under its name.
        lock_file(tmp, fd)
        _write_all(fd, data)
        if durable:
            os.fsync(fd)
        os.link(tmp, path)
    except BaseException:
        os.close(fd)
        raise
    finally:
        tmp.unlink(missing_ok=True)
    if durable:
        fsync_dir(path.parent)
    return fd


def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data``; an OSError raised after part of it went out carries ``written`` (that many bytes)."""
    written = os.write(fd, data)
    if written == len(data):  # nearly always: a short write comes only with a full disk or a signal
        return
    view = memoryview(data)[written:]
    try:
        while view:
            count = os.write(fd, view)
            written += count
            view = view[count:]
    except OSError as exc:
        exc.written = written  # type: ignore[attr-defined]  # the bytes written so far ride on the error (read by the undo)
        raise


def _start_of_failed(fd: int, written: int) -> int | None:
    """Where a failed append began, ``written`` of its bytes out (None: cannot be told).

    O_APPEND put them at the end, so they are the file's last bytes and the descriptor's
    offset is just past them; with none out, the file ends where the batch would have begun
    (found only on failure: an lseek before every write cost a syscall per append)."""
    try:
        return os.lseek(fd, 0, os.SEEK_CUR) - written if written else os.fstat(fd).st_size
    except OSError:
        return None


class SessionWriter:
    """Appends to one session file; created lazily (deferred persistence)."""

    def __init__(self, path: Path, policy: FsyncPolicy, *, exists: bool) -> None:
        self.path = path
        self.policy = policy
        self.exists = exists
        self._fd: int | None = None
        self._error: StorageError | None = None
        # The descriptor holding this process's flock on the file (see lock.py);
        # for a new file, the write descriptor holds it.
        self.lock_fd: int | None = None
        # Where the bytes waiting for a deferred fsync start (see ``append``).
        self._unsynced_at: int | None = None
        # fsyncs of the session file made by this writer (for statistics).
        self.fsyncs = 0
        # Damage found on load that must be repaired before the first append.
        self.torn_tail_at: int | None = None
        self.needs_newline = False
        # Where our last write started and where the file ended after it (see follow.py).
        self.last_start = self.last_end = 0
        # The fstat taken just after our last append when it showed only our bytes added (else None).
        self.last_stat: os.stat_result | None = None

    @property
    def error(self) -> StorageError | None:
        return self._error

    def check(self) -> None:
        if self._error is not None:
            raise self._error

    def create(self, data: bytes, durable: bool = True) -> None:
        """Write the whole file at once; it must not exist yet."""
        self.check()
        try:
            ensure_dir(self.path.parent)
            fd = _create_whole(self.path, data, durable)
        except FileExistsError:
            raise SessionExists(f"{self.path} already exists; choose another session id", path=str(self.path)) from None
        except OSError as exc:
            if not self.path.exists():  # nothing was made: memory and disk agree
                raise self._unlatched(exc, "create") from exc
            raise self._latch(exc, "create") from exc
        self._fd = fd
        self.exists = True
        self.last_end = len(data)
        self.last_stat = None

    def stat_fd(self) -> int | None:
        """A descriptor we hold on the file (to fstat it), or None (read-only, before the first write)."""
        return self._fd if self._fd is not None else self.lock_fd

    def set_aside(self, at: int) -> None:
        """Move the bytes from ``at`` on (an unfinished line nobody finished) to ``<file>.torn``."""
        self.torn_tail_at = at
        if self._fd is not None:
            self._set_aside_torn_tail(self._fd, at)
            self.torn_tail_at = None

    def reopen(self) -> None:
        """The file at our path is another one now (renamed over ours): write to that one, and lock it."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self.lock_fd is not None:
            fd = lock_path(self.path)
            unlock(self.lock_fd)
            self.lock_fd = fd

    def append(self, lines: list[bytes], durable: bool, defer_sync: bool = False, expect_at: int | None = None) -> int:
        """Append lines in one write; fsync when the policy asks for it. Returns where the first line starts.

        With ``defer_sync`` the fsync the policy asks for is left to a later
        ``sync_deferred`` (one fsync for a group of appends); until then
        ``sync_pending`` is true. A later append that syncs covers it too.
        ``expect_at``: the file's size as the caller last knew it (see ``last_stat``).
        """
        self.check()
        fd = self._open()
        payload = b"\n".join(lines) + b"\n"
        newline = self.needs_newline
        if newline:
            payload = b"\n" + payload
        written = False
        try:
            _write_all(fd, payload)
            written = True
            # Where our bytes really went: O_APPEND put them at the end as it was at
            # the write, after any line another program appended before it. The
            # file's size after the write tells it when it grew by our bytes alone
            # (the follower wants that fstat anyway: ``last_stat``); else the
            # descriptor's offset, just past our bytes, does.
            st = os.fstat(fd)
            if expect_at is not None and st.st_size == expect_at + len(payload):
                end, self.last_stat = st.st_size, st
            else:
                end, self.last_stat = os.lseek(fd, 0, os.SEEK_CUR), None
        except OSError as exc:
            start = _start_of_failed(fd, len(payload) if written else getattr(exc, "written", 0))
            if start is not None and self._cut_back(fd, start):
                raise self._unlatched(exc, "append") from exc
            raise self._latch(exc, "append") from exc
        start = end - len(payload)
        self.last_start, self.last_end = start, end
        self.needs_newline = False
        if self.policy is FsyncPolicy.ALWAYS or (durable and self.policy is FsyncPolicy.ASSISTANT):
            if self._unsynced_at is None:
                self._unsynced_at = start
            if not defer_sync:
                self.sync_deferred()
        return start + newline

    @property
    def sync_pending(self) -> bool:
        """Some appended bytes wait for the fsync their policy asks for (see ``append``)."""
        return self._unsynced_at is not None

    def sync_deferred(self) -> None:
        """The fsync deferred appends wait for. If it fails, everything it was to
        cover is cut off the file and the error is latched. A writer latched
        since (its file no longer trusted) answers its error instead."""
        self.check()
        start, self._unsynced_at = self._unsynced_at, None
        if start is None or self._fd is None:
            return
        try:
            self._fsync(self._fd)
        except OSError as exc:
            self._cut_back(self._fd, start)
            raise self._latch(exc, "append") from exc

    def flush(self) -> None:
        self.check()
        if self._fd is not None:
            self._unsynced_at = None
            try:
                self._fsync(self._fd)
            except OSError as exc:
                raise self._latch(exc, "flush") from exc

    def close(self) -> None:
        if self._fd is not None:
            try:
                self._fsync(self._fd)
            except OSError as exc:
                if self._unsynced_at is not None:  # deferred appends are still to be answered: with this
                    self._latch(exc, "append")
            else:
                self._unsynced_at = None
            os.close(self._fd)
            self._fd = None
        unlock(self.lock_fd)
        self.lock_fd = None

    def _fsync(self, fd: int) -> None:
        self.fsyncs += 1
        os.fsync(fd)

    def _open(self) -> int:
        if self._fd is not None:
            return self._fd
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        except OSError as exc:
            raise self._unlatched(exc, "open") from exc  # nothing was written
        if self.torn_tail_at is not None:
            self._set_aside_torn_tail(fd, self.torn_tail_at)
            self.torn_tail_at = None
        self._fd = fd
        return fd

    def _set_aside_torn_tail(self, fd: int, at: int) -> None:
        """Move the bytes of a torn last line to ``<file>.torn`` and cut them off."""
        try:
            with open(self.path, "rb") as source:
                source.seek(at)
                torn = source.read()
            if torn:
                aside = self.path.with_name(self.path.name + ".torn")
                with open(os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE), "ab") as out:
                    out.write(torn + b"\n")
                    out.flush()
                    os.fsync(out.fileno())
            os.ftruncate(fd, at)
            os.fsync(fd)
        except OSError as exc:
            os.close(fd)
            raise self._latch(exc, "repair") from exc
        self.needs_newline = False

    @staticmethod
    def _cut_back(fd: int, start: int) -> bool:
        """Undo a partial batch so disk matches memory; True when the file is back to ``start`` bytes."""
        try:
            os.ftruncate(fd, start)
            return os.fstat(fd).st_size == start
        except OSError:
            return False

    def _unlatched(self, exc: OSError, action: str) -> StorageError:
        return StorageError(
            f"could not {action} {self.path}: {exc.strerror or exc}; nothing of the batch was kept, "
            "on disk or in memory: free space or fix permissions, then send it again",
            path=str(self.path),
            errno=exc.errno,
            latched=False,
        )

    def _latch(self, exc: OSError, action: str) -> StorageError:
        if self._error is None:
            self._error = StorageError(
                f"could not {action} {self.path}: {exc.strerror or exc}; "
                "free space or fix permissions, then reopen the session",
                path=str(self.path),
                errno=exc.errno,
                latched=True,
            )
        return self._error
