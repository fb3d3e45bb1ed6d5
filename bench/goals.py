"""Issue 42's goals, each measured for both cores (python, compiled) beside pi 1.5.2 or the goal's own baseline.

    .venv/bin/python bench/goals.py [--rounds N] [--huge-entries N] [--no-pi] [--only 4,6]

bench/run.py prints this table first (``--goals-only`` prints only it). Every
figure is taken in rounds; within a round the contenders run in an order
shuffled per round (seeded), each core chosen as an installed sidecar chooses
it (``SIDECAR_CORE`` in the environment of every process spawned), and each
ratio is taken within its round before the median over rounds: the machine is
shared, only figures taken side by side mean much.

1. a fresh process meeting load.py's 51 MB / 20,000-entry session (spawn,
   initialize, session/open, session/buildContext, answer decoded) vs pi
   1.5.2's ``SessionManager.open`` + ``buildSessionContext`` from a fresh
   process on the same bytes (fresh.py). Goal <= 0.5x.
2. the first open + buildContext of huge.py's session (400,000 entries, 1 GB;
   ``--huge-entries`` makes it smaller) and that process's peak RSS. Goal < 1 s,
   RSS < 300 MB.
3. imports of imports.py's 50 MB Codex rollout and Claude Code transcript (best of 3 in a process), as a
   ratio to our own open + buildContext of the 50 MB pi file with the same core.
   Goal <= 2x.
4. session/list with a query (limit 50, snippets) over the 10,000 sessions of
   many_sessions.py, five common words each asked for the first time, by a
   sidecar just spawned on a root whose index is complete (a restart): the
   first query its first request, and after a first plain list (a picker shows
   the sessions before the user types); and right after the first list of a
   root with no index (that list rebuilt it, the full-text index still
   building). The slowest of the five. Goal < 20 ms in every run.
5. pipelined appends vs the hand-rolled echo server (rpc_latency.py). Goal >= 0.3x.
6. spawn to the first answered session/list vs a bare ``python -c "import
   msgspec"`` timed in turn. Goal < 150 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import fresh  # noqa: E402
import huge  # noqa: E402
import imports  # noqa: E402
import load  # noqa: E402
import many_sessions  # noqa: E402
import rpc_latency  # noqa: E402
from rpc_latency import Pipe  # noqa: E402

CORES = ("python", "compiled")
SIDECAR = [sys.executable, "-m", "sidecar", "serve", "--log-level", "warning"]
# Common words of many_sessions.py's texts (most of its sessions hold each), none asked by another figure.
LIST_WORDS = ("parse", "refactor", "context", "deploy", "cache")
Row = tuple[str, str, str, str, str]  # goal's figure, python, compiled, peer / baseline, goal


@contextmanager
def core(name: str) -> Iterator[None]:
    """Every process spawned meanwhile runs ``name``'s core (sidecar/corepath reads SIDECAR_CORE at import)."""
    before = os.environ.get("SIDECAR_CORE")
    os.environ["SIDECAR_CORE"] = name
    try:
        yield
    finally:
        if before is None:
            del os.environ["SIDECAR_CORE"]
        else:
            os.environ["SIDECAR_CORE"] = before


def _check_compiled() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sidecar", "--version"],
        capture_output=True,
        text=True,
        env={**os.environ, "SIDECAR_CORE": "compiled"},
    )
    if done.returncode != 0 or "compiled" not in done.stdout:
        raise SystemExit(f"the compiled core does not run ({done.stderr.strip()[-300:]}): bash scripts/core.sh")


class Figures:
    """Values by name, one per round each."""

    def __init__(self) -> None:
        self.values: dict[str, list[float]] = {}

    def add(self, name: str, value: float) -> None:
        self.values.setdefault(name, []).append(value)

    def median(self, name: str) -> float:
        return statistics.median(self.values[name])

    def spread(self, name: str, show: Callable[[float], str]) -> str:
        ordered = sorted(self.values[name])
        if len(ordered) == 1:
            return show(ordered[0])
        return f"{show(statistics.median(ordered))} ({show(ordered[0])}-{show(ordered[-1])})"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds >= 0.1 else f"{seconds * 1000:.1f} ms"


def _x(ratio: float) -> str:
    return f"{ratio:.2f}x"


def _verdict(good: bool) -> str:
    return "ok" if good else "MISSED"


# -- 1: a fresh process vs pi 1.5.2 -------------------------------------------------------------------------------


