"""Snapshot and rewind figures (issue 18), and the measurement that chose the storage engine.

    .venv/bin/python bench/snapshots.py [--files 10000] [--mb 200] [--repeat 5]

1. snapshot of a 10,000-file / 200 MB tree: the first (every file read and
   stored), then incremental with 10 files changed (goal < 200 ms), median of
   ``--repeat``;
2. rewind of 100 changed files (and its undo);
3. store growth over 100 snapshots, each after a small edit to 1-3 files
   (goal: proportional to what changed, not to the tree);
4. the engine comparison: the same first / incremental snapshot with a
   hand-made content-addressed blob store (walk, stat cache, sha256, one file
   per blob, a flat manifest per snapshot, no .gitignore), to set beside 1 and 3.

Runs the service in this process (SessionService; a call over the wire adds
~0.3 ms). The tree is generated (seeded) in a temporary folder and removed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgspec  # noqa: E402

from sidecar import wire  # noqa: E402
from sidecar.service import SessionService  # noqa: E402


def make_tree(folder: Path, files: int, total_mb: int, rng: random.Random) -> list[Path]:
    size = total_mb * 1024 * 1024 // files
    paths = []
    for i in range(files):
        path = folder / f"pkg{i % 100:02d}" / f"mod{i % 7}" / f"file{i}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        # Half random, half repetitive: about what source and assets compress to.
        path.write_bytes(rng.randbytes(size // 2) + b"line of text\n" * (size // 26))
        paths.append(path)
    (folder / ".gitignore").write_text("*.tmp\n")
    return paths


def du(folder: Path) -> int:
    total = 0
    for dirpath, _, names in os.walk(folder):
        for name in names:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
            except OSError:
                pass
    return total


def edit(paths: list[Path], count: int, rng: random.Random) -> None:
    for path in rng.sample(paths, count):
        with open(path, "ab") as out:
            out.write(f"edit {rng.random()}\n".encode())


def user(text: str) -> dict:
    return {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}


def assistant(text: str) -> dict:
    return {"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}


def blob_store_snapshot(folder: Path, store: Path, previous: dict) -> tuple[dict, int]:
    """The hand-made alternative: stat every file, hash and store the changed ones, a flat manifest."""
    manifest = {}

    def walk(path: str) -> None:
        with os.scandir(path) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    walk(entry.path)
                    continue
                st = entry.stat(follow_symlinks=False)
                key = (st.st_size, st.st_mtime_ns, st.st_ino)
                old = previous.get(entry.path)
                if old is not None and old[0] == key:
                    manifest[entry.path] = old
                    continue
                data = Path(entry.path).read_bytes()
                digest = hashlib.sha256(data).hexdigest()
                target = store / digest
                if not target.exists():
                    tmp = store / f".{digest}.tmp"
                    tmp.write_bytes(data)
                    os.replace(tmp, target)
                manifest[entry.path] = (key, digest)

    walk(str(folder))
    encoded = msgspec.msgpack.encode({path: [list(v[0]), v[1]] for path, v in manifest.items()})
    (store / f"manifest-{time.perf_counter_ns()}").write_bytes(encoded)
    return manifest, len(encoded)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--growth", type=int, default=100)
    args = parser.parse_args()
    rng = random.Random(18)
    work = Path(tempfile.mkdtemp(prefix="bench-snapshots-"))
    try:
        project, root = work / "project", work / "sessions"
        project.mkdir()
        root.mkdir()
        started = time.perf_counter()
        paths = make_tree(project, args.files, args.mb, rng)
        tree_bytes = du(project)
        print(
            f"tree: {args.files} files, {tree_bytes / 1e6:.0f} MB on disk (made in {time.perf_counter() - started:.1f} s)"
        )

        service = SessionService(root)
        sid = service.create(wire.CreateParams(cwd=str(project))).sessionId
        service.append(wire.AppendParams(sessionId=sid, entries=[user("start"), assistant("ok")]))

        started = time.perf_counter()
        service.snapshot(wire.SnapshotParams(sessionId=sid))
        first_s = time.perf_counter() - started
        store = next((root / ".snapshots").glob("*.git"))
        store_first = du(store)
        print(f"1. first snapshot: {first_s:.2f} s, store {store_first / 1e6:.0f} MB")

        incremental = []
        unchanged = []
        for _ in range(args.repeat):
            edit(paths, 10, rng)
            service.append(wire.AppendParams(sessionId=sid, entries=[user("edit"), assistant("done")]))
            started = time.perf_counter()
            result = service.snapshot(wire.SnapshotParams(sessionId=sid))
            incremental.append(time.perf_counter() - started)
            assert result.changedFiles == 10, result
            started = time.perf_counter()
            service.snapshot(wire.SnapshotParams(sessionId=sid))
            unchanged.append(time.perf_counter() - started)
        print(
            f"   incremental, 10 files changed: median {statistics.median(incremental) * 1000:.0f} ms "
            f"(min {min(incremental) * 1000:.0f}, max {max(incremental) * 1000:.0f}; goal < 200 ms)"
        )
        print(f"   incremental, nothing changed: median {statistics.median(unchanged) * 1000:.0f} ms")

        # 2. rewind of 100 changed files
        mark = service.append(wire.AppendParams(sessionId=sid, entries=[user("before the big edit")])).entries[0].id
        service.snapshot(wire.SnapshotParams(sessionId=sid))
        edit(paths, 100, rng)
        service.append(wire.AppendParams(sessionId=sid, entries=[assistant("edited 100 files")]))
        service.snapshot(wire.SnapshotParams(sessionId=sid))
        started = time.perf_counter()
        rewound = service.rewind(wire.RewindParams(sessionId=sid, entryId=mark, files=True))
        rewind_s = time.perf_counter() - started
        assert len(rewound.restored) == 100, rewound
        started = time.perf_counter()
        service.rewind(wire.RewindParams(sessionId=sid, entryId=rewound.undoEntryId, files=True))  # type: ignore[arg-type]
        undo_s = time.perf_counter() - started
        started = time.perf_counter()
        service.rewind(wire.RewindParams(sessionId=sid, entryId=mark, files=True, dryRun=True))
        dry_s = time.perf_counter() - started
        print(
            f"2. rewind of 100 changed files: {rewind_s * 1000:.0f} ms (undo {undo_s * 1000:.0f} ms, "
            f"dry run {dry_s * 1000:.0f} ms; each includes the snapshot taken first)"
        )

        # 3. store growth over snapshots with small edits
        before = du(store)
        changed_bytes = 0
        for i in range(args.growth):
            count = 1 + i % 3
            edit(paths, count, rng)
            changed_bytes += count * (args.mb * 1024 * 1024 // args.files)
            service.append(wire.AppendParams(sessionId=sid, entries=[user(f"turn {i}"), assistant("ok")]))
            service.snapshot(wire.SnapshotParams(sessionId=sid))
        growth = du(store) - before
        print(
            f"3. store growth over {args.growth} snapshots (1-3 files of {args.mb * 1024 // args.files} KB edited each): "
            f"{growth / 1e6:.2f} MB = {growth / args.growth / 1024:.0f} KB per snapshot "
            f"(files touched: {changed_bytes / 1e6:.1f} MB; tree {tree_bytes / 1e6:.0f} MB)"
        )
        service.close_all()

        # 4. the hand-made blob store, for comparison
        blobs = work / "blobs"
        blobs.mkdir()
        started = time.perf_counter()
        manifest, _ = blob_store_snapshot(project, blobs, {})
        blob_first = time.perf_counter() - started
        times, sizes = [], []
        for _ in range(args.repeat):
            edit(paths, 10, rng)
            started = time.perf_counter()
            manifest, size = blob_store_snapshot(project, blobs, manifest)
            times.append(time.perf_counter() - started)
            sizes.append(size)
        print(
            f"4. blob store (comparison): first {blob_first:.2f} s, store {du(blobs) / 1e6:.0f} MB; incremental "
            f"median {statistics.median(times) * 1000:.0f} ms; manifest {statistics.median(sizes) / 1e6:.2f} MB "
            f"per snapshot (x{args.growth} = {statistics.median(sizes) * args.growth / 1e6:.0f} MB); no .gitignore"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
