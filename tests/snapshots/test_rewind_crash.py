"""SIGKILL a real sidecar during a rewind: every file is the old one or the new one, and a rerun finishes the rewind."""

from __future__ import annotations

import hashlib
import os
import random
import time
from pathlib import Path

from .sidecar_process import ASSISTANT, USER, Sidecar

FILES = 150
SIZE = 32 * 1024


def version(folder: Path) -> dict[str, str]:
    found = {}
    for dirpath, _, names in os.walk(folder):
        for name in names:
            path = Path(dirpath, name)
            found[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def write_version(folder: Path, tag: bytes, rng: random.Random) -> None:
    for i in range(FILES):
        path = folder / f"d{i % 12}" / f"f{i}.dat"
        if tag == b"B" and i % 10 == 0:
            path.unlink(missing_ok=True)  # removed in B
            continue
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(tag * 16 + rng.randbytes(SIZE))
    if tag == b"B":
        for i in range(20):
            (folder / "added").mkdir(exist_ok=True)
            (folder / "added" / f"n{i}.dat").write_bytes(rng.randbytes(SIZE))


def test_sigkill_during_a_rewind_leaves_old_or_new_files_and_a_rerun_completes(sessions_root: Path, tmp_path: Path):
    rng = random.Random(18)
    project = tmp_path / "project"
    project.mkdir()
    write_version(project, b"A", rng)
    server = Sidecar(sessions_root)
    sid = server.call("session/create", cwd=str(project))["sessionId"]
    at_a = server.append(sid, USER, ASSISTANT)
    server.call("session/snapshot", sessionId=sid)
    state_a = version(project)
    write_version(project, b"B", rng)
    server.append(sid, USER, ASSISTANT)
    at_b = server.call("session/snapshot", sessionId=sid)["entryId"]
    state_b = version(project)
    # One whole rewind, timed, sets the range the kills are spread over.
    started = time.perf_counter()
    server.call("session/rewind", sessionId=sid, entryId=at_a, files=True)
    full = time.perf_counter() - started
    assert version(project) == state_a
    server.stop()

    states = {at_a: state_a, at_b: state_b}
    target = at_b
    interrupted = 0
    journal = sessions_root / ".snapshots" / "journal" / f"{sid}.json"
    for trial in range(8):
        other = state_a if target == at_b else state_b
        server = Sidecar(sessions_root)
        sent = time.perf_counter()
        server.child.send("session/rewind", {"sessionId": sid, "entryId": target, "files": True})
        if trial % 3 == 2:
            time.sleep(rng.uniform(0.0, 1.0) * full)  # anywhere: before the journal, or after the end
        else:
            # Inside the phase that changes files: from the journal's appearance on.
            while not journal.exists() and time.perf_counter() - sent < 30:
                time.sleep(0.002)
            # Early in it: on a loaded machine the snapshot taken first can be most of a rewind.
            time.sleep(rng.uniform(0.0, 0.05) * full)
        server.kill()
        now = version(project)
        debris = {p for p in now if p.endswith(".sidecar-rewind")}
        for path in set(now) - debris | set(states[target]) | set(other):
            assert now.get(path) in (states[target].get(path), other.get(path)), (trial, path)
        pending = journal.exists()
        interrupted += pending

        server = Sidecar(sessions_root)
        result = server.call("session/rewind", sessionId=sid, entryId=target, files=True)
        assert version(project) == states[target], trial
        assert result["leafId"] == target
        assert result.get("resumed", False) == pending, trial
        assert not journal.exists()
        server.stop()
        target = at_a if target == at_b else at_b
    assert interrupted >= 3, f"only {interrupted} of 8 kills landed inside a rewind ({full:.2f} s long)"