def fresh_vs_pi(figures: Figures, rounds: int, node: Path | None, rng: random.Random) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-goals-fresh-") as tmp:
        for number in range(rounds):
            root = Path(tmp) / f"round{number}" / "sessions"
            folder = root / "--work-bench--"
            contenders = [*CORES, "pi"] if node is not None else list(CORES)
            rng.shuffle(contenders)
            walls: dict[str, float] = {}
            messages = set()
            for who in contenders:
                # Copies never opened before: a tree cache written at a sidecar's shutdown would serve the next.
                first = fresh._copy(load.DATA, folder, f"goal-{number}-{who}")
                if who == "pi":
                    assert node is not None
                    pi = fresh.pi_fresh(node, first)
                    walls[who] = pi["wall"]
                    messages.add(pi["messages"])
                else:
                    later = fresh._copy(load.DATA, folder, f"goal-{number}-{who}-later")
                    with core(who):
                        opened = asyncio.run(fresh.sidecar_fresh(root, first, later))
                    walls[who] = opened["wall"]
                    messages.add(opened["messages"])
            assert len(messages) == 1, messages  # every contender built the same context
            for who, wall in walls.items():
                figures.add(f"1 {who}", wall)
            if node is not None:
                for who in CORES:
                    figures.add(f"1 {who} / pi", walls[who] / walls["pi"])
            shutil.rmtree(root, ignore_errors=True)


# -- 2: the 1 GB session -------------------------------------------------------------------------------------------


def huge_first_open(figures: Figures, rounds: int, entries: int, rng: random.Random) -> Path:
    path = huge.data_path(entries)
    for _ in range(rounds):
        order = list(CORES)
        rng.shuffle(order)
        for who in order:
            with core(who):
                out = huge._child(path, "first", 1)
            figures.add(f"2 {who}", out["first"])
            figures.add(f"2 {who} cpu", out["first_cpu"])
            figures.add(f"2 {who} rss", out["first_rss"])
    return path


# -- 3: imports vs our own open ------------------------------------------------------------------------------------


def imports_vs_open(figures: Figures, rounds: int, rng: random.Random) -> None:
    script = str(HERE / "imports.py")
    for _ in range(rounds):
        order = list(CORES)
        rng.shuffle(order)
        for who in order:
            with core(who):
                opened = load.run("open", 3, script)[0]  # (best of 3: the first pays the imports)
                for kind in ("codex", "claude"):
                    took = load.run(kind, 3, script)[0]
                    figures.add(f"3 {who} {kind}", took)
                    figures.add(f"3 {who} {kind} / open", took / opened)
            figures.add(f"3 {who} open", opened)


# -- 4: a query right after a start --------------------------------------------------------------------------------


def many_root() -> Path:
    root = HERE / "data" / "many-10000"
    marker = root / ".generated"
    if not marker.exists():
        many_sessions.generate(root, 10_000, 100)
        marker.write_text(f"10000 100 {many_sessions.SEED}\n")
    return root


async def _queries_after_start(root: Path, list_first: bool) -> list[float]:
    """A sidecar just spawned on ``root``: each of LIST_WORDS asked once, each request's round trip; after a
    first plain list when ``list_first`` (as a picker shows the sessions before the user types)."""
    pipe = await Pipe.start(*SIDECAR)
    try:
        await pipe.call("initialize", {"sessionRoot": str(root)})
        if list_first:
            listed = await pipe.call("session/list", {"all": True})
            assert len(listed["result"]["sessions"]) == 50, listed
        times = []
        for word in LIST_WORDS:
            start = time.perf_counter()
            answer = await pipe.call("session/list", {"all": True, "query": word, "limit": 50})
            times.append(time.perf_counter() - start)
            sessions = answer["result"]["sessions"]
            assert len(sessions) == 50 and all(word in (s.get("snippet") or "").casefold() for s in sessions), word
    finally:
        await pipe.stop()
    return times


def list_after_start(figures: Figures, rounds: int, rng: random.Random) -> None:
    from sidecar.store.index.sqlite import INDEX_DIR

    root = many_root()
    for _ in range(rounds):
        order = list(CORES)
        rng.shuffle(order)
        for who in order:
            with core(who):
                shutil.rmtree(root / INDEX_DIR, ignore_errors=True)
                rebuilt = asyncio.run(_queries_after_start(root, True))  # (that first list rebuilt the index)
                # Let the background builder finish (a later start meets a complete index), then restarts.
                asyncio.run(_queries_after_start(root, False))
                restarted = asyncio.run(_queries_after_start(root, False))
                listed_first = asyncio.run(_queries_after_start(root, True))
            for case, times in (("rebuilt", rebuilt), ("restart", restarted), ("listed", listed_first)):
                figures.add(f"4 {who} {case} max", max(times))
                figures.add(f"4 {who} {case} median", statistics.median(times))


# -- 5: pipelined appends vs echo ----------------------------------------------------------------------------------


