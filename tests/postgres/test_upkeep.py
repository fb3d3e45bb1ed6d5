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

from sidecar import wire
from sidecar.store.payload import BlobStore
from session_builders import service

from .test_transfer import generated_root, run


def root_with_a_referenced_blob(root: Path) -> str:
    generated_root(root)
    data = b"kept apart and referred to: " + os.urandom(64)
    BlobStore(root).put(data)
    digest = hashlib.sha256(data).hexdigest()
    lines = [
        {"type": "session", "version": 3, "id": "refers", "timestamp": "2026-01-02T00:00:00.000Z", "cwd": "/work/blob"},
        {"type": "custom", "customType": "test.ref", "id": "c1", "parentId": None, "timestamp": "2026-01-02T00:00:01.000Z",
         "data": {"image": "blob:sha256:" + digest}},
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
        "largest": sorted((s.sessionId, s.area, s.bytes, s.path.split("sessions/", 1)[-1].removeprefix("pg:"))
                          for s in stats.largest),
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
