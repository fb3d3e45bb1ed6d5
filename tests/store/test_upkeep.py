"""Keeping the store in bounds: stats, retention policies to the trash, emptying it, collecting blobs.

The roots are written as files and taken in by the store (``adopt_files``: on PostgreSQL migrated, as a
user brings a root in); a session's age is both its file's time and its last message's time, so the file
store (file times) and PostgreSQL (the listing's ``modified``) see the same ages. What the store kept is
read back with ``stored_at``.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest
from session_builders import adopt_files, assistant, entry, header, service, stored_at, user, write_session

from sidecar import wire
from sidecar.errors import InvalidParams, SessionNotFound
from sidecar.format.jsonl import BLOB_PREFIX
from sidecar.store.files.trash import collect_blobs
from sidecar.upkeep.retention import parse_duration, parse_size

DAY_NS = 86400 * 1_000_000_000


def session_file(root: Path, cwd: str, sid: str, age_days: float, *extra: dict, area: str = "") -> Path:
    folder = (root / area if area else root) / ("--" + cwd.strip("/").replace("/", "-") + "--")
    stamp = time.time_ns() - int(age_days * DAY_NS)
    said = stamp // 1_000_000  # the last message's time: the session's age on PostgreSQL
    path = write_session(
        folder / f"2025-01-01T00-00-00-000Z_{sid}.jsonl",
        header(sid, cwd=cwd),
        [
            entry("message", f"{sid}-u", None, 1, message=user(f"hello from {sid}", timestamp=said)),
            entry("message", f"{sid}-a", f"{sid}-u", 2, message={**assistant("hi"), "timestamp": said}),
            *extra,
        ],
    )
    os.utime(path, ns=(stamp, stamp))  # the file's time: its age on the file store
    return path


def adopted(root: Path):  # type: ignore[no-untyped-def]
    """A service on ``root`` whose store holds the session files written below it."""
    svc = service(root)
    adopt_files(svc)
    return svc


def stored_size(svc, path: Path) -> int:  # type: ignore[no-untyped-def]
    return len(stored_at(svc, path).read_bytes())


@pytest.fixture
def store(sessions_root):
    paths = {
        "old-a": session_file(sessions_root, "/w/a", "old-a", 200),
        "mid-a": session_file(sessions_root, "/w/a", "mid-a", 100),
        "new-a": session_file(sessions_root, "/w/a", "new-a", 1),
        "named-old": session_file(
            sessions_root, "/w/a", "named-old", 300, entry("session_info", "n1", "named-old-a", 3, name="keep me")
        ),
        "cleared-old": session_file(
            sessions_root,
            "/w/a",
            "cleared-old",
            300,
            entry("label", "l1", "cleared-old-a", 3, targetId="cleared-old-u", label="x"),
            entry("label", "l2", "l1", 4, targetId="cleared-old-u"),
        ),
        "old-b": session_file(sessions_root, "/w/b", "old-b", 150),
        "arch-b": session_file(sessions_root, "/w/b", "arch-b", 400, area=".archive"),
        "trash-c": session_file(sessions_root, "/w/c", "trash-c", 500, area=".trash"),
    }
    return paths


def test_stats_count_every_area_folder_and_the_largest(sessions_root, store):
    big = session_file(
        sessions_root,
        "/w/b",
        "big-b",
        2,
        entry("custom", "c1", "big-b-a", 3, customType="x", data={"blob": "z" * 50_000}),
    )
    svc = adopted(sessions_root)
    stats = svc.stats(wire.StatsParams(largest=2))
    sizes = {name: stored_size(svc, path) for name, path in store.items()}
    assert stats.sessionCount == 9
    assert stats.archiveBytes == sizes["arch-b"] and stats.trashBytes == sizes["trash-c"]
    assert stats.liveBytes == sum(v for k, v in sizes.items() if k not in ("arch-b", "trash-c")) + stored_size(svc, big)
    assert [(f.folder, f.sessions) for f in stats.folders] == [("--w-b--", 3), ("--w-a--", 5)]
    assert [s.sessionId for s in stats.largest] == ["big-b", stats.largest[1].sessionId] and len(stats.largest) == 2
    assert stats.unreferencedBlobs is None


def test_older_than_sends_unpinned_sessions_to_the_trash_restorably(sessions_root, store):
    svc = adopted(sessions_root)
    at = lambda name: stored_at(svc, store[name])  # noqa: E731
    dry = svc.prune(wire.PruneParams(olderThan="120d", dryRun=True))
    assert sorted(s.sessionId for s in dry.selected) == ["arch-b", "cleared-old", "old-a", "old-b"]
    assert all(at(name).exists() for name in store)  # a dry run moves nothing
    assert dry.pinned == 1  # "named-old": a name pins it; "cleared-old"'s label was cleared again

    expected_bytes = sum(stored_size(svc, store[k]) for k in ("arch-b", "cleared-old", "old-a", "old-b"))
    done = svc.prune(wire.PruneParams(olderThan="120d"))
    assert sorted(s.sessionId for s in done.selected) == ["arch-b", "cleared-old", "old-a", "old-b"]
    assert done.movedBytes == expected_bytes and done.skipped == []
    assert not at("old-a").exists() and at("named-old").exists() and at("new-a").exists()
    assert stored_at(svc, sessions_root / ".trash" / "--w-a--" / store["old-a"].name).is_file()
    svc.restore(wire.RestoreParams(sessionId="old-a"))
    assert at("old-a").is_file()


def test_keep_per_cwd_and_max_total(sessions_root, store):
    svc = adopted(sessions_root)
    kept = svc.prune(wire.PruneParams(keepPerCwd=1, dryRun=True))
    # Newest first per folder: a keeps new-a, b keeps old-b (arch-b is older); pinned ones are not counted.
    assert sorted(s.sessionId for s in kept.selected) == ["arch-b", "cleared-old", "mid-a", "old-a"]
    sizes = sorted(stored_size(svc, p) for k, p in store.items() if k not in ("trash-c",))
    total = sum(sizes)
    capped = svc.prune(wire.PruneParams(maxTotal=f"{total - 1}B", dryRun=True))
    assert [s.sessionId for s in capped.selected] == ["arch-b"]  # the oldest unpinned one is enough


def test_a_policy_that_selects_everything_asks_for_confirmation(sessions_root, store):
    svc = adopted(sessions_root)
    with pytest.raises(InvalidParams) as refused:
        svc.prune(wire.PruneParams(olderThan="0s", includePinned=True))
    assert "confirm" in refused.value.message and all(stored_at(svc, p).exists() for p in store.values())
    done = svc.prune(wire.PruneParams(olderThan="0s", includePinned=True, confirm=True))
    assert len(done.selected) == 7 and done.pinned == 0


@pytest.mark.parametrize(
    "params, field",
    [
        (wire.PruneParams(), "olderThan"),
        (wire.PruneParams(olderThan="90 days"), "olderThan"),
        (wire.PruneParams(maxTotal="lots"), "maxTotal"),
        (wire.PruneParams(keepPerCwd=-1), "keepPerCwd"),
    ],
)
def test_policies_that_do_not_parse_are_refused_with_the_accepted_forms(sessions_root, store, params, field):
    with pytest.raises(InvalidParams) as refused:
        service(sessions_root).prune(params)
    assert refused.value.data["field"] == field
    assert all(p.exists() for p in store.values())


def test_sizes_and_durations():
    assert (
        parse_size("5GB", "f") == 5_000_000_000
        and parse_size("1.5 MiB", "f") == 1_572_864
        and parse_size("10", "f") == 10
    )
    assert parse_duration("90d", "f") == 90 * 86400 and parse_duration("2w", "f") == 14 * 86400
    with pytest.raises(InvalidParams) as refused:
        parse_size("5 GiBs", "maxTotal")
    assert "GiB" in refused.value.message and "e.g. 5GB" in refused.value.message


def test_emptying_the_trash_erases_only_the_trash(sessions_root, store):
    svc = adopted(sessions_root)
    svc.delete(wire.DeleteParams(sessionId="old-a"))
    # Both went to the trash moments ago (trash-c's file was written there: its ctime is now).
    recent = svc.store.empty_trash(3600, time.time_ns(), dry_run=True)
    assert recent.files == [] and recent.bytes == 0
    erased = svc.store.empty_trash(None, time.time_ns(), dry_run=False)
    assert sorted(p.name.split("_")[1] for p in erased.files) == ["old-a.jsonl", "trash-c.jsonl"]
    assert svc.stats(wire.StatsParams()).trashBytes == 0
    assert stored_at(svc, store["mid-a"]).exists() and stored_at(svc, store["arch-b"]).exists()
    with pytest.raises(SessionNotFound):
        svc.restore(wire.RestoreParams(sessionId="old-a"))


def test_blobs_are_collected_only_when_nothing_refers_to_them(sessions_root):
    # Blob files in <root>/.blobs, as the file store keeps them (on PostgreSQL migrated with their file times).
    from sidecar.store.payload import BlobStore

    folder = BlobStore(sessions_root).folder
    folder.mkdir(parents=True)
    digests = {}
    for name in ("live", "trashed", "orphan", "fresh-orphan"):
        data = name.encode() * 100
        digests[name] = hashlib.sha256(data).hexdigest()
        (folder / digests[name]).write_bytes(data)
    old = time.time_ns() - 2 * 3600 * 1_000_000_000
    for name in ("live", "trashed", "orphan"):
        os.utime(folder / digests[name], ns=(old, old))
    image = lambda name: {
        "role": "user",
        "content": [{"type": "image", "data": BLOB_PREFIX + digests[name], "mimeType": "image/png"}],
        "timestamp": 1,
    }
    session_file(sessions_root, "/w/a", "with-live", 1, entry("message", "i1", "with-live-a", 3, message=image("live")))
    session_file(
        sessions_root,
        "/w/a",
        "with-trashed",
        1,
        entry("message", "i2", "with-trashed-a", 3, message=image("trashed")),
        area=".trash",
    )
    svc = adopted(sessions_root)
    stats = svc.stats(wire.StatsParams(blobs=True))
    assert stats.blobCount == 4 and stats.unreferencedBlobs == 2  # orphan and fresh-orphan
    dry = svc.store.collect_blobs(dry_run=True)
    assert [p.name for p in dry.files] == [digests["orphan"]] and dry.bytes == len(b"orphan" * 100)
    collected = svc.store.collect_blobs(dry_run=False)
    assert [p.name for p in collected.files] == [digests["orphan"]]  # the fresh one is in its grace hour
    kept = {name for name, digest in digests.items() if svc.store.blobs.get(digest) is not None}
    assert kept == {"live", "trashed", "fresh-orphan"}
    assert svc.stats(wire.StatsParams(blobs=True)).blobCount == 3


def test_only_blobs_are_collected_from_every_folder_blobs_are_read_from(sessions_root):
    """oh-my-pi keeps <sha256>.png beside its blobs; older blobs stay readable in <root>/.blobs."""
    from sidecar.store.payload import BlobStore

    agent_blobs, ours = sessions_root.parent / "blobs", sessions_root / ".blobs"
    store = BlobStore(sessions_root, agent_blobs, also_read=(ours,))
    old = time.time_ns() - 2 * 3600 * 1_000_000_000
    orphans = []
    for folder in store.folders:
        folder.mkdir(parents=True)
        data = folder.name.encode() * 50
        digest = hashlib.sha256(data).hexdigest()
        for name in (digest, digest + ".png"):
            (folder / name).write_bytes(data)
            os.utime(folder / name, ns=(old, old))
        orphans.append(folder / digest)
    svc = service(sessions_root)
    collected = collect_blobs(svc.store.layout, list(store.folders), dry_run=False)
    assert sorted(collected.files) == sorted(orphans)
    assert all(p.with_name(p.name + ".png").exists() for p in orphans)  # not a blob: never touched
    assert service(sessions_root).stats(wire.StatsParams()).indexBytes == 0  # no index folder yet


@pytest.mark.parametrize(
    "retention, field, accepted",
    [
        ({"maxTotal": "lots"}, "retention.maxTotal", "e.g. 5GB"),
        ({"olderThan": "3 months"}, "retention.olderThan", "e.g. 90d"),
        ({"keepPerCwd": -2}, "retention.keepPerCwd", "0 or more"),
    ],
)
def test_a_settings_policy_that_does_not_parse_is_refused_naming_the_setting(
    sessions_root, store, retention, field, accepted
):
    from sidecar.config import RetentionSettings, Settings
    from sidecar.service import SessionService

    svc = SessionService(sessions_root, Settings(retention=RetentionSettings(**retention)))
    with pytest.raises(InvalidParams) as refused:
        svc.prune(wire.PruneParams(dryRun=True))
    assert refused.value.data["field"] == field and field in refused.value.message and accepted in refused.value.message
    # A value given with the call is named as the call's field, and wins over the settings.
    name = field.split(".")[1]
    given = {"maxTotal": "5GB", "olderThan": "90d", "keepPerCwd": 1}[name]
    assert svc.prune(wire.PruneParams(dryRun=True, **{name: given})) is not None
    assert all(p.exists() for p in store.values())
