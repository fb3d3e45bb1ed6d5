"""A session file with snapshot entries and a rewind on it, written by our service on a real folder (for pi to read)."""

from __future__ import annotations

from pathlib import Path

from sidecar import wire
from sidecar.service import SessionService


def _message(role: str, text: str) -> dict:
    content = text if role == "user" else [{"type": "text", "text": text}]
    return {"type": "message", "message": {"role": role, "content": content}}


def rewound_session(work: Path) -> tuple[Path, list[str]]:
    """Snapshots, a label, a name, a rewind with files and a new branch after it; the file and every entry id."""
    project, root = work / "snapshot-project", work / "snapshot-sessions"
    project.mkdir(parents=True)
    (project / "a.txt").write_text("one\n")
    svc = SessionService(root)
    sid = svc.create(wire.CreateParams(cwd=str(project))).sessionId
    first = svc.append(wire.AppendParams(sessionId=sid, entries=[_message("user", "edit a.txt")])).entries[0].id
    svc.snapshot(wire.SnapshotParams(sessionId=sid))
    (project / "a.txt").write_text("two\n")
    svc.append(wire.AppendParams(sessionId=sid, entries=[_message("assistant", "edited")]))
    svc.snapshot(wire.SnapshotParams(sessionId=sid))
    svc.set_label(wire.SetLabelParams(sessionId=sid, entryId=first, label="before the edit"))
    svc.set_name(wire.SetNameParams(sessionId=sid, name="rewound"))
    result = svc.rewind(wire.RewindParams(sessionId=sid, entryId=first, files=True))
    assert result.restored == ["a.txt"] and (project / "a.txt").read_text() == "one\n"
    svc.append(wire.AppendParams(sessionId=sid, entries=[_message("assistant", "on the new branch")]))
    svc.snapshot(wire.SnapshotParams(sessionId=sid))
    path = svc.session(sid).path
    ids = [e.id for e in svc.session(sid).tree.entries]
    svc.close_all()
    return path, ids  # type: ignore[return-value]
