"""Moving session files: between areas and folders (relocate), and to another cwd (its header rewritten).

The header is rewritten in place first (atomically: a new file renamed over
the old), then the file is renamed into the new folder. A crash between the
two leaves one file, in the old folder, that already names the new cwd:
never two copies of a session, never a half-written one. Lines before the
header (oh-my-pi's title line) and every entry after it keep their bytes.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ...errors import DamagedFile
from ...format.jsonl import encode, parse_line
from .writer import FILE_MODE, ensure_dir, fsync_dir

# The header is one of the first lines; a file whose first this many bytes hold none is no session.
_HEADER_SCAN_BYTES = 1024 * 1024


def rewrite_header_cwd(path: Path, cwd: str) -> None:
    """Set the header's ``cwd`` in ``path`` (temp file, fsync, rename); every other byte is kept."""
    with open(path, "rb") as source:
        head = source.read(_HEADER_SCAN_BYTES)
        start = 0
        while True:
            end = head.find(b"\n", start)
            if end < 0:
                raise DamagedFile(
                    f"{path} has no session header in its first {_HEADER_SCAN_BYTES} bytes", path=str(path)
                )
            entry = parse_line(head[start:end])
            if entry is not None and entry.type == "session":
                break
            start = end + 1
        header = entry.obj()
        header["cwd"] = cwd
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        try:
            with open(fd, "wb") as out:
                out.write(head[:start])
                out.write(encode(header))
                out.write(head[end:])
                shutil.copyfileobj(source, out, 1024 * 1024)
                out.flush()
                os.fsync(out.fileno())
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    os.replace(tmp, path)
    fsync_dir(path.parent)


def relocate(source: Path, target: Path) -> None:
    """Rename a session file to ``target`` (both folders synced); its backups and torn lines follow it.

    Raises OSError when the file itself cannot be moved; a leftover that cannot follow stays behind.
    """
    ensure_dir(target.parent)
    os.rename(source, target)
    fsync_dir(target.parent)
    fsync_dir(source.parent)
    for extra in source.parent.glob(source.name + ".*"):  # migration and doctor backups, torn lines
        try:
            os.rename(extra, target.parent / extra.name)
        except OSError:
            pass
