"""Figures at scale (issue 17): one 1 GB / 400,000-entry session.

    .venv/bin/python bench/huge.py [--entries N] [--repeat N]

The session is load.py's pi-shaped generator run to ``--entries`` (user
turns, tool calls with big outputs, thinking, branches, compactions), written
once to the temp dir and reused while its marker says it is the same, never
committed. Each measurement runs in a fresh process (peak RSS is its own):

- open + buildContext (agent format, the answer encoded as the server sends
  it), the first time: no tree cache; with its CPU time and the time it was
  runnable but waiting for a CPU (/proc/self/schedstat): on a loaded machine
  the wall time is about the sum of the two; and the CPU time of any child
  process it waited for (none today: a check that the open stays in one process);
- the same after ``session/close`` wrote the tree cache: again in that process
  (warm) and in a new process (the cache read from disk);
- peak RSS (VmHWM) of the first-open process and of the new one;
- ``session/append`` p50 (one user message, fsync "never", in-process) on the
  huge session against the same on a small session, in one process, both in a
  project folder (each append folded into the listing index);
- the first ``session/list`` of a root holding it (the index reads the whole
  file): time and peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import load  # noqa: E402

_CHILD = r"""
import json, resource, shutil, statistics, sys, time
from pathlib import Path
import msgspec
from sidecar import wire
from sidecar.config import Settings, StoreSettings
from sidecar.service import SessionService
from sidecar.store.files.treecache import TREES_DIR
path, kind, repeat = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
root = path.parent.parent if kind in ("list", "append") else path.parent
if kind == "first":
    shutil.rmtree(root / TREES_DIR, ignore_errors=True)
svc = SessionService(root, Settings(store=StoreSettings(fsync="never")))
svc.raw_results = True
encode = msgspec.json.Encoder().encode

