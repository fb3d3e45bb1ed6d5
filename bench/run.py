"""Every benchmark in one run, printed as one table of figures against their goals.

    .venv/bin/python bench/run.py [--quick]

Each figure is a ratio (or a time) measured in this run against a baseline
measured in the same run, so it holds on a noisy machine:

1. open + buildContext of the generated 50 MB / 20,000-entry session vs
   decoding every line with msgspec (load.py's floor).
2. reopen + buildContext of that session (the answer encoded as the server
   sends it) with its tree cache warm, in the same process and in a new
   one, vs the first open (no cache).
3. session/list over 10,000 sessions in 100 folders: index warm, and cold (no index).
4. session/append round trip p50 / p99 and pipelined throughput vs the
   hand-rolled echo server (rpc_latency.py), batch append entries/s, and
   fsyncs per pipelined burst of appends under fsync policy "always".
5. start-up (spawn -> initialize answered, and -> the first session/list answered),
   each also as a ratio to a bare ``python -c "import msgspec"`` timed in turn with it
   (issue 42's baseline), and peak RSS of a sidecar that opened the 50 MB session.
6. a fresh process and a restart meeting that session, vs pi 1.5.2 on the same
   file (fresh.py): ratios per round, first calls vs later, spawn -> first call,
   ``call session/list``, peak RSS.
7. 100,000 sessions in 1,000 folders (scale.py): cold index rebuild, warm list,
   a query most sessions answer and one none does, peak RSS.
8. a 1 GB / 400,000-entry session (huge.py): first open + buildContext, reopen
   with the tree cache in the same and in a new process, peak RSS, append p50
   on it against a small session's.

9. live across hosts (live.py section 3): write on sidecar A -> didAppend to an
   observer of sidecar B, both on one PostgreSQL database (the server of
   $SIDECAR_TEST_DATABASE_URL, else a throwaway cluster from scripts/pg.sh).

First, issue 42's goals (goals.py): each of its figures for both cores, python and compiled, in a
column each, beside pi 1.5.2 or the goal's own baseline, in one run; ``--goals-only`` prints only that
table, ``--huge-entries`` makes its 1 GB session smaller (say so when quoting it).

7 and 8 generate their data sets (once, reused) in the temp dir; --no-scale leaves them out.

The data sets are generated (seeded) below bench/data/ and never committed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import fresh  # noqa: E402
import goals  # noqa: E402
import huge  # noqa: E402
import live  # noqa: E402
import load  # noqa: E402
import many_sessions  # noqa: E402
import pgserver  # noqa: E402
import rpc_latency  # noqa: E402
import scale  # noqa: E402
from rpc_latency import Pipe  # noqa: E402

SIDECAR = [sys.executable, "-m", "sidecar", "serve", "--log-level", "warning"]
Row = tuple[str, str, str, str]  # figure, measured, baseline, goal


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def _reopen(repeat: int) -> tuple[float, float, float]:
    """open + buildContext + the answer's JSON, as the server does it (results encoded for the wire):

    the first open of the session with no tree cache, a reopen in the same
    process after session/close wrote the cache (best of ``repeat``), and a
    reopen in a fresh process reading that cache from disk.
    """
    code = f"""
import shutil, sys, time
sys.path.insert(0, {str(HERE.parent)!r})
from pathlib import Path
import msgspec
from sidecar import wire
from sidecar.config import Settings
from sidecar.service import SessionService
from sidecar.store.files.treecache import TREES_DIR
path = Path({str(load.DATA)!r})
if sys.argv[1] == "first":
    shutil.rmtree(path.parent / TREES_DIR, ignore_errors=True)
svc = SessionService(path.parent, Settings())
svc.raw_results = True
encode = msgspec.json.Encoder().encode
def once():
    start = time.perf_counter()
    opened = svc.open(wire.OpenParams(path=str(path), readOnly=True))
    answer = encode(svc.build_context(wire.BuildContextParams(sessionId=opened.sessionId)))
    elapsed = time.perf_counter() - start
    svc.close(wire.CloseParams(sessionId=opened.sessionId))
    return elapsed, len(answer)
