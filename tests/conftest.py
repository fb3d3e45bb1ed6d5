from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LOCAL_FIXTURES = Path(__file__).resolve().parent / "fixtures"
# Real session files pi wrote (v1, one with legacy compactions), kept in the repository so a clone alone passes.
PI_FIXTURES = LOCAL_FIXTURES / "pi"


@pytest.fixture
def core_restored() -> Iterator[None]:
    """For tests that switch between the Python and the compiled core: the process's choice is put back."""
    from sidecar import corepath

    before = corepath.chosen()
    yield
    corepath.choose(before)


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
    from sidecar.store.files import treecache

    jsonl.MAP_THRESHOLD = 0
    treecache.MIN_CACHED_BYTES = 0


# SIDECAR_TEST_STORE=postgres (scripts/test.sh's PostgreSQL pass): every sidecar a test starts,
# as a subprocess or as an in-process service, keeps its sessions in a fresh database of its
# own on the test cluster (tests/pg_cluster.py) instead of files below the root.
if os.environ.get("SIDECAR_TEST_STORE") == "postgres":
    from pg_cluster import Cluster

    @pytest.fixture(scope="session")
    def _test_database():
        """One database for the run; each test gets a schema of its own in it (much quicker to make than a database)."""
        import psycopg

        found = Cluster()
        found.start()
        name, url = found.new_database()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public")
        yield url
        found.drop_database(name)
        found.stop()

    def _new_schema(database_url: str) -> tuple[str, str]:
        import uuid

        import psycopg

        schema = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')
        return schema, f"{database_url}?options=-csearch_path%3D{schema},public"

    def _drop_schema(database_url: str, schema: str) -> None:
        import psycopg

        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')

    def _use_database(monkeypatch, url: str) -> list:
        """Every service made while ``monkeypatch`` holds keeps its sessions at ``url``; the services made."""
        import msgspec

        from sidecar import service as service_module
        from sidecar.config import Settings

        monkeypatch.setenv("SESSION_SIDECAR_DATABASE_URL", url)
        made = []
        original = service_module.SessionService.__init__

        def with_database(self, root, settings=None):
            settings = settings or Settings()  # (sidecar.service is a package now: Settings is config's)
            if not settings.store.databaseUrl:
                settings = msgspec.structs.replace(
                    settings, store=msgspec.structs.replace(settings.store, databaseUrl=url)
                )
            original(self, root, settings)
            made.append(self)

        monkeypatch.setattr(service_module.SessionService, "__init__", with_database)
        # A session's bytes at its location (``pg:<area>/<folder>/<file>``), as export-root writes them:
        # tests that read a session's file read the same bytes from the database.
        read_bytes, read_text, exists, is_file = Path.read_bytes, Path.read_text, Path.exists, Path.is_file

        # A held session's ``Session.path`` (``/nonexistent/postgresql/<area>/<folder>/<file>``) names the same place.
        from sidecar.store.postgres.session import NO_FILE

        def in_database(path: Path) -> str | None:
            text = str(path)
            if text.startswith("pg:"):
                return text[3:]
            return text[len(str(NO_FILE)) + 1 :] if text.startswith(str(NO_FILE) + "/") else None

        def stored(path: Path) -> bytes | None:
            relative = in_database(path)
            return _stored_bytes(url, relative) if relative is not None else None

        def pg_read_bytes(self):
            if in_database(self) is None:
                return read_bytes(self)
            return _found(self, stored(self))

        def pg_read_text(self, encoding=None, errors=None):
            if in_database(self) is None:
                return read_text(self, encoding, errors)
            return _found(self, stored(self)).decode(encoding or "utf-8", errors or "strict")

        monkeypatch.setattr(Path, "read_bytes", pg_read_bytes)
        monkeypatch.setattr(Path, "read_text", pg_read_text)
        monkeypatch.setattr(
            Path,
            "exists",
            lambda self, **kw: stored(self) is not None if in_database(self) is not None else exists(self, **kw),
        )
        monkeypatch.setattr(
            Path, "is_file", lambda self: stored(self) is not None if in_database(self) is not None else is_file(self)
        )
        return made

    def _close_services(made: list) -> None:
        for service in made:
            try:
                service.store.close_all()
            except Exception:
                pass

    @pytest.fixture(scope="module", autouse=True)
    def _postgres_module_store(request, _test_database):
        """A module that sets ``ONE_STORE_PER_MODULE = True`` makes services in module-scoped fixtures (a parity
        module writes its sessions once, its tests read them): the whole module shares one schema, put in place
        before those fixtures run (autouse fixtures come first within a scope), so they write to PostgreSQL too."""
        if not getattr(request.module, "ONE_STORE_PER_MODULE", False):
            yield None
            return
        schema, url = _new_schema(_test_database)
        patches = pytest.MonkeyPatch()
        made = _use_database(patches, url)
        yield url
        _close_services(made)
        patches.undo()
        _drop_schema(_test_database, schema)

    @pytest.fixture(autouse=True)
    def _postgres_store(_test_database, _postgres_module_store, monkeypatch):
        if _postgres_module_store is not None:  # the module's own schema (see above)
            schema, url = None, _postgres_module_store
        else:
            schema, url = _new_schema(_test_database)
        made = _use_database(monkeypatch, url)
        yield
        _close_services(made)
        if schema is not None:
            _drop_schema(_test_database, schema)

    def _found(path, data):
        if data is None:
            raise FileNotFoundError(2, "no such session in the database", str(path))
        return data

    def _stored_bytes(url: str, relative: str) -> bytes | None:
        import psycopg

        parts = relative.split("/")
        area = {".archive": "archive", ".trash": "trash"}.get(parts[0], "live")
        if area != "live":
            parts = parts[1:]
        if len(parts) != 2:
            return None
        with psycopg.connect(url) as conn:
            row = conn.execute(
                "SELECT id, tail FROM sidecar_sessions WHERE area = %s AND folder = %s AND file_name = %s",
                (area, parts[0], parts[1]),
            ).fetchone()
            if row is None:  # a file beside the sessions (a migration's .bak, a .torn aside)
                kept = conn.execute("SELECT data FROM sidecar_files WHERE path = %s", (relative,)).fetchone()
                return bytes(kept[0]) if kept else None
            lines = [
                bytes(r[0])
                for r in conn.execute("SELECT line FROM sidecar_lines WHERE session_id = %s ORDER BY seq", (row[0],))
            ]
        return (b"\n".join(lines) + b"\n" if lines else b"") + bytes(row[1])