def waited():
    # /proc/self/schedstat: time on a CPU, time runnable but waiting for one (ns), timeslices.
    try:
        return int(Path("/proc/self/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0

def children_cpu():
    # CPU time of child processes this one waited for (the open runs in one process: this stays 0).
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime

def once(read_only=True):
    start, cpu, wait, helpers = time.perf_counter(), time.process_time(), waited(), children_cpu()
    opened = svc.open(wire.OpenParams(path=str(path), readOnly=read_only))
    encode(svc.build_context(wire.BuildContextParams(sessionId=opened.sessionId)))
    once.cpu, once.wait, once.helpers = time.process_time() - cpu, waited() - wait, children_cpu() - helpers
    return time.perf_counter() - start, opened.sessionId

def vmhwm():
    status = Path("/proc/self/status").read_text()
    return next(int(l.split()[1]) for l in status.splitlines() if l.startswith("VmHWM:")) / 1024

def append_p50(session_id, count):
    times = []
    for n in range(count):
        params = wire.AppendParams(sessionId=session_id, entries=[
            {"type": "message", "message": {"role": "user", "content": f"bench {n} " + "lorem ipsum " * 8}}])
        start = time.perf_counter()
        svc.append(params)
        times.append(time.perf_counter() - start)
    return statistics.median(times)

out = {}
if kind == "first":
    out["first"], sid = once()
    out["first_cpu"], out["first_wait"], out["first_helpers"] = once.cpu, once.wait, once.helpers
    out["first_rss"] = vmhwm()
    svc.close(wire.CloseParams(sessionId=sid))
    warm = []
    for _ in range(repeat):
        elapsed, sid = once()
        svc.close(wire.CloseParams(sessionId=sid))
        warm.append(elapsed)
    out["warm"] = min(warm)
elif kind == "fresh":
    out["fresh"], sid = once()
    out["fresh_rss"] = vmhwm()
elif kind == "list":  # a root whose only session is the huge one, no index yet
    start = time.perf_counter()
    listed = svc.list(wire.ListParams(all=True))
    out["list_cold"] = time.perf_counter() - start
    out["list_rss"] = vmhwm()
    assert len(listed.sessions) == 1
else:  # append: on a copy of the huge session in a project folder (it grows), then on a small one there
    svc.list(wire.ListParams(all=True))  # the index holds the copy, as it would once listed
    _, sid = once(read_only=False)
    small = svc.create(wire.CreateParams(cwd="/bench", sessionId="small-bench"))
    svc.append(wire.AppendParams(sessionId="small-bench", entries=[
        {"type": "message", "message": {"role": "user", "content": "start"}},
        {"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}],
                                        "stopReason": "stop"}}]))
    big, little = [], []
    for _ in range(3):  # alternate, so a busy moment hits both
        big.append(append_p50(sid, repeat))
        little.append(append_p50("small-bench", repeat))
    out["append_huge"], out["append_small"] = statistics.median(big), statistics.median(little)
print(json.dumps(out))
"""


def data_path(entries: int) -> Path:
    """The generated session (made once, reused while the marker matches)."""
    folder = Path(tempfile.gettempdir()) / "session-sidecar-bench" / f"huge-{entries}"
    path = folder / "huge.jsonl"
    marker = folder / ".generated"
    stamp = f"{entries} {load.SEED}\n"
    if not marker.exists() or marker.read_text() != stamp or not path.exists():
        shutil.rmtree(folder, ignore_errors=True)
        load.generate(path, load.SEED, entries)
        marker.write_text(stamp)
    return path


def _child(path: Path, kind: str, repeat: int) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), kind, str(repeat)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(HERE.parent)},
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(entries: int, repeat: int, runs: int) -> dict[str, tuple[float, float, float]]:
    path = data_path(entries)
    results: list[dict[str, float]] = []
    for _ in range(runs):
        figures = _child(path, "first", repeat)
        figures.update(_child(path, "fresh", repeat))
        with tempfile.TemporaryDirectory() as tmp:
            # A pi-named copy in a project folder, so it is listed and its appends indexed like the small one's.
            folder = Path(tmp) / "--bench--"
            folder.mkdir()
            copy = folder / "2025-01-01T00-00-00-000Z_bench-large.jsonl"
            shutil.copyfile(path, copy)
            figures.update(_child(copy, "list", repeat))
            figures.update(_child(copy, "append", 200))
        results.append(figures)
    return {
        key: (statistics.median(r[key] for r in results), min(r[key] for r in results), max(r[key] for r in results))
        for key in results[0]
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=400_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3, help="fresh processes to take medians over")
    args = parser.parse_args()
    path = data_path(args.entries)
    figures = measure(args.entries, args.repeat, args.runs)
    print(
        f"{path.name}: {path.stat().st_size / 1e6:,.0f} MB, {args.entries:,} entries (seed {load.SEED}); "
        f"medians of {args.runs} runs (min-max)"
    )

    def show(label: str, key: str, goal: str, scale: float = 1000, unit: str = "ms") -> None:
        mid, low, high = figures[key]
        print(f"{label:50} {mid * scale:9.1f} {unit}  ({low * scale:.1f}-{high * scale:.1f})  {goal}")

    show("open + buildContext, first (no tree cache)", "first", "goal < 1,000 ms")
    show("  its CPU time (the machine's load aside)", "first_cpu", "")
    show("  CPU time of child processes (none expected)", "first_helpers", "")
    show("  its time runnable, waiting for a CPU (the load)", "first_wait", "")
    show("reopen + buildContext, same process", "warm", "goal < 50 ms")
    show("reopen + buildContext, new process (cache on disk)", "fresh", "goal < 50 ms")
    show("peak RSS after the first open", "first_rss", "goal < 250 MB", 1, "MB")
    show("peak RSS after the reopen in a new process", "fresh_rss", "goal < 250 MB", 1, "MB")
    show("append p50 on it", "append_huge", "goal <= the small session's", 1e6, "us")
    show("append p50 on a small session", "append_small", "(baseline)", 1e6, "us")
    show("first session/list of a root holding it (index)", "list_cold", "(no goal)")
    show("peak RSS of that list", "list_rss", "(no goal)", 1, "MB")


if __name__ == "__main__":
    main()
