"""Edits git's stat check alone would miss: same size, same inode, in the same instant as the snapshot."""

from __future__ import annotations

from pathlib import Path

from sidecar import wire
from sidecar.service import SessionService


def test_same_size_edits_right_after_a_snapshot_are_seen(tmp_path: Path):
    project = tmp_path / "project"
    project.mkdir()
    service = SessionService(tmp_path / "sessions")
    sid = service.create(wire.CreateParams(cwd=str(project))).sessionId
    for round_ in range(20):
        (project / "a.txt").write_text("one\n")
        at = (
            service.append(
                wire.AppendParams(
                    sessionId=sid,
                    entries=[{"type": "message", "message": {"role": "user", "content": f"round {round_}"}}],
                )
            )
            .entries[0]
            .id
        )
        service.snapshot(wire.SnapshotParams(sessionId=sid))
        (project / "a.txt").write_text("two\n")  # same size, rewritten in place, within the same tick
        diff = service.diff(wire.DiffParams(sessionId=sid, from_=at, to="worktree"))
        assert [f.path for f in diff.files] == ["a.txt"], round_
        rewound = service.rewind(wire.RewindParams(sessionId=sid, entryId=at, files=True, force=True))
        assert rewound.restored == ["a.txt"], round_
        assert (project / "a.txt").read_text() == "one\n"
        (project / "a.txt").write_text("two\n")
        assert service.snapshot(wire.SnapshotParams(sessionId=sid)).changedFiles == 1, round_
    service.close_all()
