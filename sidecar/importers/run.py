"""``session/import`` and ``session-sidecar import``: find the sources, import each, write it as a pi session.

A session imported before (same tool, same original id: the same derived session id)
is found and reported, never written twice. Each new session is written through
the store like any other: one batch of entries whose parents all precede them, the
header carrying ``importedFrom`` (tool, original id, path).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from .. import wire
from ..errors import ImportSourceNotFound, ImportSourceUnreadable, InvalidParams
from ..format.cycles import cycles_paused
from . import TOOLS
from .common import Imported, id_of, timestamp_of

if TYPE_CHECKING:
    from ..store import SessionStore


def _claude_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    # A project folder holds <session>.jsonl files; subagent transcripts live in <session>/subagents/.
    found = sorted(p for p in path.glob("*.jsonl") if p.is_file())
    if not found:
        found = sorted(p for p in path.glob("*/*.jsonl") if p.is_file() and p.parent.name != "subagents")
    return found


def _codex_files(path: Path) -> list[Path]:
    files = [path] if path.is_file() else sorted(path.rglob("rollout-*.jsonl"))
    if path.is_file():
        return files
    out = []
    for candidate in files:  # a subagent's rollout comes in with its parent's
        try:
            with open(candidate, "rb") as handle:
                payload = (json.loads(handle.readline() or b"{}") or {}).get("payload") or {}
        except (OSError, ValueError):
            payload = {}
        if not payload.get("parent_thread_id"):
            out.append(candidate)
    return out


def _spec_folders(path: Path) -> list[Path]:
    """A spec session folder (or its session.jsonl), or a spec root: every session folder in it."""
    if path.is_file() or (path / "session.jsonl").is_file():
        return [path]
    return sorted(p for p in path.iterdir() if p.is_dir() and (p / "session.jsonl").is_file())


def sources(tool: str, raw_paths: list[str]) -> list[Callable[[], list[Imported]]]:
    """One loader per source found, in the order given; a path with nothing of the tool's is an error."""
    from . import claude_code, codex, spec

    loaders: list[Callable[[], list[Imported]]] = []
    for raw in raw_paths:
        path = Path(raw).expanduser()
        if not path.exists():
            raise ImportSourceNotFound(f"{raw}: no such file or folder", path=raw)
        if tool == "claude-code":
            found = _claude_files(path)
            loaders += [_one(claude_code.import_transcript, p) for p in found]
        elif tool == "codex":
            found = _codex_files(path)
            loaders += [_one(codex.import_rollout, p) for p in found]
        elif tool == "spec":
            found = _spec_folders(path)
            loaders += [_one(spec.import_spec, p) for p in found]
        else:
            db = path / "opencode.db" if path.is_dir() else path
            found = [db] if db.is_file() else []
            loaders += [partial(_opencode, db)]
        if not found:
            raise ImportSourceNotFound(
                f"{raw}: holds no {tool} sessions (give a session file or the folder holding them)", path=raw
            )
    return loaders


def _one(load: Callable[[Path], Imported], path: Path) -> Callable[[], list[Imported]]:
    """A loader of the one session in ``path``."""
    return lambda: [load(path)]


def _opencode(db: Path) -> list[Imported]:
    import sqlite3

    from . import opencode

    with open(db, "rb") as handle:
        if handle.read(16) != b"SQLite format 3\x00":
            raise ImportSourceUnreadable(
                f"{db}: not an SQLite database (opencode keeps its sessions in ~/.local/share/opencode/opencode.db)",
                path=str(db),
            )
    try:
        return opencode.import_database(db)
    except sqlite3.DatabaseError as error:
        raise ImportSourceUnreadable(f"{db}: cannot be read as opencode's database: {error}", path=str(db)) from error


def import_sources(store: SessionStore, params: wire.ImportParams) -> wire.ImportResult:
    if params.tool not in TOOLS:
        raise InvalidParams(f"session/import: tool must be one of {', '.join(TOOLS)}, not {params.tool!r}")
    if not params.paths:
        raise InvalidParams("session/import: paths must name at least one file or folder")
    results = []
    for load in sources(params.tool, params.paths):
        with cycles_paused():  # an import makes many objects, none in a cycle
            for imported in load():
                results.append(_write(store, imported, params.dryRun))
    return wire.ImportResult(sessions=results)


def _write(store: SessionStore, imported: Imported, dry_run: bool) -> wire.ImportedSession:
    session_id = imported.session_id
    entries = list(imported.entries)
    if imported.name and entries:
        last = id_of(entries[-1])
        entries.append(
            {
                "type": "session_info",
                "id": f"{last}-name",
                "parentId": last,
                "timestamp": timestamp_of(entries[-1]),
                "name": imported.name,
            }
        )
    path, created = store.import_session(
        session_id,
        imported.cwd or "/",
        imported.timestamp,
        {"importedFrom": imported.origin()},
        entries,  # type: ignore[arg-type]  # made lines too: the store writes an Entry's line as it is (store/encoded.py)
        write=not dry_run,
    )
    tally = imported.tally
    counts = [
        wire.ImportKindCount(
            kind=kind,
            mapped=per.get("mapped", 0),
            kept=per.get("kept", 0),
            skipped=per.get("skipped", 0),
            reasons={
                outcome: tally.reasons[f"{kind}/{outcome}"] for outcome in per if f"{kind}/{outcome}" in tally.reasons
            },
        )
        for kind, per in sorted(tally.counts.items())
    ]
    return wire.ImportedSession(
        sessionId=session_id,
        path=path,
        created=created,
        tool=imported.tool,
        originalId=imported.original_id,
        source=imported.source,
        entries=len(entries),
        counts=counts,
        damaged=[wire.DamagedLine(line=d["line"], error=d["error"]) for d in tally.damaged],
        unrecognised=sorted(tally.unrecognised),
        subagents=list(imported.extra.get("subagents", [])),
    )
