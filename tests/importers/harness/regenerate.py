"""Run the three CLIs once and pack what they wrote as the committed fixtures (tests/importers/fixtures/).

    python tests/importers/harness/regenerate.py

Each archive holds the CLI's temporary HOME subtree of session files (``claude/``:
``.claude/projects``; ``codex/``: ``.codex/sessions``; ``opencode/``: ``opencode.db`` with
its ``-wal`` and ``-shm`` as opencode left them) plus ``run.json`` (session id, the paths
relative to the archive). Running it again gives the same content with new ids and times.
"""

from __future__ import annotations

import json
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import clis  # noqa: E402

FIXTURES = HERE.parent / "fixtures"


def pack(name: str, made: dict, folder: Path, base: Path) -> None:
    run = {
        "sessionId": made["sessionId"],
        "path": str(Path(made["path"]).relative_to(base)),
        "project": str(made["project"]),
    }
    FIXTURES.mkdir(exist_ok=True)
    with tarfile.open(FIXTURES / f"{name}.tar.xz", "w:xz") as archive:
        # opencode's folder also holds its logs and repository snapshots: only the database files go in.
        archive.add(
            folder,
            arcname=str(folder.relative_to(base)),
            filter=lambda info: None if Path(info.name).name in ("log", "repos", "memory") else info,
        )
        data = json.dumps(run, indent=1).encode()
        info = tarfile.TarInfo("run.json")
        info.size = len(data)
        import io

        archive.addfile(info, io.BytesIO(data))


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="import-fixtures-"))
    try:
        claude = clis.run_claude(work)
        pack("claude-code", claude, claude["home"] / ".claude" / "projects", claude["home"])
        codex = clis.run_codex(work)
        pack("codex", codex, codex["home"] / ".codex" / "sessions", codex["home"])
        opencode = clis.run_opencode(work)
        pack("opencode", opencode, Path(opencode["path"]).parent, opencode["home"])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for archive in sorted(FIXTURES.glob("*.tar.xz")):
        print(f"{archive}: {archive.stat().st_size} bytes")


if __name__ == "__main__":
    main()