if sys.argv[1] == "first":
    first, size = once()
    print(first, min(once()[0] for _ in range({repeat})), size)
else:
    print(*once())
"""

    def run(kind: str) -> list[float]:
        done = subprocess.run([sys.executable, "-c", code, kind], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(done.stderr[-2000:])
        return [float(x) for x in done.stdout.split()]

    first, again, size = run("first")
    fresh = min(run("fresh")[0] for _ in range(repeat))
    return first, again, fresh


def _list_figures(sessions: int, folders: int, repeat: int) -> tuple[float, float, float, float, float]:
    """Over a generated root, in-process: cold rebuild, first query (builds the full-text index), warm list,
    warm query (medians), and the floor of a warm list: one lstat per file, folder by folder, serially."""
    from sidecar import wire
    from sidecar.service import SessionService
    from sidecar.store.index.sqlite import INDEX_DIR

    root = HERE / "data" / f"many-{sessions}"
    marker = root / ".generated"
    if not marker.exists():
        many_sessions.generate(root, sessions, folders)
        marker.write_text(f"{sessions} {folders} {many_sessions.SEED}\n")
    shutil.rmtree(root / INDEX_DIR, ignore_errors=True)
    svc = SessionService(root)
    start = time.perf_counter()
    first = svc.list(wire.ListParams(all=True))
    cold = time.perf_counter() - start
    assert len(first.sessions) == 50
    start = time.perf_counter()
    svc.list(wire.ListParams(all=True, query="tokenizer branch"))
    first_query = time.perf_counter() - start
    warm, query, floor = [], [], []
    for _ in range(repeat):
        start = time.perf_counter()
        svc.list(wire.ListParams(all=True))
        warm.append(time.perf_counter() - start)
        start = time.perf_counter()
        svc.list(wire.ListParams(all=True, query="tokenizer branch"))
        query.append(time.perf_counter() - start)
        start = time.perf_counter()
        for folder in svc.store.layout.project_dirs():
            for path in svc.store.layout.session_files(folder):
                path.lstat()
        floor.append(time.perf_counter() - start)
    svc.store.catalog.index.close()
    return cold, first_query, statistics.median(warm), statistics.median(query), statistics.median(floor)


async def _batch_append(entries_per_call: int, calls: int) -> float:
    """Entries per second through a sidecar: ``calls`` pipelined appends of ``entries_per_call`` entries."""
    with tempfile.TemporaryDirectory() as tmp:
        pipe = await Pipe.start(*SIDECAR)
        await pipe.call("initialize", {"sessionRoot": tmp})
        await pipe.call("session/create", {"cwd": "/bench", "sessionId": "batch"})
        await pipe.call(
            "session/append",
            {
                "sessionId": "batch",
                "entries": [
                    {"type": "message", "message": {"role": "user", "content": "start"}},
                    {
                        "type": "message",
                        "message": {
                            "role": "assistant",
                            "content": [{"type": "text", "text": "ok"}],
                            "stopReason": "stop",
                        },
                    },
                ],
            },
        )
        batches = [
            {
                "sessionId": "batch",
                "entries": [
                    {
                        "type": "message",
                        "message": {"role": "user", "content": f"entry {call}.{n}: " + "lorem ipsum " * 8},
                    }
                    for n in range(entries_per_call)
                ],
            }
            for call in range(calls)
        ]
        elapsed = await rpc_latency.pipelined(pipe, "session/append", batches)
        await pipe.stop()
    return entries_per_call * calls / elapsed


async def _group_sync(burst: int, bursts: int) -> tuple[float, float, float]:
    """fsync policy "always": median fsyncs of the session file per pipelined burst of ``burst``
    one-entry appends, entries/s of those bursts, and entries/s of the same appends sent one at a time."""
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "fsyncs"
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(HERE / "fsync_counted.py"),
            "--log-level",
            "warning",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=1 << 26,
            env={**os.environ, "FSYNC_LOG": str(log)},
        )
        pipe = Pipe(process)
        await pipe.call("initialize", {"sessionRoot": tmp, "settings": {"store": {"fsync": "always"}}})
        await pipe.call("session/create", {"cwd": "/bench", "sessionId": "burst"})
        await pipe.call(
            "session/append",
            {
                "sessionId": "burst",
                "entries": [
                    {"type": "message", "message": {"role": "user", "content": "start"}},
                    {
                        "type": "message",
                        "message": {
                            "role": "assistant",
                            "content": [{"type": "text", "text": "ok"}],
                            "stopReason": "stop",
                        },
                    },
                ],
            },
        )
        [path] = Path(tmp).glob("*/*_burst.jsonl")
        st = path.stat()
        mark = f"{st.st_dev}:{st.st_ino}"

        def synced() -> int:
            return log.read_text().splitlines().count(mark)

        def params(n: int) -> dict:
            return {
                "sessionId": "burst",
                "entries": [
                    {"type": "message", "message": {"role": "user", "content": f"entry {n}: " + "lorem ipsum " * 8}}
                ],
            }

        counts, elapsed = [], 0.0
        for number in range(bursts):
            before = synced()
            elapsed += await rpc_latency.pipelined(
                pipe, "session/append", [params(number * burst + n) for n in range(burst)]
            )
            counts.append(synced() - before)
        start = time.perf_counter()
        for n in range(burst):
            await pipe.call("session/append", params(n))
        one_by_one = burst / (time.perf_counter() - start)
        await pipe.stop()
    return statistics.median(counts), burst * bursts / elapsed, one_by_one


async def _startup(repeat: int) -> tuple[float, float, float]:
    """Spawn -> initialize answered, spawn -> the first session/list answered, and the baseline of
    issue 42's goal, a bare ``python -c "import msgspec"`` taken turn about with them (medians)."""
    times, first_calls, bare = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeat):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", "import msgspec"], check=True)
            bare.append(time.perf_counter() - start)
            start = time.perf_counter()
            pipe = await Pipe.start(*SIDECAR)
            await pipe.call("initialize", {"sessionRoot": tmp})
            times.append(time.perf_counter() - start)
            await pipe.call("session/list", {})
            first_calls.append(time.perf_counter() - start)
            await pipe.stop()
    return statistics.median(times), statistics.median(first_calls), statistics.median(bare)


