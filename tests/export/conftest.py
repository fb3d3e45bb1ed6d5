from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from snapshots.sidecar_process import Sidecar

from . import rich


@pytest.fixture
def sidecar(sessions_root: Path) -> Iterator[Sidecar]:
    server = Sidecar(sessions_root)
    yield server
    server.stop()


@pytest.fixture
def rich_session(sidecar: Sidecar, tmp_path: Path) -> tuple[str, dict[str, str]]:
    """The rich session (tests/export/rich.py) made through the real sidecar: (session id, named entry ids)."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    sid = sidecar.call("session/create", cwd=str(project))["sessionId"]
    ids = rich.build(sidecar.append, lambda method, **params: sidecar.call(method, **params), sid)
    return sid, ids


def export(sidecar: Sidecar, sid: str, **params: Any) -> dict[str, Any]:
    return sidecar.call("session/export", sessionId=sid, **params)
