"""Moving images between the blob store and the lines, for files that change tools.

* ``inline_blobs``: every ``blob:sha256:`` reference in the root's session
  files replaced by the image's base64 (what pi reads), each file rewritten
  atomically with its old bytes kept as ``<file>.blobrefs.bak``. For users who
  take sessions written under oh-my-pi's compatibility (or by an older
  sidecar, which always used ``<root>/.blobs``) to pi.
* ``move_blobs``: the blobs of ``<root>/.blobs`` copied to the agent folder's
  ``blobs/`` where oh-my-pi reads them, then removed. References name the
  content, so no session file changes.

A session another sidecar holds open for writing is left alone and reported;
a reference whose blob is missing stays as it is and is reported.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import SessionLocked
from ...format.jsonl import BLOB_MARK, Entry, decode_object, parse_path, serialize
from ..compat import omp_blob_folder
from ..payload import BLOB_DIR, BlobStore, resolve
from .layout import ARCHIVE_DIR, Layout
from .lock import lock_path, unlock
from .writer import atomic_write


@dataclass
class MoveReport:
    files_changed: list[str] = field(default_factory=list)
    references: int = 0  # references replaced (inline) or blobs moved (move)
    missing: list[str] = field(default_factory=list)  # references whose blob is nowhere
    locked: list[str] = field(default_factory=list)  # files another sidecar holds


def session_files(root: Path) -> list[Path]:
    layout = Layout(root)
    folders = layout.project_dirs() + layout.project_dirs(layout.root / ARCHIVE_DIR)
    return sorted(p for folder in folders for p in layout.session_files(folder))


def inline_blobs(root: Path) -> MoveReport:
    root = Path(root)
    reader = BlobStore(root, also_read=(omp_blob_folder(root),))
    report = MoveReport()
    for path in session_files(root):
        with open(path, "rb") as handle:
            if BLOB_MARK not in handle.read():
                continue
        try:
            lock_fd = lock_path(path)
        except SessionLocked:
            report.locked.append(str(path))
            continue
        try:
            _inline_file(path, reader, report)
        finally:
            unlock(lock_fd)
    return report


def _inline_file(path: Path, reader: BlobStore, report: MoveReport) -> None:
    parsed = parse_path(path)
    changed = False
    items: list[Entry | bytes] = []
    for item in parsed.items:
        if isinstance(item, Entry) and BLOB_MARK in item.raw:
            obj = decode_object(item.raw)
            before = blob_references(obj)
            resolve(obj, reader)
            after = blob_references(obj)
            report.references += len(before) - len(after)
            report.missing += [f"{path}: {ref}" for ref in after]
            if len(after) < len(before):
                item = Entry.from_obj(obj)  # only the lines that held a reference are encoded again
                changed = True
        items.append(item.held() if isinstance(item, Entry) else item)
    if not changed:
        return
    data = serialize(parsed.header, items, parsed.prefix)
    atomic_write(path, data, backup=path.with_name(path.name + ".blobrefs.bak"))
    report.files_changed.append(str(path))


def blob_references(value: object) -> list[str]:
    """The blob references (``blob:sha256:...``) of every image block in ``value``, in document order."""
    found: list[str] = []
    if isinstance(value, dict):
        data = value.get("data")
        if value.get("type") == "image" and isinstance(data, str) and data.startswith("blob:sha256:"):
            found.append(data)
        for item in value.values():
            found += blob_references(item)
    elif isinstance(value, list):
        for item in value:
            found += blob_references(item)
    return found


def move_blobs(root: Path) -> MoveReport:
    """Copy ``<root>/.blobs/*`` to oh-my-pi's blob folder (checked against their names), then remove them."""
    root = Path(root)
    source = root / BLOB_DIR
    target = BlobStore(root, omp_blob_folder(root))
    report = MoveReport()
    if not source.is_dir():
        return report
    for blob in sorted(source.iterdir()):
        if blob.name.startswith(".") or not blob.is_file() or blob.is_symlink():
            continue
        data = blob.read_bytes()
        if hashlib.sha256(data).hexdigest() != blob.name:
            report.missing.append(f"{blob}: its bytes do not match its name; left where it is")
            continue
        target.put(data)  # atomic, fsynced; a blob already there is kept
        os.unlink(blob)
        report.references += 1
    try:
        source.rmdir()
    except OSError:
        pass  # something was left in it (reported above)
    return report