def appends_vs_echo(figures: Figures, rounds: int, pipelined: int, rng: random.Random) -> None:
    args = argparse.Namespace(requests=200, pipelined=pipelined, per_session=100)
    with tempfile.TemporaryDirectory(prefix="bench-goals-append-") as tmp:
        for number in range(rounds):
            order = [*CORES, "echo"]
            rng.shuffle(order)
            rates: dict[str, float] = {}
            for who in order:
                if who == "echo":
                    echo = [sys.executable, str(HERE / "echo_server.py")]
                    rates[who] = asyncio.run(rpc_latency.measure(echo, False, args, Path(tmp)))["throughput"]
                    continue
                with core(who):
                    measured = asyncio.run(rpc_latency.measure(SIDECAR, True, args, Path(tmp) / f"{who}{number}"))
                rates[who] = measured["throughput"]
            for who, rate in rates.items():
                figures.add(f"5 {who}", rate)
            for who in CORES:
                figures.add(f"5 {who} / echo", rates[who] / rates["echo"])


# -- 6: spawn to the first list ------------------------------------------------------------------------------------


async def _first_list(root: Path) -> float:
    start = time.perf_counter()
    pipe = await Pipe.start(*SIDECAR)
    await pipe.call("initialize", {"sessionRoot": str(root)})
    await pipe.call("session/list", {})
    took = time.perf_counter() - start
    await pipe.stop()
    return took


def first_list(figures: Figures, rounds: int, rng: random.Random) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-goals-start-") as tmp:
        for _ in range(rounds):
            order = [*CORES, "bare"]
            rng.shuffle(order)
            took: dict[str, float] = {}
            for who in order:
                if who == "bare":
                    start = time.perf_counter()
                    subprocess.run([sys.executable, "-c", "import msgspec"], check=True)
                    took[who] = time.perf_counter() - start
                    continue
                with core(who):
                    took[who] = asyncio.run(_first_list(Path(tmp)))
            for who, value in took.items():
                figures.add(f"6 {who}", value)
            for who in CORES:
                figures.add(f"6 {who} / bare", took[who] / took["bare"])


# -- the table -----------------------------------------------------------------------------------------------------


FIGURES = (1, 2, 3, 4, 5, 6)


def measure(
    rounds: int,
    huge_entries: int,
    with_pi: bool,
    pipelined: int,
    seed: int = 42,
    only: frozenset[int] = frozenset(FIGURES),
) -> list[Row]:
    """The table's rows of the figures in ``only`` (all six unless told)."""
    _check_compiled()
    fresh.compile_bytecode()
    node = fresh.ensure_pi15() if with_pi and 1 in only else None
    if only & {1, 3} and not load.DATA.exists():
        load.generate(load.DATA)
    for source, generate in ((imports.CODEX, imports.generate_codex), (imports.CLAUDE, imports.generate_claude)):
        if 3 in only and not source.exists():
            generate(source)
    rng = random.Random(seed)
    f = Figures()
    if 1 in only:
        fresh_vs_pi(f, rounds, node, rng)
    if 2 in only:
        huge_path = huge_first_open(f, rounds, huge_entries, rng)
    if 3 in only:
        imports_vs_open(f, rounds, rng)
    if 4 in only:
        list_after_start(f, rounds, rng)
    if 5 in only:
        appends_vs_echo(f, rounds, pipelined, rng)
    if 6 in only:
        first_list(f, rounds, rng)

    def each(show: Callable[[str], str]) -> tuple[str, str]:
        return show("python"), show("compiled")

    rows: list[Row] = []
    if 1 in only:
        _rows_1(rows, f, node, each)
    if 2 in only:
        _rows_2(rows, f, huge_path, huge_entries, each)
    if 3 in only:
        _rows_3(rows, f, each)
    if 4 in only:
        _rows_4(rows, f, each)
    if 5 in only:
        _rows_5(rows, f, each)
    if 6 in only:
        _rows_6(rows, f, each)
    return rows


Each = Callable[[Callable[[str], str]], tuple[str, str]]


def _rows_1(rows: list[Row], f: Figures, node: Path | None, each: Each) -> None:
    pi = f.spread("1 pi", _ms) if node is not None else "(pi not run)"
    rows.append(
        ("1 fresh process: open + context, 51 MB", *each(lambda c: f.spread(f"1 {c}", _ms)), f"pi 1.5.2 {pi}", "")
    )
    if node is not None:
        ratios = each(lambda c: f.spread(f"1 {c} / pi", _x))
        good = all(f.median(f"1 {c} / pi") <= 0.5 for c in CORES)
        rows.append(("1   / pi 1.5.2", *ratios, "", f"{_verdict(good)}: <= 0.5x"))


