"""``session-sidecar export`` and ``session-sidecar view`` on a session made through a real sidecar."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from . import rich


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sidecar", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def test_export_to_stdout_and_to_a_file(sidecar, rich_session, sessions_root: Path, tmp_path: Path):
    sid, ids = rich_session
    sidecar.stop()  # the command's own sidecar takes the session's lock
    root = ["--root", str(sessions_root)]
    shown = cli("export", sid, "--format", "markdown", *root)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("# Login bug hunt") and "rotating the signing key" in shown.stdout
    assert rich.AWS_KEY not in shown.stdout
    assert "secrets redacted: aws-access-key x2" in shown.stderr
    assert rich.AWS_KEY not in shown.stderr

    target = tmp_path / "tree.json"
    written = cli("export", sid, "-f", "json", "--all", "-o", str(target), *root)
    assert written.returncode == 0, written.stderr
    assert written.stdout == "" and f"to {target}" in written.stderr
    doc = json.loads(target.read_text())
    assert doc["scope"] == "tree" and {e["id"] for e in doc["entries"]} >= {ids["main_leaf"], ids["other_leaf"]}

    plain = cli("export", sid, "--leaf", ids["main_leaf"], "--no-redact", *root)
    assert plain.returncode == 0 and rich.AWS_KEY in plain.stdout and "Fix the cookie then." in plain.stdout
    assert "NOT redacted" in plain.stderr

    missing = cli("export", "no-such-session", *root)
    assert missing.returncode == 1 and "no-such-session" in missing.stderr


def test_view_writes_the_page_and_prints_its_path(sidecar, rich_session, sessions_root: Path, tmp_path: Path):
    sid, _ = rich_session
    sidecar.stop()
    cache = tmp_path / "cache"
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$1" > {opened}\n')
    browser.chmod(0o755)
    viewed = cli("view", sid, "--root", str(sessions_root), env={"XDG_CACHE_HOME": str(cache), "BROWSER": str(browser)})
    assert viewed.returncode == 0, viewed.stderr
    page = Path(viewed.stdout.strip())
    assert page == cache / "session-sidecar" / "view" / f"{sid}.html"
    assert page.read_text().startswith("<!DOCTYPE html>") and rich.AWS_KEY not in page.read_text()
    deadline = time.monotonic() + 10  # the browser command is started, not waited for
    while not opened.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert opened.read_text().strip() == page.as_uri()
