"""Fixtures of the import tests: the three real CLIs run once per test session, and a real sidecar to ask.

``fresh`` runs Codex 0.169.0, Claude Code 2.1.331 and opencode 1.18.33 (pinned in
harness/package-lock.json, installed by ``npm ci`` when node_modules lacks them)
offline against the scripted model server, each in its own temporary HOME: the files
imported are the ones those CLIs write today, new ids and times on every run.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "harness"))

import clis  # noqa: E402


@pytest.fixture(scope="session")
def fresh() -> Any:
    """The three CLIs' session files from one scripted run each (run side by side)."""
    work = Path(tempfile.mkdtemp(prefix="import-harness-"))
    clis.ensure_installed()
    with ThreadPoolExecutor(3) as pool:
        runs = {name: pool.submit(getattr(clis, f"run_{name}"), work) for name in ("claude", "codex", "opencode")}
        made = {name: run.result() for name, run in runs.items()}
    yield made
    shutil.rmtree(work, ignore_errors=True)