def _rows_2(rows: list[Row], f: Figures, huge_path: Path, huge_entries: int, each: Each) -> None:
    size = f"{huge_path.stat().st_size / 1e9:.2f} GB, {huge_entries:,} entries"
    rows.append((f"2 first open + context, {size}", *each(lambda c: f.spread(f"2 {c}", _ms)), "-", ""))
    rows[-1] = (*rows[-1][:4], f"{_verdict(all(f.median(f'2 {c}') < 1 for c in CORES))}: < 1 s")
    rows.append(("2   its CPU", *each(lambda c: f.spread(f"2 {c} cpu", _ms)), "-", ""))
    rss_good = all(f.median(f"2 {c} rss") < 300 for c in CORES)
    show_mb: Callable[[float], str] = lambda mb: f"{mb:.0f} MB"  # noqa: E731
    rows.append(
        ("2   peak RSS", *each(lambda c: f.spread(f"2 {c} rss", show_mb)), "-", f"{_verdict(rss_good)}: < 300 MB")
    )


def _rows_3(rows: list[Row], f: Figures, each: Each) -> None:
    rows.append(("3 open + context of the 50 MB pi file", *each(lambda c: f.spread(f"3 {c} open", _ms)), "-", ""))
    for kind, label in (("codex", "Codex rollout"), ("claude", "Claude Code transcript")):
        rows.append((f"3 import of the 50 MB {label}", *each(lambda c: f.spread(f"3 {c} {kind}", _ms)), "-", ""))
        good = all(f.median(f"3 {c} {kind} / open") <= 2 for c in CORES)
        rows.append(
            ("3   / our open", *each(lambda c: f.spread(f"3 {c} {kind} / open", _x)), "", f"{_verdict(good)}: <= 2x")
        )


def _rows_4(rows: list[Row], f: Figures, each: Each) -> None:
    for case, label in (
        ("restart", "the first request"),
        ("listed", "after a first plain list"),
        ("rebuilt", "after a first list that rebuilt the index"),
    ):
        good = all(max(f.values[f"4 {c} {case} max"]) < 0.02 for c in CORES)
        rows.append(
            (
                f"4 query after a start ({label}): slowest of 5",
                *each(lambda c: f.spread(f"4 {c} {case} max", _ms)),
                "-",
                f"{_verdict(good)}: < 20 ms every run",
            )
        )
        rows.append(("4   median of the 5", *each(lambda c: f.spread(f"4 {c} {case} median", _ms)), "-", ""))


def _rows_5(rows: list[Row], f: Figures, each: Each) -> None:
    show_rate: Callable[[float], str] = lambda rate: f"{rate / 1000:.1f}k/s"  # noqa: E731
    rows.append(
        (
            "5 session/append pipelined",
            *each(lambda c: f.spread(f"5 {c}", show_rate)),
            f"echo {f.spread('5 echo', show_rate)}",
            "",
        )
    )
    good = all(f.median(f"5 {c} / echo") >= 0.3 for c in CORES)
    rows.append(("5   / echo", *each(lambda c: f.spread(f"5 {c} / echo", _x)), "", f"{_verdict(good)}: >= 0.3x"))


def _rows_6(rows: list[Row], f: Figures, each: Each) -> None:
    good = all(f.median(f"6 {c}") < 0.15 for c in CORES)
    rows.append(
        (
            "6 spawn -> first session/list answered",
            *each(lambda c: f.spread(f"6 {c}", _ms)),
            f"python -c 'import msgspec' {f.spread('6 bare', _ms)}",
            f"{_verdict(good)}: < 150 ms",
        )
    )
    rows.append(("6   / bare start", *each(lambda c: f.spread(f"6 {c} / bare", _x)), "", ""))


def print_table(rows: list[Row], rounds: int) -> None:
    header: Row = ("issue 42 goal", "python core", "compiled core", "pi 1.5.2 / baseline", "goal")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(5)]
    print(f"issue 42's goals, both cores, {rounds} rounds, median (min-max); load {os.getloadavg()[0]:.1f}")
    print(" | ".join(cell.ljust(width) for cell, width in zip(header, widths)))
    print("-+-".join("-" * width for width in widths))
    for row in rows:
        print(" | ".join(cell.ljust(width) for cell, width in zip(row, widths)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--huge-entries", type=int, default=400_000, help="entries of figure 2's session (1 GB)")
    parser.add_argument("--pipelined", type=int, default=5000, help="appends in figure 5's pipelined burst")
    parser.add_argument("--no-pi", action="store_true", help="leave pi 1.5.2 out (no Node install)")
    parser.add_argument(
        "--only", type=_figure_numbers, default=frozenset(FIGURES), help="these figures alone, e.g. 4,6"
    )
    args = parser.parse_args()
    print_table(measure(args.rounds, args.huge_entries, not args.no_pi, args.pipelined, only=args.only), args.rounds)


def _figure_numbers(text: str) -> frozenset[int]:
    numbers = frozenset(int(part) for part in text.split(",") if part.strip())
    if not numbers or not numbers <= set(FIGURES):
        raise argparse.ArgumentTypeError(f"figures are {', '.join(map(str, FIGURES))}: {text!r}")
    return numbers


if __name__ == "__main__":
    main()
