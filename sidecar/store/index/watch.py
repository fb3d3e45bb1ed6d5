"""Which session folders changed since the listing index last looked at them: Linux inotify.

A list used to lstat every session file to find what changed behind the
sidecar's back (pi appending, a file copied in, renamed, deleted). With a watch
on each folder the kernel says so instead: a folder with no event since its
last scan is known unchanged and is not looked at; a folder with events is
scanned again (one lstat per file, as before).

The watch on a folder is put in place *before* the folder is scanned, so a
change made during the scan shows up as an event and the next list scans it
again. Every event on a folder's ``*.jsonl`` files counts (created, written,
attributes changed, closed after writing, moved in or out, deleted), and so do
events on the folder itself (deleted, moved).

Where a watch cannot be trusted the folder is simply scanned every time:
no inotify (not Linux, no libc symbol, ``inotify_init1`` failing), the watch
limit reached (``ENOSPC``, that folder only), the event queue overflowed
(``IN_Q_OVERFLOW``: every folder once), a file system whose changes by other
machines raise no events (NFS, SMB, FUSE, 9p, ...), or
``SESSION_SIDECAR_INOTIFY=0``. Writes through a shared ``mmap`` raise no
events either; nothing writes session files that way.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import struct
import sys
import threading
import time
import weakref

log = logging.getLogger(__name__)

ENV = "SESSION_SIDECAR_INOTIFY"

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_UNMOUNT = 0x00002000
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC

_FOLDER_MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
    | IN_DONT_FOLLOW
)
_SELF = IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_IGNORED
_RETRY_S = 30.0  # after inotify_init1 failed for want of descriptors or instances, try again this much later
_HEADER = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then the name)

# File systems where another machine's (or the host's) writes raise no inotify events.
_REMOTE = {
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "smbfs",
    "9p",
    "virtiofs",
    "ceph",
    "glusterfs",
    "afs",
    "lustre",
    "gpfs",
    "ncpfs",
    "davfs",
    "vboxsf",
    "prl_fs",
    "vmhgfs",
    "ocfs2",
    "gfs2",
    "beegfs",
    "orangefs",
}


def parse(buffer: bytes) -> list[tuple[int, int, bytes]]:
    """(wd, mask, name) of each event in what one ``read`` of an inotify descriptor returned."""
    events = []
    offset = 0
    while offset + _HEADER.size <= len(buffer):
        wd, mask, _cookie, length = _HEADER.unpack_from(buffer, offset)
        start = offset + _HEADER.size
        name = buffer[start : start + length].rstrip(b"\0")
        events.append((wd, mask, name))
        offset = start + length
    return events


def _fs_type(path: str) -> str | None:
    """The file system type of the mount holding ``path`` (from /proc/self/mountinfo), None if unknown."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    real = os.path.realpath(path)
    best, kind = -1, None
    for line in lines:
        fields = line.split(" ")
        try:
            point = fields[4].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")
            fs = fields[fields.index("-") + 1]
        except (IndexError, ValueError):
            continue
        if (real == point or real.startswith(point.rstrip("/") + "/")) and len(point) >= best:
            best, kind = len(point), fs
    return kind


def inotify_libc(root: str) -> ctypes.CDLL | None:
    """libc with its inotify functions typed, or None where events on ``root`` cannot be trusted
    (not Linux, turned off with SESSION_SIDECAR_INOTIFY=0, a remote or FUSE file system)."""
    if sys.platform != "linux" or os.environ.get(ENV, "1").strip().lower() in ("0", "false", "no", "off"):
        return None
    kind = _fs_type(root)
    if kind is None or kind in _REMOTE or kind.startswith("fuse"):
        log.info("not watching %s (%s file system): changes are found by checking files", root, kind or "unknown")
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.inotify_init1.argtypes = (ctypes.c_int,)
        libc.inotify_add_watch.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32)
        libc.inotify_rm_watch.argtypes = (ctypes.c_int, ctypes.c_int)
    except (OSError, AttributeError):
        return None
    return libc


