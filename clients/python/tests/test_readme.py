"""The README's example runs as written, with session-sidecar found on PATH."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

from .paths import REPO, sidecar_command

README = REPO / "clients" / "python" / "README.md"


def test_the_readme_example_runs_as_written(tmp_path: Path):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    assert blocks, "no python example in the README"
    example = tmp_path / "example.py"
    example.write_text(blocks[0])
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "session-sidecar"
    launcher.write_text("#!/bin/sh\nexec " + " ".join(f"'{part}'" for part in sidecar_command()) + ' "$@"\n')
    launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR)
    package_parent = str(REPO / "clients" / "python")
    env = {**os.environ, "PATH": str(bin_dir), "PYTHONPATH": package_parent}
    run = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path
    )
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "['user', 'assistant', 'toolResult', 'assistant']"
    assert "progress: begin" in lines and "progress: end" in lines
    assert any(re.fullmatch(r"2 sessions; fork \S+", line) for line in lines)
    assert lines[-1] == "-33001 sessionNotFound"


def test_the_readme_subscription_example_runs_as_written(tmp_path: Path):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    example = next(block for block in blocks if "SidecarServer" in block)
    (tmp_path / "subscribe.py").write_text(example)
    env = {**os.environ, "SESSION_SIDECAR_BIN": sidecar_command()[0], "PYTHONPATH": str(REPO / "clients" / "python")}
    if len(sidecar_command()) > 1:  # python -m sidecar: a launcher the variable can name
        launcher = tmp_path / "session-sidecar"
        launcher.write_text("#!/bin/sh\nexec " + " ".join(f"'{part}'" for part in sidecar_command()) + ' "$@"\n')
        launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR)
        env["SESSION_SIDECAR_BIN"] = str(launcher)
    run = subprocess.run(
        [sys.executable, "subscribe.py"], capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines() == ["observer heard ['message']"]
