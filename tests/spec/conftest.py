from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import SpecServer


@pytest.fixture
async def spec(sessions_root: Path):
    server = await SpecServer.start(sessions_root)
    yield server
    await server.stop()
