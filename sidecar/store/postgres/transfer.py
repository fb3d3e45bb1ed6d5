"""Moving a whole sessions root between the file store and PostgreSQL.

``import_root`` (``session-sidecar migrate --from ROOT --database-url URL``)
reads every session of a root (live, archived, in the trash), its blobs, and
the other files of its project folders (a ``.torn`` aside, a ``.bak`` kept by
a migration), each session in a transaction of its own. A second run finds
every session there with the same bytes and changes nothing; a run killed
halfway left whole sessions only, and the next run imports the rest.

``export_root`` (``session-sidecar export-root``) writes the same layout back:
an imported root, exported, is byte-identical to the original. Folders that
only this host's sidecar uses (``.index``, ``.terminals``, ``.snapshots``) are
neither imported nor exported: they are rebuilt, or belong to one host.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import psycopg

from ..files.layout import ARCHIVE_DIR, TRASH_DIR
from ..files.writer import atomic_write, ensure_dir
from ..ids import valid_session_id
from ..payload import BLOB_DIR
from .db import Database
from .lines import insert_lines
from .rows import Fold, Placement, fold_lines, fold_text, id_of_file_name, join_file, split_file

AREAS = {"live": "", "archive": ARCHIVE_DIR, "trash": TRASH_DIR}


@dataclass(slots=True)
class ImportReport:
    imported: int = 0
    unchanged: int = 0
    replaced: int = 0
    blobs: int = 0
    files: int = 0
    skipped: list[str] = field(default_factory=list)  # why, path by path


def _session_files(root: Path) -> list[tuple[Placement, Path]]:
    found = []
    for area, sub in AREAS.items():
        base = root / sub if sub else root
        if not base.is_dir():
            continue
        for folder in sorted(base.iterdir()):
            if folder.name.startswith(".") or not folder.is_dir() or folder.is_symlink():
                continue
            for path in sorted(folder.iterdir()):
                if path.is_file() and not path.is_symlink():
                    found.append((Placement(area, folder.name, path.name), path))
    return found


def import_root(db: Database, root: Path) -> ImportReport:
    report = ImportReport()
    root = Path(root)
    for placement, path in _session_files(root):
        data = path.read_bytes()
        if not path.name.endswith(".jsonl"):
            _import_file(db, placement.relative, path, data, report)
            continue
        lines, tail = split_file(data)
        fold = Fold()
        ids, texts = fold_lines(fold, lines, 0)
        session_id = fold.session_id or id_of_file_name(path.name) or ""
        if not fold.has_header or not valid_session_id(session_id):
            # Not a session pi or we would open: kept as a plain file, so the export gives it back.
            _import_file(db, placement.relative, path, data, report)
            report.skipped.append(f"{placement.relative}: no session header; kept as a plain file")
            continue
        st = path.stat()
        # A trashed file's ctime is when it was moved there (empty-trash --older-than counts from it).
        trashed_ms = st.st_ctime_ns // 1_000_000 if placement.area == "trash" else None
        _import_session(
            db,
            session_id,
            placement,
            lines,
            tail,
            fold,
            ids,
            texts,
            st.st_mtime_ns // 1_000_000,
            trashed_ms,
            data,
            report,
        )
    blobs = root / BLOB_DIR
    if blobs.is_dir():
        for blob in sorted(blobs.iterdir()):
            if blob.name.startswith(".") or not blob.is_file() or blob.is_symlink():
                continue
            data = blob.read_bytes()
            if hashlib.sha256(data).hexdigest() != blob.name:
                _import_file(db, f"{BLOB_DIR}/{blob.name}", blob, data, report)
                continue
            db.run(
                lambda conn: conn.execute(
                    # Stored when its file was last written or reused (the blob's grace hour counts from it).
                    "INSERT INTO sidecar_blobs (digest, data, stored_ms) VALUES (%s, %s, %s) "
                    "ON CONFLICT (digest) DO NOTHING",
                    (blob.name, data, blob.stat().st_mtime_ns // 1_000_000),
                ),
                "import a blob",
            )
            report.blobs += 1
    # Fresh statistics, so the planner walks the listing's index instead of sorting every session.
    db.run(lambda conn: conn.execute("ANALYZE sidecar_sessions, sidecar_lines, sidecar_texts"), "analyze")
    return report


def _import_file(db: Database, relative: str, path: Path, data: bytes, report: ImportReport) -> None:
    mode = stat.S_IMODE(path.stat().st_mode)
    db.run(
        lambda conn: conn.execute(
            "INSERT INTO sidecar_files (path, mode, data) VALUES (%s, %s, %s) "
            "ON CONFLICT (path) DO UPDATE SET mode = excluded.mode, data = excluded.data",
            (relative, mode, data),
        ),
        f"import {relative}",
    )
    report.files += 1


def _import_session(
    db: Database,
    session_id: str,
    placement: Placement,
    lines: list[bytes],
    tail: bytes,
    fold: Fold,
    ids: list[str | None],
    texts: list[tuple[int, str]],
    mtime_ms: int,
    trashed_ms: int | None,
    data: bytes,
    report: ImportReport,
) -> None:
    def run(conn: psycopg.Connection) -> str:
        with conn.transaction():
            row = conn.execute(
                "SELECT area, folder, file_name, line_count, tail, lease_owner, lease_expires > now() "
                "FROM sidecar_sessions WHERE id = %s FOR UPDATE",
                (session_id,),
            ).fetchone()
            if row is not None:
                if (row[0], row[1], row[2]) != (placement.area, placement.folder, placement.file_name):
                    return (
                        f"{placement.relative}: session {session_id} is in the database already as "
                        f"{Placement(row[0], row[1], row[2]).relative}; not imported"
                    )
                same = row[3] == len(lines) and bytes(row[4]) == tail and _same_lines(conn, session_id, lines)
                if same:
                    return "unchanged"
                if row[5] is not None and row[6]:
                    return f"{placement.relative}: session {session_id} is held by a sidecar ({row[5]}); not replaced"
                # No foreign keys (schema version 2): its lines and texts go with it explicitly.
                for table in ("sidecar_lines", "sidecar_texts"):
                    conn.execute(f"DELETE FROM {table} WHERE session_id = %s", (session_id,))
                conn.execute("DELETE FROM sidecar_sessions WHERE id = %s", (session_id,))
            conn.execute(
                "INSERT INTO sidecar_sessions (id, area, folder, file_name, cwd, created, parent_session, title, titled, "
                "name, first_message, message_count, last_activity, modified_ms, tokens_total, tokens_last, "
                "line_count, tail, name_folded, title_folded, trashed_ms) VALUES (%(id)s, %(area)s, %(folder)s, "
                "%(file_name)s, %(cwd)s, %(created)s, %(parent_session)s, %(title)s, %(titled)s, %(name)s, %(first_message)s, "
                "%(message_count)s, %(last_activity)s, %(modified_ms)s, %(tokens_total)s, %(tokens_last)s, "
                "%(line_count)s, %(tail)s, %(name_folded)s, %(title_folded)s, %(trashed_ms)s)",
                {
                    "id": session_id,
                    "area": placement.area,
                    "folder": placement.folder,
                    "file_name": placement.file_name,
                    "cwd": fold.cwd,
                    "created": fold.created,
                    "parent_session": fold.parent_session,
                    "title": fold.title,
                    "titled": fold.titled,
                    "line_count": len(lines),
                    "tail": tail,
                    "title_folded": fold_text(fold.title),
                    "trashed_ms": trashed_ms,
                    **fold.columns(mtime_ms),
                },
            )
            insert_lines(conn, session_id, 0, lines, ids, texts)
            return "replaced" if row is not None else "imported"

    outcome = db.run(run, f"import {placement.relative}")
    if outcome == "imported":
        report.imported += 1
    elif outcome == "replaced":
        report.replaced += 1
    elif outcome == "unchanged":
        report.unchanged += 1
    else:
        report.skipped.append(outcome)


def _same_lines(conn: psycopg.Connection, session_id: str, lines: list[bytes]) -> bool:
    digest = hashlib.sha256()
    for line in lines:
        digest.update(line + b"\n")
    row = conn.execute(
        "SELECT encode(sha256(coalesce(string_agg(line || '\\x0a'::bytea, ''::bytea ORDER BY seq), ''::bytea)), 'hex') "
        "FROM sidecar_lines WHERE session_id = %s",
        (session_id,),
    ).fetchone()
    return row is not None and row[0] == digest.hexdigest()


@dataclass(slots=True)
class ExportReport:
    sessions: int = 0
    blobs: int = 0
    files: int = 0


def export_root(db: Database, target: Path) -> ExportReport:
    """Write every session, blob and kept file into ``target`` as a file root (files there are replaced)."""
    report = ExportReport()
    target = Path(target)
    ensure_dir(target)
    ids = db.read(lambda conn: [r[0] for r in conn.execute("SELECT id FROM sidecar_sessions ORDER BY id")])
    for session_id in ids:

        def read(conn: psycopg.Connection, session_id: str = session_id) -> tuple[Placement, bytes] | None:
            with conn.transaction():
                row = conn.execute(
                    "SELECT area, folder, file_name, tail FROM sidecar_sessions WHERE id = %s", (session_id,)
                ).fetchone()
                if row is None:
                    return None
                lines = [
                    bytes(r[0])
                    for r in conn.execute(
                        "SELECT line FROM sidecar_lines WHERE session_id = %s ORDER BY seq", (session_id,)
                    )
                ]
                return Placement(row[0], row[1], row[2]), join_file(lines, bytes(row[3]))

        found = db.read(read, f"export session {session_id}")
        if found is None:  # removed meanwhile
            continue
        placement, data = found
        _write(target, placement.relative, data, 0o600)
        report.sessions += 1
    digests = db.read(lambda conn: [r[0] for r in conn.execute("SELECT digest FROM sidecar_blobs ORDER BY digest")])
    for digest in digests:
        data = db.read(partial(_blob_data, digest))
        _write(target, f"{BLOB_DIR}/{digest}", data, 0o600)
        report.blobs += 1
    for path, mode, data in db.read(
        lambda conn: conn.execute("SELECT path, mode, data FROM sidecar_files ORDER BY path").fetchall()
    ):
        _write(target, path, bytes(data), mode)
        report.files += 1
    return report


def _blob_data(digest: str, conn: psycopg.Connection) -> bytes:
    row = conn.execute("SELECT data FROM sidecar_blobs WHERE digest = %s", (digest,)).fetchone()
    return bytes(row[0])  # type: ignore[index]  # the digest was just listed: its row is there


def _write(target: Path, relative: str, data: bytes, mode: int) -> None:
    parts = Path(relative).parts
    if Path(relative).is_absolute() or ".." in parts:
        raise ValueError(f"refusing to write {relative!r} outside {target}")
    path = target.joinpath(*parts)
    ensure_dir(path.parent)
    if path.is_file() and path.read_bytes() == data:
        return
    atomic_write(path, data)
    os.chmod(path, mode)