class FolderWatch:
    """Folders known unchanged since their last scan. Not ``enabled``: every folder is always scanned.

    The inotify descriptor is opened at the first ``drain`` (a service that
    never lists holds none) and closed with ``close`` or when the watch is
    collected. Where opening it failed for want of descriptors or inotify
    instances (``fs.inotify.max_user_instances``) it is tried again later.
    """

    def __init__(self, root: str) -> None:
        self._lock = threading.Lock()
        self._fd = -1
        self._libc: ctypes.CDLL | None = None
        self._retry_at: float | None = None  # None: never try (not Linux, remote file system, turned off)
        self._finalizer: weakref.finalize | None = None
        self._path_wd: dict[str, int] = {}
        self._wd_path: dict[int, str] = {}
        self._clean: set[str] = set()
        self._full_logged = False
        libc = inotify_libc(root)
        if libc is None:
            return
        self._libc = libc
        self._retry_at = 0.0

    @property
    def enabled(self) -> bool:
        """Watching now (or able to: the descriptor opens at the next drain)."""
        with self._lock:
            self._open()
        return self._fd >= 0

    def _open(self) -> None:
        if self._fd >= 0 or self._retry_at is None or time.monotonic() < self._retry_at or self._libc is None:
            return
        fd = self._libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            code = ctypes.get_errno()
            transient = code in (errno.EMFILE, errno.ENFILE, errno.ENOMEM)
            self._retry_at = time.monotonic() + _RETRY_S if transient else None
            log.info(
                "inotify unavailable (%s): every list checks every file%s",
                os.strerror(code),
                " for now" if transient else "",
            )
            return
        self._fd = fd
        self._finalizer = weakref.finalize(self, os.close, fd)

    def unchanged(self, folder: str) -> bool:
        """True when ``folder`` is watched and saw no event since it was last armed (call ``drain`` first)."""
        return folder in self._clean

    def arm(self, folder: str) -> None:
        """About to scan ``folder``: watch it (if not yet) and count it unchanged from now on, until an event."""
        if self._fd < 0 or self._libc is None:
            return
        with self._lock:
            if folder not in self._path_wd:
                wd = self._libc.inotify_add_watch(self._fd, os.fsencode(folder), _FOLDER_MASK)
                if wd < 0:
                    code = ctypes.get_errno()
                    if code == errno.ENOSPC and not self._full_logged:
                        self._full_logged = True
                        log.warning(
                            "inotify watch limit reached (fs.inotify.max_user_watches): folders past it are"
                            " checked file by file on every list"
                        )
                    return
                old = self._wd_path.get(wd)
                if old is not None and old != folder:  # the same folder under another name (moved): forget that one
                    self._path_wd.pop(old, None)
                    self._clean.discard(old)
                self._path_wd[folder] = wd
                self._wd_path[wd] = folder
            self._clean.add(folder)

    def forget(self, folders: list[str] | None = None) -> None:
        """Count ``folders`` (None: all) changed: the next sync scans them (the index did not take their scan)."""
        with self._lock:
            if folders is None:
                self._clean.clear()
            else:
                self._clean.difference_update(folders)

    def drain(self) -> None:
        """Read every pending event; the folders they name are no longer unchanged."""
        with self._lock:
            self._open()
            if self._fd < 0:
                return
            while True:
                try:
                    data = os.read(self._fd, 65536)
                except BlockingIOError:
                    return
                except OSError as exc:
                    if exc.errno == errno.EINTR:
                        continue
                    log.warning("reading inotify events failed (%s): every list checks every file from now on", exc)
                    self._close()
                    self._retry_at = None
                    return
                if not data:
                    return
                self.apply(parse(data))

    def apply(self, events: list[tuple[int, int, bytes]]) -> None:
        for wd, mask, name in events:
            if mask & IN_Q_OVERFLOW:
                log.info("inotify queue overflowed: the next list checks every folder")
                self._clean.clear()
                continue
            folder = self._wd_path.get(wd)
            if folder is None:
                continue
            if mask & _SELF:
                # The folder itself went (or moved): drop the watch; a new folder of that name gets its own.
                self._clean.discard(folder)
                if not mask & IN_IGNORED and self._libc is not None:
                    self._libc.inotify_rm_watch(self._fd, wd)
                self._wd_path.pop(wd, None)
                if self._path_wd.get(folder) == wd:
                    del self._path_wd[folder]
                continue
            if name.endswith(b".jsonl"):
                self._clean.discard(folder)

    def _close(self) -> None:
        if self._finalizer is not None:
            self._finalizer()  # closes the descriptor, once
            self._finalizer = None
        self._fd = -1
        self._clean.clear()
        self._path_wd.clear()
        self._wd_path.clear()

    def close(self) -> None:
        """Stop watching for good (the index is closed)."""
        with self._lock:
            self._close()
            self._retry_at = None
