"""The listing index's side of the file system: the session files of a folder (one lstat each), a file read
whole with the stat it was read at, and the hidden temp files a killed create or migration left behind."""

from __future__ import annotations

import logging
import mmap
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from stat import S_ISREG

from ...format.jsonl import MAP_THRESHOLD

log = logging.getLogger(__name__)

# What a killed create or migration leaves beside a session (writer.py names them so): ``.<name>.new-<pid>``.
_LEFTOVER = re.compile(r"^\..+\.jsonl\.(?:tmp|new)-([0-9]+)$")
_LEFTOVER_AGE_NS = 60 * 1_000_000_000  # untouched this long: not a write in progress (a pid of another pid namespace)


# A file's bytes (or its map), its size and mtime_ns as read: what ``load`` gives, None when it cannot be read.
Loaded = tuple[bytes | mmap.mmap, int, int]
Loader = Callable[[str], Loaded | None]


def load(path: str) -> Loaded | None:
    """A file's bytes with the size and mtime they were read at; a large one mapped, not read (the caller
    closes the map): the index reads a 1 GB session a line at a time (listing.summarize_full).

    Plain descriptor calls (a cold rebuild reads 100,000 files): a stat, one read of the size it
    gives, a stat again; a file that changed meanwhile is read on to its end and stated once more."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if st.st_size > MAP_THRESHOLD:
            return mmap.mmap(fd, st.st_size, prot=mmap.PROT_READ), st.st_size, st.st_mtime_ns
        data = os.read(fd, st.st_size) if st.st_size else b""
        after = os.fstat(fd)
        if len(data) != after.st_size or after.st_mtime_ns != st.st_mtime_ns:
            parts = [data]
            while chunk := os.read(fd, 1 << 20):
                parts.append(chunk)
            data = b"".join(parts)
            after = os.fstat(fd)
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    return data, after.st_size, after.st_mtime_ns


def scan_folder(folder: Path) -> dict[str, tuple[int, int]]:
    """path -> (size, mtime_ns) of the folder's session files, one lstat each: the shape the index keeps
    of each folder, so a folder nothing changed in is told by one comparison of two dicts.

    Each lstat is taken relative to the folder's descriptor (fstatat): the kernel then walks one name,
    not the whole path again. With a root some folders deep that halves what a first list after a
    start pays for 10,000 files (its floor: nothing tells a new process which files changed)."""
    base = str(folder)
    try:
        fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except (FileNotFoundError, NotADirectoryError):
        return {}
    try:
        names = os.listdir(fd)
        out = {}
        prefix = base + os.sep
        for name in names:
            if not name.endswith(".jsonl"):
                if name.startswith("."):
                    remove_leftover(base, name)
                continue
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue
            if S_ISREG(st.st_mode):
                out[prefix + name] = (st.st_size, st.st_mtime_ns)
        return out
    finally:
        os.close(fd)


def remove_leftover(base: str, name: str) -> None:
    """Remove a hidden temp file of a create or migration whose process is gone (not ours, not alive)."""
    found = _LEFTOVER.match(name)
    if found is None:
        return
    pid = int(found.group(1))
    if pid == os.getpid() or _alive(pid):
        return
    path = base + os.sep + name
    try:
        st = os.lstat(path)
        if not S_ISREG(st.st_mode) or time.time_ns() - st.st_mtime_ns < _LEFTOVER_AGE_NS:
            return
        os.unlink(path)
    except OSError:
        return
    log.info("removed %s, left by process %d, which is gone", path, pid)


def _alive(pid: int) -> bool:
    if pid <= 0:
        return True  # not a process id: leave the file alone
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        return True  # alive (another user's), or no pid this system could have: leave the file alone
    return True
