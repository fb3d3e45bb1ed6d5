"""``session/export``: the path checked, the export made (sidecar/export/), its text or the file written."""

from __future__ import annotations

from pathlib import Path

from .. import wire
from ..errors import InvalidParams
from ..store import Blobs, Session, entry_object


def export(session: Session, params: wire.ExportParams, blobs: Blobs) -> wire.ExportResult:
    from ..export import export_session, write_export  # (loaded on the first export)

    target = Path(params.path).expanduser() if params.path is not None else None
    if target is not None and not target.is_absolute():
        raise InvalidParams("path must be absolute (the sidecar's working folder is not the caller's)", field="path")
    exported = export_session(
        session,
        params.format,
        leaf_id=params.leafId,
        whole_tree=params.all,
        redact=params.redact,
        resolve=lambda e: entry_object(e, blobs),
    )
    report = wire.ExportRedaction(
        applied=exported.redaction.applied,
        total=exported.redaction.total,
        kinds=[wire.RedactionKindCount(kind=c.kind, count=c.count) for c in exported.redaction.kinds],
    )
    size = len(exported.data)  # (what a file of it holds: a lone surrogate is U+FFFD there)
    if target is None:
        return wire.ExportResult(entries=exported.entries, redaction=report, text=exported.text, bytes=size)
    write_export(target, exported.data)
    return wire.ExportResult(entries=exported.entries, redaction=report, path=str(target), bytes=size)
