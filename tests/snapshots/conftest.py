from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from .sidecar_process import Sidecar


@pytest.fixture
def sidecar(sessions_root: Path) -> Iterator[Sidecar]:
    server = Sidecar(sessions_root)
    yield server
    server.stop()