async def _peak_rss_after_open() -> int:
    """VmHWM (kB) of a sidecar process after session/open + buildContext of the 50 MB session."""
    pipe = await Pipe.start(*SIDECAR)
    await pipe.call(
        "initialize", {"sessionRoot": str(load.DATA.parent), "settings": {"store": {"allowExternalPaths": True}}}
    )
    opened = await pipe.call("session/open", {"path": str(load.DATA), "readOnly": True})
    await pipe.call("session/buildContext", {"sessionId": opened["result"]["sessionId"]})
    status = Path(f"/proc/{pipe.process.pid}/status").read_text()
    await pipe.stop()
    return next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:"))


async def _append_latency(requests: int, pipelined: int, rounds: int) -> tuple[dict, dict]:
    args = argparse.Namespace(requests=requests, pipelined=pipelined, per_session=100)
    results: dict[str, list[dict[str, float]]] = {"echo": [], "sidecar": []}
    with tempfile.TemporaryDirectory() as tmp:
        for number in range(rounds):
            results["echo"].append(
                await rpc_latency.measure([sys.executable, str(HERE / "echo_server.py")], False, args, Path(tmp))
            )
            results["sidecar"].append(await rpc_latency.measure(SIDECAR, True, args, Path(tmp) / f"s{number}"))
    med = {name: {key: statistics.median(r[key] for r in runs) for key in runs[0]} for name, runs in results.items()}
    return med["echo"], med["sidecar"]


