"""Where sessions live: the root, pi's folder-per-cwd layout and path safety (ids: store/ids.py).

``<root>/--<cwd-encoded>--/<timestamp>_<sessionId>.jsonl`` exactly as pi lays
it out, so a root pointed at pi's own sessions folder works. Archived and
deleted sessions keep the same relative path under ``<root>/.archive`` and
``<root>/.trash``; pi lists only ``*.jsonl`` files one level down, so it never
sees them.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import platformdirs

from ...errors import InvalidParams, PathOutsideRoot
from ..ids import check_session_id, inside

ROOT_ENV = "SESSION_SIDECAR_HOME"
ARCHIVE_DIR = ".archive"
TRASH_DIR = ".trash"


def default_root() -> Path:
    env = os.environ.get(ROOT_ENV)
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir("session-sidecar", appauthor=False)) / "sessions"


NAME_MAX = 255  # bytes in one file or folder name (Linux, macOS, Windows alike)


def encode_cwd(cwd: str) -> str:
    """pi's folder name for a cwd: leading separator dropped, / \\ : become -."""
    stripped = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    return "--" + re.sub(r"[/\\:]", "-", stripped) + "--"


def file_name(timestamp: str, session_id: str) -> str:
    return f"{re.sub(r'[:.]', '-', timestamp)}_{session_id}.jsonl"


# A folder's mtime this old (or older) is trusted to change with its next entry change: file systems keep
# mtimes to a clock tick (a few ms), so two changes within one tick can leave the same mtime behind.
_SETTLED_NS = 2_000_000_000


class Layout:
    """Paths below one sessions root; nothing here touches a file's content."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).expanduser().absolute()
        # base -> (its mtime_ns, its project folders): a warm list of 1,000 folders stats the root
        # instead of making 1,000 Paths again (see project_dirs).
        self._dirs: dict[Path, tuple[int, list[Path]]] = {}

    def ensure_root(self) -> None:
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)

    def cwd_dir(self, cwd: str) -> Path:
        return self.root / encode_cwd(cwd)

    def new_session_path(self, cwd: str, timestamp: str, session_id: str) -> Path:
        """Where a new session's file goes; its folder may not lead out of the root (a symlink)."""
        return self.check_inside(self.project_dir(cwd) / file_name(timestamp, session_id))

    def project_dir(self, cwd: str) -> Path:
        """The folder sessions of ``cwd`` go to, refused when no file system could make it."""
        if "\x00" in cwd:
            raise InvalidParams("cwd must not contain a NUL character", field="cwd")
        folder = encode_cwd(cwd)
        size = len(os.fsencode(folder))
        if size > NAME_MAX:
            raise InvalidParams(
                f"cwd is too long: its project folder's name would be {size} bytes, over the "
                f"{NAME_MAX} a file system allows (pi's layout names the folder after the cwd)",
                field="cwd",
            )
        return self.root / folder

    def project_dirs(self, base: Path | None = None) -> list[Path]:
        """The project folders of ``base`` (the root). A folder added, removed or renamed changes the base's
        mtime: the list is read again then, and whenever that mtime is recent enough that a change in the
        same clock tick could hide behind it."""
        base = base or self.root
        try:
            mtime = os.stat(base).st_mtime_ns
        except (FileNotFoundError, NotADirectoryError):
            self._dirs.pop(base, None)
            return []
        cached = self._dirs.get(base)
        if cached is not None and cached[0] == mtime:
            return list(cached[1])
        try:
            with os.scandir(base) as it:
                found = [Path(e.path) for e in it if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")]
        except (FileNotFoundError, NotADirectoryError):
            return []
        if time.time_ns() - mtime > _SETTLED_NS:
            self._dirs[base] = (mtime, found)
        return list(found)

    def session_files(self, folder: Path) -> list[Path]:
        try:
            with os.scandir(folder) as it:
                return [Path(e.path) for e in it if e.name.endswith(".jsonl") and e.is_file(follow_symlinks=False)]
        except (FileNotFoundError, NotADirectoryError):
            return []

    def find(self, session_id: str, area: str | None = None) -> Path | None:
        """The live (or archived / trashed) file of a session id, or None."""
        check_session_id(session_id)
        base = self.root if area is None else self.root / area
        suffix = f"_{session_id}.jsonl"
        for folder in self.project_dirs(base):
            for path in self.session_files(folder):
                if path.name.endswith(suffix):
                    return path
        return None

    def find_all(self, session_id: str) -> list[Path]:
        """Every live file of a session id: more than one when a file was copied by hand."""
        check_session_id(session_id)
        suffix = f"_{session_id}.jsonl"
        return [
            path
            for folder in self.project_dirs(self.root)
            for path in self.session_files(folder)
            if path.name.endswith(suffix)
        ]

    def moved(self, path: Path, from_area: str | None, to_area: str | None) -> Path:
        """The same relative place of ``path`` in another area (live, archive, trash)."""
        source_base = self.root if from_area is None else self.root / from_area
        relative = path.relative_to(source_base)
        target_base = self.root if to_area is None else self.root / to_area
        return target_base / relative

    def check_inside(self, path: Path) -> Path:
        if not inside(self.root, path):
            raise PathOutsideRoot(
                f"{path} is outside the sessions root {self.root}; name a session by id or a path below the root",
                path=str(path),
                root=str(self.root),
            )
        return path
