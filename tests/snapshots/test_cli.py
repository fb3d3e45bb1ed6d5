"""``session-sidecar rewind`` and ``session-sidecar diff`` on a session made through a real sidecar."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .sidecar_process import ASSISTANT, USER, Sidecar


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sidecar", *args], capture_output=True, text=True, timeout=120)


def test_rewind_and_diff_commands(sessions_root: Path, tmp_path: Path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.txt").write_text("one\n")
    server = Sidecar(sessions_root)
    sid = server.call("session/create", cwd=str(project))["sessionId"]
    first = server.append(sid, USER)
    server.call("session/snapshot", sessionId=sid)
    (project / "a.txt").write_text("two\n")
    (project / "b.txt").write_text("new\n")
    second = server.append(sid, ASSISTANT)
    server.call("session/snapshot", sessionId=sid)
    server.stop()
    root = ["--root", str(sessions_root)]

    diff = cli("diff", sid, first, second, "--patch", *root)
    assert diff.returncode == 0, diff.stderr
    assert "M a.txt (+1 -1)" in diff.stdout and "A b.txt (+1 -0)" in diff.stdout
    assert "-one\n+two\n" in diff.stdout

    dry = cli("rewind", sid, first, "--files", "--dry-run", *root)
    assert dry.returncode == 0, dry.stderr
    assert "M a.txt" in dry.stdout and "D b.txt" in dry.stdout and "dry run" in dry.stdout
    assert (project / "a.txt").read_text() == "two\n"

    done = cli("rewind", sid, first, "--files", "--json", *root)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["restored"] == ["a.txt"] and result["removed"] == ["b.txt"]
    assert (project / "a.txt").read_text() == "one\n" and not (project / "b.txt").exists()

    (project / "a.txt").write_text("by hand\n")
    refused = cli("rewind", sid, result["undoEntryId"], "--files", *root)
    assert refused.returncode == 1
    assert "changed outside the agent" in refused.stderr and "a.txt" in refused.stderr
    assert (project / "a.txt").read_text() == "by hand\n"

    missing = cli("diff", sid, "nosuchentry", "worktree", *root)
    assert missing.returncode == 1 and "nosuchentry" in missing.stderr
