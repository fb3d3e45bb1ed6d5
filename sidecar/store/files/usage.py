"""What the file store holds on disk: bytes per cwd, per session, in blobs, the index, the archive, the trash.

Read from the file system alone (one stat per file; blob references are found
by a byte search of each session file, only when asked), so it answers for a
root no sidecar has opened and never writes anything.
"""

from __future__ import annotations

import mmap
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from ...format.ids import session_id_of
from ...format.jsonl import BLOB_MARK, BLOB_PREFIX, parse_path
from ..tree import SessionTree
from ..usage import SessionFile, StoreUsage, folder_bytes
from .layout import ARCHIVE_DIR, TRASH_DIR, Layout

# A blob reference inside a line: "blob:sha256:<64 hex>".
_BLOB_REF = re.compile(rb'"' + re.escape(BLOB_PREFIX.encode()) + rb"([0-9a-f]{64})")
_DIGEST = re.compile(r"^[0-9a-f]{64}$")
AREAS = {"live": None, "archive": ARCHIVE_DIR, "trash": TRASH_DIR}


def session_files(layout: Layout) -> Iterator[SessionFile]:
    """Every session file below the root, in the live area, the archive and the trash."""
    for area, sub in AREAS.items():
        base = layout.root if sub is None else layout.root / sub
        for folder in layout.project_dirs(base):
            for path in layout.session_files(folder):
                try:
                    st = path.stat()
                except OSError:
                    continue  # gone since the folder was read
                yield SessionFile(path, area, folder.name, session_id_of(path), st.st_size, st.st_mtime_ns)


def blob_references(paths: Iterable[Path]) -> set[str]:
    """The digests of every blob the given session files refer to (a byte search, no JSON parse)."""
    found: set[str] = set()
    for path in paths:
        try:
            with open(path, "rb") as file:
                if os.fstat(file.fileno()).st_size == 0:
                    continue
                with mmap.mmap(file.fileno(), 0, prot=mmap.PROT_READ) as data:
                    if data.find(BLOB_MARK) < 0:
                        continue
                    found.update(match.group(1).decode() for match in _BLOB_REF.finditer(data))
        except (OSError, ValueError):
            continue
    return found


def blob_files(folders: Iterable[Path]) -> Iterator[tuple[Path, int, int]]:
    """(path, size, mtime_ns) of every blob in ``folders`` (temp files of writers in progress left out)."""
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            # Only blobs: named by their sha256. oh-my-pi keeps a <sha256>.png beside each of
            # its blobs in the same folder, and a temp file of a writer starts with a dot.
            if not _DIGEST.match(entry.name) or not entry.is_file(follow_symlinks=False):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            yield Path(entry.path), st.st_size, st.st_mtime_ns


def measure(layout: Layout, blob_folders: list[Path], index_folder: Path, find_unreferenced: bool) -> StoreUsage:
    usage = StoreUsage(bytes_by_area={area: 0 for area in AREAS})
    for found in session_files(layout):
        usage.sessions.append(found)
        usage.bytes_by_area[found.area] += found.size
    blobs = list(blob_files(blob_folders))
    usage.blob_count = len(blobs)
    usage.blob_bytes = sum(size for _, size, _ in blobs)
    usage.index_bytes = folder_bytes(index_folder)
    if find_unreferenced:
        referenced = blob_references(s.path for s in usage.sessions)
        usage.unreferenced_blobs = [path for path, _, _ in blobs if path.name not in referenced]
        sizes = {path: size for path, size, _ in blobs}
        usage.unreferenced_bytes = sum(sizes[p] for p in usage.unreferenced_blobs)
    return usage


def is_pinned(path: Path) -> bool:
    """A session whose name or a label is set now (labels and names can be cleared again).

    A byte search for their entry types first: most files hold neither and are
    not parsed at all.
    """
    try:
        with open(path, "rb") as file:
            with mmap.mmap(file.fileno(), 0, prot=mmap.PROT_READ) as data:
                if data.find(b'"type":"label"') < 0 and data.find(b'"type":"session_info"') < 0:
                    return False
        parsed = parse_path(path)
    except (OSError, ValueError):
        return False
    tree = SessionTree()
    tree.add_parsed(parsed.items)
    return bool(tree.name or tree.labels)