def _scale_rows(repeat: int) -> list[Row]:
    """7 and 8: one fresh process each (their own RSS), as scale.py and huge.py measure them."""

    def ok(good: bool) -> str:
        return "ok" if good else "MISSED"

    many = {key: value[0] for key, value in scale.many(100_000, 1_000, repeat * 2, 1).items()}
    rows: list[Row] = [
        (
            "7 100,000 sessions / 1,000 folders: cold index rebuild",
            _ms(many["cold"]),
            f"CPU {_ms(many['cold_cpu'])}",
            f"{ok(many['cold'] < 20)} (goal < 20 s)",
        ),
        ("7 warm list", _ms(many["warm"]), "-", f"{ok(many['warm'] < 0.05)} (goal < 50 ms)"),
        (
            f"7 query {scale.COMMON!r} (most sessions), warm",
            _ms(many["common"]),
            "-",
            f"{ok(many['common'] < 0.1)} (goal < 100 ms)",
        ),
        (f"7 query {scale.RARE!r} (none), warm", _ms(many["rare"]), "-", f"{ok(many['rare'] < 0.1)} (goal < 100 ms)"),
        ("7 peak RSS", f"{many['rss_mb']:.0f} MB", "-", f"{ok(many['rss_mb'] < 200)} (goal < 200 MB)"),
    ]
    big = {key: value[0] for key, value in huge.measure(400_000, repeat, 1).items()}
    rows += [
        ("8 1 GB / 400k entries: open + buildContext", _ms(big["first"]), "-", f"{ok(big['first'] < 1)} (goal < 1 s)"),
        ("8 reopen + buildContext, same process", _ms(big["warm"]), "-", f"{ok(big['warm'] < 0.05)} (goal < 50 ms)"),
        ("8 reopen + buildContext, new process", _ms(big["fresh"]), "-", f"{ok(big['fresh'] < 0.05)} (goal < 50 ms)"),
        (
            "8 peak RSS (first open; new process)",
            f"{big['first_rss']:.0f} MB; {big['fresh_rss']:.0f} MB",
            "-",
            f"{ok(max(big['first_rss'], big['fresh_rss']) < 250)} (goal < 250 MB)",
        ),
        (
            "8 append p50 on it",
            f"{big['append_huge'] * 1e6:.0f} us",
            f"small session {big['append_small'] * 1e6:.0f} us",
            f"{big['append_huge'] / big['append_small']:.2f}x (goal <= 1x, within noise)",
        ),
    ]
    return rows


