from __future__ import annotations

import os
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



# SIDECAR_TEST_MAP_ALL=1 runs the in-process tests with every session file
# mapped and read back by offset, and every session given a tree cache, as
# only files of 256 KiB and more are otherwise (scripts/test.sh runs the store,
# context, format, compaction and parity tests a second time this way).
if os.environ.get("SIDECAR_TEST_MAP_ALL") == "1":
    from sidecar.format import jsonl
    from sidecar.store import treecache

    jsonl.MAP_THRESHOLD = 0
    treecache.MIN_CACHED_BYTES = 0
