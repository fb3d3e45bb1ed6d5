"""Which open session files another program may have written: Linux inotify on their folders.

The rpc layer reads ``fd`` when it is readable (no thread) and asks the
service to follow the sessions ``read`` names. A folder is watched rather than
the file itself, so a file renamed over a session's (a rewrite by rename) is
seen too. Events of our own writes come as well: the service tells them apart
with one stat (the session's ``changed_behind``), so they cost no file read.

Where inotify cannot be trusted (see watch.py: not Linux, turned off, remote
and FUSE file systems, no descriptor or watch left) ``fd`` is -1 and the rpc
layer checks the watched sessions' files on a timer instead.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import threading
from pathlib import Path

from ..index.watch import (
    IN_ATTRIB,
    IN_CLOEXEC,
    IN_CLOSE_WRITE,
    IN_CREATE,
    IN_DONT_FOLLOW,
    IN_IGNORED,
    IN_MODIFY,
    IN_MOVED_TO,
    IN_NONBLOCK,
    IN_ONLYDIR,
    IN_Q_OVERFLOW,
    inotify_libc,
    parse,
)

log = logging.getLogger(__name__)

_MASK = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_ONLYDIR | IN_DONT_FOLLOW
# On the file itself too: a sidecar creates a session file by hard-linking a temp file into place
# (writer.py) and keeps appending through the temp name's descriptor, whose writes the kernel
# reports to the folder under that (since removed) name, i.e. not at all. A watch on the file's
# inode sees writes through any name.
_FILE_MASK = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_DONT_FOLLOW


class FileWatch:
    """inotify watches on the folders of some files; ``read`` names the files that had events."""

    def __init__(self, root: Path) -> None:
        self._lock = threading.Lock()
        self._libc = inotify_libc(os.fspath(root))
        self.fd = -1
        self._folder_wd: dict[str, int] = {}
        self._wd_folder: dict[int, str] = {}
        self._files: dict[str, set[bytes]] = {}  # folder -> names of the watched files in it
        self._file_wd: dict[int, Path] = {}  # inode watch -> the watched file it was made for
        self._wd_of_file: dict[Path, int] = {}
        if self._libc is not None:
            fd = self._libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
            if fd < 0:
                log.info(
                    "inotify unavailable (%s): watched sessions are checked on a timer", os.strerror(ctypes.get_errno())
                )
            self.fd = fd

    @property
    def enabled(self) -> bool:
        return self.fd >= 0

    def add(self, path: Path) -> bool:
        """Watch ``path``'s folder for events on it; False when that is not possible (check it on a timer)."""
        if self.fd < 0:
            return False
        folder, name = os.fspath(path.parent), os.fsencode(path.name)
        with self._lock:
            if folder not in self._folder_wd:
                wd = self._libc.inotify_add_watch(self.fd, os.fsencode(folder), _MASK)  # type: ignore[union-attr]  # _libc is set whenever fd is open
                if wd < 0:
                    code = ctypes.get_errno()
                    level = logging.WARNING if code == errno.ENOSPC else logging.INFO
                    log.log(
                        level, "cannot watch %s (%s): its sessions are checked on a timer", folder, os.strerror(code)
                    )
                    return False
                self._folder_wd[folder], self._wd_folder[wd] = wd, folder
            self._files.setdefault(folder, set()).add(name)
            self._watch_inode(path)
        return True

    def _watch_inode(self, path: Path) -> None:
        """(Again) watch the file now at ``path``; the folder's watch covers it if this fails."""
        wd = self._libc.inotify_add_watch(self.fd, os.fsencode(path), _FILE_MASK)  # type: ignore[union-attr]  # _libc is set whenever fd is open
        if wd >= 0:
            old = self._wd_of_file.get(path)
            if old is not None and old != wd and self._file_wd.get(old) == path:
                del self._file_wd[old]
                self._libc.inotify_rm_watch(self.fd, old)  # type: ignore[union-attr]  # _libc is set whenever fd is open
            self._file_wd[wd], self._wd_of_file[path] = path, wd

    def remove(self, path: Path) -> None:
        folder, name = os.fspath(path.parent), os.fsencode(path.name)
        with self._lock:
            names = self._files.get(folder)
            if names is None:
                return
            names.discard(name)
            file_wd = self._wd_of_file.pop(path, None)
            if file_wd is not None and self._file_wd.pop(file_wd, None) is not None:
                self._libc.inotify_rm_watch(self.fd, file_wd)  # type: ignore[union-attr]  # _libc is set whenever fd is open
            if not names:
                del self._files[folder]
                wd = self._folder_wd.pop(folder, None)
                if wd is not None:
                    self._wd_folder.pop(wd, None)
                    self._libc.inotify_rm_watch(self.fd, wd)  # type: ignore[union-attr]  # _libc is set whenever fd is open

    def read(self) -> set[Path]:
        """The watched files with events since the last read (every one after a lost event queue)."""
        changed: set[Path] = set()
        with self._lock:
            while self.fd >= 0:
                try:
                    data = os.read(self.fd, 65536)
                except BlockingIOError:
                    break
                except InterruptedError:
                    continue
                if not data:
                    break
                for wd, mask, name in parse(data):
                    if mask & IN_Q_OVERFLOW:
                        changed.update(Path(f) / os.fsdecode(n) for f, names in self._files.items() for n in names)
                        continue
                    file = self._file_wd.get(wd)
                    if file is not None:
                        if mask & IN_IGNORED:  # that inode is gone (replaced or deleted)
                            del self._file_wd[wd]
                        changed.add(file)
                        continue
                    folder = self._wd_folder.get(wd)
                    if folder is None:
                        continue
                    if mask & IN_IGNORED:  # the folder went: its files are checked by stat from now on
                        changed.update(Path(folder) / os.fsdecode(n) for n in self._files.get(folder, ()))
                        self._wd_folder.pop(wd, None)
                        self._folder_wd.pop(folder, None)
                        continue
                    if name in self._files.get(folder, ()):
                        path = Path(folder) / os.fsdecode(name)
                        changed.add(path)
                        if mask & (IN_MOVED_TO | IN_CREATE):  # another file under the name: watch that one
                            self._watch_inode(path)
        return changed

    def close(self) -> None:
        with self._lock:
            if self.fd >= 0:
                os.close(self.fd)
                self.fd = -1
            self._folder_wd.clear()
            self._wd_folder.clear()
            self._files.clear()
            self._file_wd.clear()
            self._wd_of_file.clear()
