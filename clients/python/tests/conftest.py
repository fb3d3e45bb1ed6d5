"""Fixtures: the command that starts a real sidecar, a sessions root, a spawned client.

The sidecar is never mocked. By default the tests run ``python -m sidecar``
with this interpreter when the ``sidecar`` package is importable (fast, no
PATH shims), else ``session-sidecar`` from PATH; set
``SESSION_SIDECAR_TEST_COMMAND`` (a shell-style command line) to test another build.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from session_sidecar_client import SidecarClient

from .paths import sidecar_command


@pytest.fixture
def command() -> list[str]:
    return sidecar_command()


@pytest.fixture
def sessions_root(tmp_path: Path) -> Path:
    root = tmp_path / "sessions"
    root.mkdir()
    return root


@pytest.fixture
async def client(command: list[str], sessions_root: Path) -> AsyncIterator[SidecarClient]:
    """An initialized client on a fresh sidecar serving ``sessions_root``; closed (and checked) after the test."""
    sidecar = await SidecarClient.spawn(command=command, session_root=sessions_root)
    try:
        yield sidecar
    finally:
        code = await sidecar.close()
    assert code == 0, f"the sidecar exited with {code}"
