"""session/stats and session/prune on PostgreSQL answer as the file store does for the same sessions.

One generated root (labels, names, custom entries, a compaction, a fork, archived, trashed, a torn line, a blob
referenced by a line and one referenced by nothing) is measured by the file store, then migrated into PostgreSQL
and measured there: the same bytes per area and folder (each session's bytes are its pi file's), the same
largest sessions, the same unreferenced blob; a retention policy pins and selects the same sessions.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from session_builders import service

from sidecar import wire
from sidecar.errors import SessionNotFound
from sidecar.store.payload import BlobStore

from .test_transfer import generated_root, run


def root_with_a_referenced_blob(root: Path) -> str:
    generated_root(root)
    data = b"kept apart and referred to: " + os.urandom(64)
    BlobStore(root).put(data)
    digest = hashlib.sha256(data).hexdigest()
    lines = [
        {"type": "session", "version": 3, "id": "refers", "timestamp": "2026-01-02T00:00:00.000Z", "cwd": "/work/blob"},
        {
            "type": "custom",
            "customType": "test.ref",
            "id": "c1",
            "parentId": None,
            "timestamp": "2026-01-02T00:00:01.000Z",
            "data": {"image": "blob:sha256:" + digest},
        },
    ]
    folder = root / "--work-blob--"
    folder.mkdir()
    (folder / "2026-01-02T00-00-00-000Z_refers.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return digest


def comparable(stats: wire.StatsResult) -> dict:
    return {
        "areas": (stats.liveBytes, stats.archiveBytes, stats.trashBytes),
        "blobs": (stats.blobCount, stats.blobBytes, stats.unreferencedBlobs, stats.unreferencedBytes),
        "sessions": stats.sessionCount,
        "folders": [(f.folder, f.bytes, f.sessions) for f in stats.folders],
        "largest": sorted(
            (s.sessionId, s.area, s.bytes, s.path.split("sessions/", 1)[-1].removeprefix("pg:")) for s in stats.largest
        ),
    }


def test_stats_and_prune_agree_with_the_file_store(tmp_path: Path, pg_url: str) -> None:
    files_root = tmp_path / "sessions"
    root_with_a_referenced_blob(files_root)
    on_files = service(files_root)
    file_stats = on_files.stats(wire.StatsParams(largest=50, blobs=True))
    assert file_stats.unreferencedBlobs == 1 and file_stats.blobCount == 2 and file_stats.trashBytes > 0
    migrated = run("migrate", "--from", str(files_root), "--database-url", pg_url)
    assert migrated.returncode == 0, migrated.stderr

    on_pg = service(tmp_path / "host", databaseUrl=pg_url)
    pg_stats = on_pg.stats(wire.StatsParams(largest=50, blobs=True))
    assert comparable(pg_stats) == comparable(file_stats), (comparable(pg_stats), comparable(file_stats))
    assert all(s.path.startswith("pg:") for s in pg_stats.largest)
    assert pg_stats.indexBytes > 0  # the tables' indexes

    # The same sessions are pinned (named or labelled) and selected by a policy that keeps none.
    policy = wire.PruneParams(keepPerCwd=0, dryRun=True)
    file_dry, pg_dry = on_files.prune(policy), on_pg.prune(policy)
    assert pg_dry.pinned == file_dry.pinned >= 2
    assert sorted(s.sessionId for s in pg_dry.selected) == sorted(s.sessionId for s in file_dry.selected)
    assert pg_dry.movedBytes == 0 and pg_stats == on_pg.stats(wire.StatsParams(largest=50, blobs=True))

    # Carried out: to the trash (restorable), bytes accounted for, no reference left dangling.
    done = on_pg.prune(wire.PruneParams(keepPerCwd=0, confirm=True))
    assert done.movedBytes == sum(s.bytes for s in done.selected) > 0 and not done.skipped
    after = on_pg.stats(wire.StatsParams(largest=50, blobs=True))
    assert after.trashBytes == pg_stats.trashBytes + done.movedBytes
    assert after.liveBytes + after.archiveBytes == pg_stats.liveBytes + pg_stats.archiveBytes - done.movedBytes
    assert after.unreferencedBlobs == 1  # a trashed session still refers to its blob
    back = done.selected[0].sessionId
    on_pg.restore(wire.RestoreParams(sessionId=back))
    assert back in {s.sessionId for s in on_pg.list(wire.ListParams(all=True, limit=100)).sessions}
    on_pg.close_all()
    on_files.close_all()


def test_a_policy_that_does_not_parse_is_refused_on_postgresql(tmp_path: Path, pg_url: str) -> None:
    import pytest

    from sidecar.errors import InvalidParams

    on_pg = service(tmp_path / "host", databaseUrl=pg_url)
    with pytest.raises(InvalidParams) as refused:
        on_pg.prune(wire.PruneParams(olderThan="soon"))
    assert "90d" in refused.value.message
    assert on_pg.stats(wire.StatsParams()).sessionCount == 0
    on_pg.close_all()


def _erased(erased, root: Path | None) -> tuple:
    """What an erase answered, with paths relative to the root (files) or the place (PostgreSQL)."""

    def rel(path: Path) -> str:
        text = str(path.relative_to(root)) if root is not None else str(path).removeprefix("pg:")
        return text.replace(".blobs/", "blobs/") if text.startswith(".blobs/") else text

    return len(erased.files), erased.bytes, sorted(rel(p) for p in erased.files), len(erased.skipped)


def test_empty_trash_and_blob_collection_agree_with_the_file_store(tmp_path: Path, pg_url: str) -> None:
    import time

    from sidecar.format.jsonl import BLOB_PREFIX

    files_root = tmp_path / "sessions"
    referred = root_with_a_referenced_blob(files_root)
    # A trashed session that alone refers to a blob, with a migration backup kept beside it.
    only_trashed = b"referred to by a trashed session only: " + os.urandom(64)
    trashed_digest = BlobStore(files_root).put(only_trashed)
    fresh = BlobStore(files_root).put(b"stored a moment ago, referred to by nothing: " + os.urandom(64))
    trash = files_root / ".trash" / "--work-blob--"
    trash.mkdir(parents=True)
    line = {
        "type": "custom",
        "customType": "test.ref",
        "id": "t1",
        "parentId": None,
        "timestamp": "2026-01-03T00:00:01.000Z",
        "data": {"image": BLOB_PREFIX + trashed_digest},
    }
    header = {
        "type": "session",
        "version": 3,
        "id": "bin",
        "timestamp": "2026-01-03T00:00:00.000Z",
        "cwd": "/work/blob",
    }
    trashed_file = trash / "2026-01-03T00-00-00-000Z_bin.jsonl"
    trashed_file.write_text(json.dumps(header) + "\n" + json.dumps(line) + "\n")
    (trash / (trashed_file.name + ".v2.bak")).write_bytes(b"the file as it was before a migration\n")
    old = time.time_ns() - 2 * 3600 * 1_000_000_000
    for blob in (files_root / ".blobs").iterdir():
        if blob.name != fresh:
            os.utime(blob, ns=(old, old))
    migrated = run("migrate", "--from", str(files_root), "--database-url", pg_url)
    assert migrated.returncode == 0, migrated.stderr
    on_files, on_pg = service(files_root), service(tmp_path / "host", databaseUrl=pg_url)
    both = ((on_files, files_root), (on_pg, None))
    now = time.time_ns()

    # Nothing was trashed an hour ago; a dry run lists what a real run then erases, on both stores alike.
    recent = [_erased(svc.store.empty_trash(3600, now, True), root) for svc, root in both]
    assert recent[0] == recent[1] == (0, 0, [], 0)
    dry = [_erased(svc.store.empty_trash(None, now, True), root) for svc, root in both]
    assert dry[0] == dry[1] and dry[0][0] == 2, dry  # the generated root's trashed session, and "bin"
    # A dry collection: the orphans past their grace hour; the one only a trashed session refers to is kept.
    blobs_dry = [_erased(svc.store.collect_blobs(True), root) for svc, root in both]
    assert blobs_dry[0] == blobs_dry[1] and blobs_dry[0][0] == 1, blobs_dry
    assert trashed_digest not in str(blobs_dry[0]) and referred not in str(blobs_dry[0]) and fresh not in str(blobs_dry)

    done = [_erased(svc.store.empty_trash(None, now, False), root) for svc, root in both]
    assert done[0] == done[1], done
    assert done[0][0] == 3 and any(name.endswith(".v2.bak") for name in done[0][2])  # the backup went with it
    assert done[0][1] == dry[0][1] + len(b"the file as it was before a migration\n")
    assert not any((files_root / ".trash").rglob("*.jsonl"))
    with pytest.raises(SessionNotFound):
        on_pg.restore(wire.RestoreParams(sessionId="bin"))

    # Now the trashed session's blob is referred to by nothing: collected, with the first orphan.
    stats = [comparable(svc.stats(wire.StatsParams(largest=50, blobs=True))) for svc, _ in both]
    assert stats[0] == stats[1] and stats[0]["blobs"][2] == 3  # two orphans and the fresh one
    collected = [_erased(svc.store.collect_blobs(False), root) for svc, root in both]
    assert collected[0] == collected[1] and collected[0][0] == 2, collected
    assert f"blobs/{trashed_digest}" in collected[0][2]
    after = [comparable(svc.stats(wire.StatsParams(largest=50, blobs=True))) for svc, _ in both]
    assert after[0] == after[1] and after[0]["blobs"][:3] == (2, after[0]["blobs"][1], 1)  # referred + fresh
    assert on_pg.store.blobs.get(referred) is not None and on_pg.store.blobs.get(trashed_digest) is None
    on_pg.close_all()
    on_files.close_all()


def test_empty_trash_on_the_command_line_answers_alike(tmp_path: Path, pg_url: str) -> None:
    files_root = tmp_path / "sessions"
    root_with_a_referenced_blob(files_root)
    migrated = run("migrate", "--from", str(files_root), "--database-url", pg_url)
    assert migrated.returncode == 0, migrated.stderr
    on_files = run("empty-trash", "--blobs", "--dry-run", "--root", str(files_root))
    on_pg = run("empty-trash", "--blobs", "--dry-run", "--root", str(tmp_path / "host"), "--database-url", pg_url)
    assert on_files.returncode == on_pg.returncode == 0, on_pg.stderr
    assert on_files.stdout == on_pg.stdout and "would erase 1 files from the trash" in on_pg.stdout
    erased = run("empty-trash", "--older-than", "0s", "--root", str(tmp_path / "host"), "--database-url", pg_url)
    assert erased.returncode == 0 and "erased 1 files from the trash" in erased.stdout, erased.stdout + erased.stderr
    bad = run("empty-trash", "--older-than", "soon", "--root", str(tmp_path / "host"), "--database-url", pg_url)
    assert bad.returncode == 2 and "90d" in bad.stdout
