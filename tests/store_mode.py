"""Which store the sessions of this test run live in, and the few things that legitimately differ.

``SIDECAR_TEST_STORE=postgres`` (scripts/test.sh's PostgreSQL pass) puts every session of every
sidecar a test starts in PostgreSQL (tests/conftest.py). A test that seeds a session by writing a
pi file below the root, or that reads what was stored as files, goes through these helpers so it
asserts the same behaviour on both stores: seed files are brought in as a user would bring a root
in (``session-sidecar migrate``), and the stored sessions are read back as ``export-root`` writes
them (byte for byte the file store's files, PROTOCOL.md "PostgreSQL store").
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ON_POSTGRES = os.environ.get("SIDECAR_TEST_STORE") == "postgres"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "sidecar", *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"session-sidecar {args[0]}: {done.stdout}{done.stderr}"
    return done


def bring_in(root: Path) -> None:
    """Pi files written below ``root`` as a test's seed become sessions of the store (on PostgreSQL: migrated)."""
    if ON_POSTGRES:
        _cli("migrate", "--from", str(root), "--database-url", os.environ["SESSION_SIDECAR_DATABASE_URL"])


def place(root: Path, path: Path) -> str:
    """What ``session/open`` takes as ``path`` for the session that file ``path`` below ``root`` was seeded as."""
    return "pg:" + path.relative_to(root).as_posix() if ON_POSTGRES else str(path)


def stored_root(root: Path, scratch: Path) -> Path:
    """The store's sessions as a pi root: ``root`` itself, or on PostgreSQL ``export-root`` written to ``scratch``."""
    if not ON_POSTGRES:
        return root
    if scratch.exists():
        import shutil

        shutil.rmtree(scratch)
    _cli("export-root", "--database-url", os.environ["SESSION_SIDECAR_DATABASE_URL"], "--to", str(scratch))
    return scratch


def stored_state(root: Path, scratch: Path) -> dict[str, str]:
    """Every file of the store with a hash of its bytes: below ``root``, and on PostgreSQL also the
    sessions as ``export-root`` writes them (what a test means by "nothing was written")."""
    import hashlib

    def hashes(base: Path, prefix: str) -> dict[str, str]:
        return {
            prefix + str(path.relative_to(base)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(base.rglob("*"))
            if path.is_file()
        }

    found = hashes(root, "")
    if ON_POSTGRES:
        found.update(hashes(stored_root(root, scratch), "pg:"))
    return found


def pi_file(location: str | Path, scratch: Path) -> Path:
    """The file pi is given for a session at ``location``: that file, or for a PostgreSQL place (``pg:...``) the
    file ``export-root`` writes for it below ``scratch`` (exported once per scratch folder: export after writing)."""
    text = str(location)
    if not text.startswith("pg:"):
        return Path(text)
    if not scratch.exists():
        stored_root(scratch.parent, scratch)
    return scratch / text[len("pg:") :]
