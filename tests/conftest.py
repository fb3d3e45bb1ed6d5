from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PI_FIXTURES = REPO.parent / "shared" / "fixtures" / "pi"
LOCAL_FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def sessions_root(tmp_path: Path) -> Path:
    root = tmp_path / "sessions"
    root.mkdir()
    return root
