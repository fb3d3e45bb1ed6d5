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


# SIDECAR_TEST_STORE=postgres (scripts/test.sh's PostgreSQL pass): every sidecar a test starts,
# as a subprocess or as an in-process service, keeps its sessions in a fresh database of its
# own on the test cluster (tests/pg_cluster.py) instead of files below the root.
if os.environ.get("SIDECAR_TEST_STORE") == "postgres":
    from tests.pg_cluster import Cluster

    @pytest.fixture(scope="session")
    def _test_cluster():
        found = Cluster()
        found.start()
        yield found
        found.stop()

    @pytest.fixture(autouse=True)
    def _postgres_store(_test_cluster, monkeypatch):
        import msgspec

        from sidecar import service as service_module

        name, url = _test_cluster.new_database()
        monkeypatch.setenv("SESSION_SIDECAR_DATABASE_URL", url)
        made = []
        original = service_module.SessionService.__init__

        def with_database(self, root, settings=None):
            settings = settings or service_module.Settings()
            if not settings.store.databaseUrl:
                settings = msgspec.structs.replace(
                    settings, store=msgspec.structs.replace(settings.store, databaseUrl=url)
                )
            original(self, root, settings)
            made.append(self)

        monkeypatch.setattr(service_module.SessionService, "__init__", with_database)
        yield
        for service in made:
            try:
                service.store.close_all()
            except Exception:
                pass
        _test_cluster.drop_database(name)
