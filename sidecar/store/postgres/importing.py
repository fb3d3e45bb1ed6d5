"""``session/import`` into PostgreSQL: an imported session's lines stored as one new session, in one transaction.

The importers (``sidecar/importers/``) give pi entries, parents first. They become the very lines the file store
would write for them (its header with ``importedFrom``, each entry as append stores it, over-long strings cut),
and those lines go in as ``migrate`` puts a file in: the session row with its listing fields and every line, all
or nothing. A session already there under that id is left alone and named, so a second import finds it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from ...format.jsonl import Entry
from ...format.version import CURRENT_VERSION
from ..encoded import stored_entries
from ..files.layout import Layout, file_name
from .db import Database
from .rows import Fold, Placement, fold_lines, split_file
from .transfer import ImportReport, _import_session

LOCATION_PREFIX = "pg:"


def existing_place(db: Database, session_id: str) -> str | None:
    row = db.read(
        lambda conn: conn.execute(
            "SELECT area, folder, file_name FROM sidecar_sessions WHERE id = %s", (session_id,)
        ).fetchone(),
        f"look for session {session_id}",
    )
    return None if row is None else LOCATION_PREFIX + Placement(row[0], row[1], row[2]).relative


def import_entries(
    db: Database,
    layout: Layout,
    session_id: str,
    cwd: str,
    timestamp: str,
    header_fields: Mapping[str, object],
    objs: list[dict[str, object]],
) -> tuple[str, bool]:
    """(the new session's place, True); or (the place of the one there already with that id, False)."""
    header = {
        "type": "session",
        "version": CURRENT_VERSION,
        "id": session_id,
        "timestamp": timestamp,
        "cwd": cwd,
        **header_fields,
    }
    # as append stores them: over-long strings cut (images stay inline here)
    lines = [Entry.from_obj(header).raw, *(entry.raw for entry in stored_entries(objs, None))]
    data = b"".join(line + b"\n" for line in lines)
    split, tail = split_file(data)
    fold = Fold()
    ids, texts = fold_lines(fold, split, 0)
    placement = Placement("live", layout.cwd_dir(cwd).name, file_name(timestamp, session_id))
    report = ImportReport()
    _import_session(
        db, session_id, placement, split, tail, fold, ids, texts, int(time.time() * 1000), None, data, report
    )
    if report.imported:
        return LOCATION_PREFIX + placement.relative, True
    # Written meanwhile by another sidecar (or there already): that one is the import.
    found = existing_place(db, session_id)
    return (found or ""), False
