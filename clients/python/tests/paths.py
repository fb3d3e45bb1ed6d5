"""Where the repository's protocol files are, and how to start a real sidecar."""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SCHEMA_PATH = REPO / "protocol" / "schema.json"
VECTORS_DIR = REPO / "protocol" / "vectors"


def sidecar_command() -> list[str]:
    configured = os.environ.get("SESSION_SIDECAR_TEST_COMMAND")
    if configured:
        return shlex.split(configured)
    if os.environ.get("SESSION_SIDECAR_BIN"):
        return [os.environ["SESSION_SIDECAR_BIN"]]
    if importlib.util.find_spec("sidecar") is not None:
        return [sys.executable, "-m", "sidecar"]
    found = shutil.which("session-sidecar")
    if found is None:
        pytest.fail("no sidecar to test against: install session-sidecar or set SESSION_SIDECAR_TEST_COMMAND")
    return [found]