# Tests left out of the PostgreSQL pass (see the file's head): a line with a reason after ``#`` is
# kept out on purpose, one without is not triaged yet; the pass says how many of each.
_NOT_ON_POSTGRES = Path(__file__).resolve().parent / "postgres" / "not_on_postgres.txt"


def pytest_collection_modifyitems(config, items):
    if os.environ.get("SIDECAR_TEST_STORE") != "postgres":
        return
    named: dict[str, bool] = {}  # node id -> has a reason
    for line in _NOT_ON_POSTGRES.read_text(encoding="utf-8").splitlines():
        node, _, reason = line.partition("#")
        if node.strip():
            named[node.strip()] = bool(reason.strip())
    kept, left = [], []
    for item in items:
        (left if item.nodeid in named else kept).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept
        config._not_on_postgres = (  # type: ignore[attr-defined]
            sum(named[item.nodeid] for item in left),
            sum(not named[item.nodeid] for item in left),
        )


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    with_reason, untriaged = getattr(config, "_not_on_postgres", (0, 0))
    if with_reason or untriaged:
        terminalreporter.write_line(
            f"PostgreSQL pass: {with_reason + untriaged} tests left out and run on the file store only: "
            f"{with_reason} kept out with a reason (most test the file store itself), {untriaged} not triaged yet "
            f"(tests/postgres/not_on_postgres.txt)"
        )
