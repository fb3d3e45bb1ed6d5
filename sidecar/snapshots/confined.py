"""Writes inside one folder and nowhere else, whatever the paths given say.

Every path is checked (relative, no ``..``, no ``.git``) and then walked one
component at a time from an open handle on the folder, with ``O_NOFOLLOW``:
a symlink on the way (planted, or part of the project) stops the write instead
of being followed, so nothing outside the folder is ever opened for writing.
Files are replaced by writing a temporary file beside them and renaming it
over, so each file is at any moment either the old one or the new one.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import PathOutsideCwd

TMP_SUFFIX = ".sidecar-rewind"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Blocked(Exception):
    """This path cannot be written as asked (a folder with other files in the way, a symlinked folder)."""


def check_relative(path: str) -> list[str]:
    """The components of a path a snapshot may name; PathOutsideCwd for anything else."""
    parts = path.split("/")
    if (
        not path
        or path.startswith("/")
        or "\0" in path
        or any(p in ("", ".", "..") for p in parts)
        or any(p.lower() == ".git" for p in parts)
    ):
        raise PathOutsideCwd(
            f"the snapshot names {path!r}, which is not a plain path inside the session's folder; nothing was written",
            path=path,
        )
    return parts


class Confined:
    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.root_fd = os.open(folder, _DIR_FLAGS & ~os.O_NOFOLLOW)
        self._dirty: set[int] = set()
        self._fds: dict[tuple[str, ...], int] = {(): self.root_fd}

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def _dir(self, parts: tuple[str, ...], create: bool) -> int | None:
        """An open handle on folder ``parts``; None when it is missing and not to be created."""
        fd = self._fds.get(parts)
        if fd is not None:
            return fd
        parent = self._dir(parts[:-1], create)
        if parent is None:
            return None
        name = parts[-1]
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            if not create:
                return None
            os.mkdir(name, 0o777, dir_fd=parent)
            self._dirty.add(parent)
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise Blocked(f"{'/'.join(parts)} is a symlink or a file, not a folder: not followed") from None
            raise
        self._fds[parts] = fd
        return fd

    def _drop(self, parts: tuple[str, ...]) -> None:
        for key in [k for k in self._fds if k[: len(parts)] == parts and k]:
            os.close(self._fds.pop(key))

    def lstat(self, path: str) -> os.stat_result | None:
        parts = tuple(check_relative(path))
        try:
            fd = self._dir(parts[:-1], create=False)
            return None if fd is None else os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
        except (FileNotFoundError, Blocked, NotADirectoryError):
            return None

    def write(self, path: str, data: bytes, mode: str) -> None:
        """Put ``data`` at ``path`` as git ``mode`` (100644, 100755 or 120000 for a symlink to ``data``)."""
        parts = tuple(check_relative(path))
        fd = self._dir(parts[:-1], create=True)
        assert fd is not None
        name = parts[-1]
        tmp = f".{name}{TMP_SUFFIX}"[:255]
        _unlink(tmp, fd)
        try:
            old = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        if old is not None and stat.S_ISDIR(old.st_mode):
            self._rmdir_if_empty(parts)
        if mode == "120000":
            os.symlink(data, tmp, dir_fd=fd)
        else:
            out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=fd)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(out, view) :]
                os.fchmod(out, _permissions(old, os.fstat(out).st_mode, executable=mode == "100755"))
                os.fsync(out)
            finally:
                os.close(out)
        os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        self._dirty.add(fd)

    def _rmdir_if_empty(self, parts: tuple[str, ...]) -> None:
        parent = self._dir(parts[:-1], create=False)
        assert parent is not None
        self._drop(parts)
        try:
            os.rmdir(parts[-1], dir_fd=parent)
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                raise Blocked(f"{'/'.join(parts)} is a folder holding files no snapshot has") from None
            raise

    def remove(self, path: str) -> None:
        parts = tuple(check_relative(path))
        fd = self._dir(parts[:-1], create=False)
        if fd is None:
            return
        try:
            st = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(st.st_mode):
            return  # a folder where a file was: whatever is in it is not ours to remove
        os.unlink(parts[-1], dir_fd=fd)
        self._dirty.add(fd)

    def prune_empty(self, path: str) -> None:
        """Remove the folders above a removed file that are left empty (git does not keep empty folders)."""
        parts = tuple(check_relative(path))[:-1]
        while parts:
            parent = self._dir(parts[:-1], create=False)
            if parent is None:
                return
            self._drop(parts)
            try:
                os.rmdir(parts[-1], dir_fd=parent)
            except OSError:
                return
            self._dirty.add(parent)
            parts = parts[:-1]

    def sync(self) -> None:
        for fd in self._dirty:
            try:
                os.fsync(fd)
            except OSError:
                pass
        self._dirty.clear()


def _unlink(name: str, dir_fd: int) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass


def _permissions(old: os.stat_result | None, fresh: int, executable: bool) -> int:
    """The old file's permission bits (a new file's: from the umask) with the execute bits set as the snapshot says.

    git records only whether a file is executable; other bits (a private 0600 file) stay as they are.
    """
    bits = stat.S_IMODE(old.st_mode) if old is not None and stat.S_ISREG(old.st_mode) else stat.S_IMODE(fresh)
    if executable:
        return bits | ((bits & 0o444) >> 2)
    return bits & ~0o111


@contextmanager
def confined(folder: str) -> Iterator[Confined]:
    handle = Confined(folder)
    try:
        yield handle
    finally:
        handle.close()
