"""One writer per session file across processes: an advisory ``flock`` on the file itself.

A sidecar holds an exclusive ``flock`` on a session file for as long as it has
the session open for writing. ``flock`` (not POSIX ``lockf``) because its
lock belongs to the open file description: it is not dropped when some other
descriptor of the same file is closed, and two services in one process exclude
each other too. The kernel drops it when the process dies, however it dies.

The lock is advisory: pi itself takes none, so a pi process writing the same
file is not kept out; sidecars keep each other out.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from ...errors import SessionLocked


def lock_file(path: Path, fd: int | None = None) -> int:
    """Take the exclusive lock of ``path`` without waiting; returns the locked descriptor.

    With ``fd`` that descriptor is locked (and returned); otherwise a new
    read-only one is opened. Raises ``SessionLocked`` when another open file
    holds the lock, ``FileNotFoundError`` when the file is gone.
    """
    own = fd is None
    if fd is None:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        if own:
            os.close(fd)
        raise locked_error(path) from None
    except BaseException:
        if own:
            os.close(fd)
        raise
    return fd


def lock_path(path: Path) -> int:
    """Lock the file now at ``path``; retried if it was replaced (renamed over) meanwhile."""
    for _ in range(5):
        fd = lock_file(path)
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)
    raise locked_error(path)


def locked_error(path: Path) -> SessionLocked:
    pid = holder_pid(path)
    who = f"process {pid}" if pid is not None else "another process"
    data: dict[str, object] = {"path": str(path)}
    if pid is not None:
        data["pid"] = pid
    return SessionLocked(
        f"{path} is open for writing in {who} (another sidecar); close it there, "
        "or open it with readOnly: true to read it",
        **data,
    )


def holder_pid(path: Path) -> int | None:
    """The pid /proc/locks names for an flock on ``path``'s inode (Linux), or None."""
    try:
        st = os.stat(path)
        with open("/proc/locks", encoding="ascii", errors="replace") as locks:
            text = locks.read()
    except OSError:
        return None
    wanted = f":{st.st_ino}"
    device = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}{wanted}"
    for line in text.splitlines():
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 00:2a:5678 0 EOF"
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[3] == "WRITE" and fields[5] == device:
            try:
                return int(fields[4])
            except ValueError:
                return None
    return None


def unlock(fd: int | None) -> None:
    if fd is not None:
        try:
            os.close(fd)  # closing the last descriptor of the open file drops the flock
        except OSError:
            pass
