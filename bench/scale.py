"""Figures at scale (issue 17): 100,000 sessions in 1,000 folders.

    .venv/bin/python bench/scale.py [--repeat N] [--sessions N --folders N]

Generated (seeded, many_sessions.py) in the temp dir, reused while its marker
says it is the same data set, never committed. Each measurement runs in a
fresh process (so its peak RSS is its own):

- cold index rebuild: the first ``session/list`` with no index (every file read), wall and CPU time
  (the process's and its index workers', sidecar/store/index/workers.py), and the time it waited for a CPU
  (runnable, not running: /proc/self/schedstat); the same the other way (one worker where the default is
  none, as on 2 CPUs, else none), in a process of its own;
- warm list: the same list again (medians of ``--repeat``);
- query, warm: a list with the query most sessions answer ("tokenizer branch"),
  and one no session answers ("zzz-no-such-text"), once the full-text index is
  complete (medians);
- the first queries right after the cold rebuild (the full-text index still building): the common one,
  then the rare one (every text not yet indexed is read);
- the full-text index complete after (wall, and the process's CPU meanwhile);
- peak RSS (VmHWM) of that process;
- the listing index's size on disk once its full-text index is complete, beside the session files'.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import many_sessions  # noqa: E402

from sidecar.store.index import workers as indexwork  # noqa: E402

COMMON, RARE = "tokenizer branch", "zzz-no-such-text"


def data_root(sessions: int, folders: int) -> Path:
    """The generated root, made once and reused (a marker names what it holds)."""
    root = Path(tempfile.gettempdir()) / "session-sidecar-bench" / f"many-{sessions}-{folders}"
    marker = root / ".generated"
    stamp = f"{sessions} {folders} {many_sessions.SEED}\n"
    if not marker.exists() or marker.read_text() != stamp:
        many_sessions.generate(root, sessions, folders)
        marker.write_text(stamp)
    return root


def _waited() -> float:
    """Seconds this process has been runnable but not running (waiting for a CPU)."""
    return int(Path("/proc/self/schedstat").read_text().split()[1]) / 1e9


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _child(root: Path, repeat: int, cold_only: bool = False) -> dict[str, float]:
    import shutil

    from sidecar import wire
    from sidecar.service import SessionService
    from sidecar.store.index.sqlite import INDEX_DIR

    shutil.rmtree(root / INDEX_DIR, ignore_errors=True)
    svc = SessionService(root)
    start, cpu, workers, waited = time.perf_counter(), time.process_time(), _children_cpu(), _waited()
    assert len(svc.list(wire.ListParams(all=True)).sessions) == 50
    cold, cold_parent = time.perf_counter() - start, time.process_time() - cpu
    cold_workers, cold_waited = _children_cpu() - workers, _waited() - waited
    if cold_only:
        svc.store.catalog.index.close()
        return {"cold": cold, "cold_cpu": cold_parent + cold_workers, "cold_waited": cold_waited}
    start, cpu = time.perf_counter(), time.process_time()
    svc.list(wire.ListParams(all=True, query=COMMON))
    first_query = time.perf_counter() - start
    middle = time.perf_counter()
    found = svc.list(wire.ListParams(all=True, query=RARE)).sessions
    first_rare = time.perf_counter() - middle
    assert found == []
    svc.store.catalog.index.build_search()  # waits for (finishes) the background build
    built, built_cpu = time.perf_counter() - start, time.process_time() - cpu

    def median(**params: object) -> float:
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            svc.list(wire.ListParams(all=True, **params))
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    figures = {
        "cold": cold,
        "cold_cpu": cold_parent + cold_workers,
        "cold_parent_cpu": cold_parent,
        "cold_workers_cpu": cold_workers,
        "cold_waited": cold_waited,
        "first_query": first_query,
        "first_rare": first_rare,
        "search_built": built,
        "search_cpu": built_cpu,
        "warm": median(),
        "common": median(query=COMMON),
        "rare": median(query=RARE),
    }
    svc.store.catalog.index.close()
    figures["index_mb"] = sum(f.stat().st_size for f in (root / INDEX_DIR).iterdir() if f.is_file()) / 1e6
    figures["sessions_mb"] = sum(f.stat().st_size for f in root.glob("*/*.jsonl")) / 1e6
    status = Path("/proc/self/status").read_text()
    figures["rss_mb"] = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")) / 1024
    return figures


def many(sessions: int, folders: int, repeat: int, runs: int) -> dict[str, tuple[float, float, float]]:
    """Each figure over ``runs`` fresh processes: (median, min, max)."""
    root = data_root(sessions, folders)
    results = []

    def child(*extra: str, **env: str) -> dict[str, float]:
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(root), "--repeat", str(repeat), *extra],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(HERE.parent), **env},
        )
        if done.returncode != 0:
            raise RuntimeError(done.stderr[-3000:])
        return json.loads(done.stdout.strip().splitlines()[-1])

    for _ in range(runs):
        load = os.getloadavg()[0]
        figures = child()
        # The same rebuild the other way: with one index worker where the default is none (2 CPUs), else none.
        other = "1" if indexwork.workers() == 0 else "0"
        alone = child("--cold-only", SESSION_SIDECAR_INDEX_WORKERS=other)
        figures.update({f"{key}_other": value for key, value in alone.items()})
        figures["load"] = (load + os.getloadavg()[0]) / 2
        results.append(figures)
    return {
        key: (statistics.median(r[key] for r in results), min(r[key] for r in results), max(r[key] for r in results))
        for key in results[0]
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3, help="fresh processes (cold rebuilds) to take medians over")
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--folders", type=int, default=1_000)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--cold-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(_child(args.child, args.repeat, args.cold_only)))
        return
    figures = many(args.sessions, args.folders, args.repeat, args.runs)

    def show(label: str, key: str, goal: str, unit: str = "ms") -> None:
        mid, low, high = figures[key]
        scale = 1000 if unit == "ms" else 1
        print(f"{label:52} {mid * scale:9.1f} {unit}  ({low * scale:.1f}-{high * scale:.1f})  {goal}")

    print(
        f"{args.sessions:,} sessions in {args.folders:,} folders; medians of {args.runs} processes (min-max);"
        f" load average {figures['load'][0]:.1f} ({figures['load'][1]:.1f}-{figures['load'][2]:.1f}) on"
        f" {os.cpu_count()} CPUs"
    )
    show("cold index rebuild", "cold", "goal < 20,000 ms")
    show("cold index rebuild, CPU time (process + workers)", "cold_cpu", "(the machine's load aside)")
    show("  of which the workers", "cold_workers_cpu", "")
    show("  time waiting for a CPU (runnable)", "cold_waited", "(the load)")
    other = "with 1 index worker" if indexwork.workers() == 0 else "in one process (no workers)"
    show(f"cold index rebuild {other}", "cold_other", "(same run)")
    show("  its CPU time", "cold_cpu_other", "")
    show("  its time waiting for a CPU", "cold_waited_other", "")
    show("warm list", "warm", "goal < 50 ms")
    show(f"query {COMMON!r}, warm", "common", "goal < 100 ms")
    show(f"query {RARE!r}, warm", "rare", "goal < 100 ms")
    show("first query after the rebuild (common)", "first_query", "(no goal)")
    show("then the rare one (texts not yet indexed read)", "first_rare", "(no goal)")
    show("full-text index complete after", "search_built", "(no goal)")
    show("  CPU time meanwhile", "search_cpu", "(no goal)")
    show("peak RSS", "rss_mb", "goal < 200 MB", unit="MB")
    show("listing index on disk, full-text index complete", "index_mb", "(no goal)", unit="MB")
    show("  the session files it lists", "sessions_mb", "", unit="MB")


if __name__ == "__main__":
    main()