def _across_hosts(appends: int, rounds: int) -> dict:
    with pgserver.server(os.environ.get("SIDECAR_TEST_DATABASE_URL")) as url:
        return asyncio.run(live.across_hosts(url, appends, rounds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run, not figures to quote)")
    parser.add_argument(
        "--no-scale", action="store_true", help="leave out 6 and 7 (100,000 sessions, the 1 GB session)"
    )
    parser.add_argument("--goals-only", action="store_true", help="only issue 42's goals, both cores (goals.py)")
    parser.add_argument(
        "--huge-entries", type=int, default=400_000, help="entries of the goals' 1 GB session (400,000: 1 GB)"
    )
    args = parser.parse_args()
    repeat = 2 if args.quick else 5
    rounds = 2 if args.quick else 3
    goal_rows = goals.measure(rounds, args.huge_entries, True, 1000 if args.quick else 5000)
    goals.print_table(goal_rows, rounds)
    if args.goals_only:
        return
    print()
    fresh.compile_bytecode()  # every figure as an installed sidecar starts (see fresh.compile_bytecode)
    if not load.DATA.exists():
        load.generate(load.DATA)
    rows: list[Row] = []

    floor, _, _, _ = load.run("floor", repeat)
    opened, _, open_peak, _ = load.run("open", repeat)
    rows.append(
        (
            "1 open + buildContext, 50 MB / 20k entries",
            _ms(opened),
            f"msgspec floor {_ms(floor)}",
            f"{opened / floor:.2f}x (goal <= 1.5x)",
        )
    )

    first, again, new_process = _reopen(repeat)
    rows.append(
        (
            "2 reopen + buildContext, same process (cache warm)",
            _ms(again),
            f"first open {_ms(first)}",
            f"{again / first:.3f}x (goal <= 0.05x)",
        )
    )
    rows.append(
        (
            "2 reopen + buildContext, new process (cache on disk)",
            _ms(new_process),
            f"first open {_ms(first)}",
            f"{new_process / first:.3f}x (goal <= 0.05x)",
        )
    )

    cold, first_query, warm, query, stat_floor = _list_figures(10_000, 100, repeat * 2)
    rows.append(
        (
            "3 session/list, 10,000 sessions / 100 folders, warm",
            _ms(warm),
            f"lstat every file {_ms(stat_floor)}",
            f"{warm / stat_floor:.2f}x; {'ok' if warm < 0.05 else 'MISSED'} (goal < 50 ms)",
        )
    )
    rows.append(
        ("3 session/list with a query, warm", _ms(query), "-", f"{'ok' if query < 0.02 else 'MISSED'} (goal < 20 ms)")
    )
    rows.append(
        ("3 session/list, cold index rebuild", _ms(cold), "-", f"{'ok' if cold < 3 else 'MISSED'} (goal < 3 s)")
    )
    rows.append(("3 first query after it (builds the trigram index)", _ms(first_query), "-", "(no goal)"))

    requests, pipelined, rounds = (500, 1000, 1) if args.quick else (2000, 5000, 3)
    echo, side = asyncio.run(_append_latency(requests, pipelined, rounds))
    rows.append(
        (
            "4 session/append round trip p50",
            f"{side['p50']:.0f} us",
            f"echo {echo['p50']:.0f} us",
            f"{side['p50'] / echo['p50']:.2f}x (goal <= 1.3x)",
        )
    )
    rows.append(
        (
            "4 session/append round trip p99",
            f"{side['p99']:.0f} us",
            f"echo {echo['p99']:.0f} us",
            f"{side['p99'] / echo['p99']:.2f}x",
        )
    )
    ratio = side["throughput"] / echo["throughput"]
    rows.append(
        (
            "4 session/append pipelined",
            f"{side['throughput']:.0f} req/s",
            f"echo {echo['throughput']:.0f} req/s",
            f"{ratio:.2f}x; {'ok' if ratio >= 0.3 else 'MISSED'} (goal >= 0.3x)",
        )
    )
    batch = asyncio.run(_batch_append(100, 20 if args.quick else 100))
    rows.append(
        (
            "4 batch append (100 entries per call, pipelined)",
            f"{batch:,.0f} entries/s",
            "-",
            f"{'ok' if batch >= 50_000 else 'MISSED'} (goal >= 50,000/s)",
        )
    )

    per_burst, grouped, single = asyncio.run(_group_sync(100, 5 if args.quick else 20))
    rows.append(
        (
            '4 fsync "always": 100 pipelined appends',
            f"{per_burst:.0f} fsyncs per burst",
            "100 without grouping",
            f"{grouped:,.0f} entries/s vs {single:,.0f}/s one at a time",
        )
    )

    startup, first_call, bare = asyncio.run(_startup(repeat))
    rows.append(
        (
            "5 start-up: spawn -> initialize answered",
            f"{_ms(startup)} ({startup / bare:.2f}x)",
            f"{_ms(bare)} python -c 'import msgspec'",
            f"{'ok' if startup < 0.3 else 'MISSED'} (goal < 300 ms)",
        )
    )
    rows.append(
        (
            "5 spawn -> first session/list answered",
            f"{_ms(first_call)} ({first_call / bare:.2f}x)",
            f"{_ms(bare)} python -c 'import msgspec'",
            f"{'ok' if first_call < 0.15 else 'MISSED'} (goal < 150 ms)",
        )
    )
    peak = asyncio.run(_peak_rss_after_open())
    rows.append(
        (
            "5 peak RSS, sidecar after opening the 50 MB session",
            f"{peak / 1024:.0f} MB",
            f"in-process open {open_peak / 1024:.0f} MB",
            f"{'ok' if peak < 150 * 1024 else 'MISSED'} (goal < 150 MB)",
        )
    )

    # ---- 6: where an agent meets the session, a fresh process, side by side with pi 1.5.2 (bench/fresh.py) ----
    f = fresh.measure(2 if args.quick else 5)
    med = {name: statistics.median(values) for name, values in f.items()}
    rows.append(
        (
            "6 fresh process: spawn -> open + buildContext",
            _ms(med["fresh"]),
            f"pi 1.5.2 {_ms(med['pi'])}",
            f"{med['fresh / pi']:.2f}x (goal <= 1.0x)",
        )
    )
    rows.append(
        (
            "6 restart (tree cache on disk), same",
            _ms(med["restart"]),
            f"pi 1.5.2 {_ms(med['pi'])}",
            f"{med['restart / pi']:.2f}x (goal <= 0.75x)",
        )
    )
    rows.append(
        (
            "6 first open + buildContext vs the same later (CPU)",
            _ms(med["first calls cpu"]),
            f"later {_ms(med['later cpu'])}",
            f"+{_ms(med['first extra cpu'])} (goal <= +20 ms)",
        )
    )
    rows.append(
        (
            "6 spawn -> first session/list answered",
            _ms(med["list"]),
            f"cpu {_ms(med['list cpu'])}",
            f"{'ok' if med['list'] < 0.15 else 'MISSED'} (goal < 150 ms)",
        )
    )
    rows.append(
        (
            "6 session-sidecar call session/list",
            _ms(med["call list"]),
            "-",
            f"{'ok' if med['call list'] < 0.2 else 'MISSED'} (goal < 200 ms)",
        )
    )
    rows.append(
        (
            "6 peak RSS after open + buildContext",
            f"{med['fresh rss']:.0f} MB",
            f"pi {med['pi rss']:.0f} MB",
            f"{'ok' if med['fresh rss'] < 100 else 'MISSED'} (goal < 100 MB)",
        )
    )
    if not args.no_scale:
        rows.extend(_scale_rows(repeat))

    hosts = _across_hosts(300 if args.quick else 1000, repeat)
    rows.append(
        (
            "9 across hosts: write on A -> didAppend on B, p50 / p99",
            f"{statistics.median(hosts['p50']):.2f} / {statistics.median(hosts['p99']):.2f} ms",
            f"CPU/append A {statistics.median(hosts['cpu_a']):.2f} ms, B {statistics.median(hosts['cpu_b']):.2f} ms",
            "(no goal; PostgreSQL LISTEN/NOTIFY)",
        )
    )
    listened, unheard = statistics.median(hosts["listened"]), statistics.median(hosts["unheard"])
    rows.append(
        (
            "9 A's append p50, B listening",
            f"{listened:.3f} ms",
            f"nobody listening {unheard:.3f} ms",
            f"{listened / unheard:.2f}x (the writer never waits for a listener)",
        )
    )

    size = load.DATA.stat().st_size / 1e6
    print(
        f"session-sidecar benchmarks ({'quick' if args.quick else f'best/median of {repeat}'}; "
        f"{load.DATA.name}: {size:.1f} MB, seed {load.SEED})"
    )
    widths = [max(len(r[i]) for r in rows + [("figure", "measured", "baseline", "ratio / goal")]) for i in range(4)]
    header = ("figure", "measured", "baseline", "ratio / goal")
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("-+-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(cell.ljust(w) for cell, w in zip(row, widths)))


if __name__ == "__main__":
    main()
