from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .sidecar_process import Sidecar


@pytest.fixture
def sidecar(sessions_root: Path) -> Iterator[Sidecar]:
    server = Sidecar(sessions_root)
    yield server
    server.stop()
