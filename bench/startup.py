"""Sidecar start-up: spawn -> ``initialize`` answered, and -> the first session call answered.

    .venv/bin/python bench/startup.py [--repeat 15] [--jsonl] [--before REV] [--importtime N] [--source]

Prints min / median / max in milliseconds of:

- ``python -c pass``: the interpreter alone, the floor nothing here can go below;
- ``python -c "import msgspec"``: a Python that starts and imports msgspec, the baseline
  of issue 42's goal (spawn -> first session/list < 150 ms where this takes ~45 ms); every
  sidecar row shows its median as a ratio to this one's, measured in the same run;
- ``initialize``: spawn ``python -m sidecar serve`` until the initialize answer
  (figure 5 of bench/run.py, which times the same thing);
- ``+ session/list``: spawn until the answer to a ``session/list`` sent right
  after the initialize answer (what a client waits for before its first real call).

Each run is a fresh process on a fresh, empty sessions root. On Linux the
``cpu`` rows give the CPU time the sidecar process had used (all its threads,
from /proc/PID/task/*/schedstat) when each answer arrived: unlike wall time it
hardly moves when other work loads the machine.

Each side's bytecode is written first (``compileall``), as ``pip install`` of the wheel does and
bench/run.py does: with ``PYTHONDONTWRITEBYTECODE`` set, as on the shared machine, a source
checkout compiles every module it imports at every start (~75 ms of CPU of a serving start,
181 ms against 105 to the first session/list), which no installed sidecar does. ``--source``
measures that case instead: each side runs from a copy of its ``sidecar/`` without bytecode.

``--before REV`` measures that commit too (its files taken out with ``git archive`` into a
temporary folder put first on PYTHONPATH), the two sides and the baselines taking
turns run by run, so that the machine's drift falls on all of them alike. ``--importtime N``
adds, for each side, the N slowest imports of one serving start (``python -X importtime``,
through the first session/list), by cumulative time.
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import os
import re
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

import msgspec  # noqa: E402
from rpc_latency import Pipe  # noqa: E402

# -P: the current folder is not put before PYTHONPATH, which names the side measured.
SIDECAR = [sys.executable, "-P", "-m", "sidecar", "serve", "--log-level", "warning"]


def _cpu_seconds(pid: int) -> float | None:
    """CPU time used so far by every thread of ``pid`` (Linux), else None."""
    total = 0
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            total += int((task / "schedstat").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return total / 1e9


async def _one(tree: Path, root: str, jsonl: bool) -> tuple[float, float, float | None, float | None]:
    os.environ["PYTHONPATH"] = str(tree)  # this side's sidecar package first (the spawn inherits it)
    start = time.perf_counter()
    pipe = await Pipe.start(*SIDECAR, *(["--jsonl"] if jsonl else []))
    if jsonl:
        pipe.send = _jsonl_send(pipe)  # type: ignore[method-assign]
        pipe.receive = _jsonl_receive(pipe)  # type: ignore[method-assign]
    await pipe.call("initialize", {"sessionRoot": root})
    initialized = time.perf_counter() - start
    cpu_initialized = _cpu_seconds(pipe.process.pid)
    await pipe.call("session/list", {})
    listed = time.perf_counter() - start
    cpu_listed = _cpu_seconds(pipe.process.pid)
    await pipe.stop()
    return initialized, listed, cpu_initialized, cpu_listed


def _jsonl_send(pipe: Pipe):  # noqa: ANN202
    import msgspec

    def send(method: str, params: dict) -> int:
        pipe.next_id += 1
        body = msgspec.json.encode({"jsonrpc": "2.0", "id": pipe.next_id, "method": method, "params": params})
        pipe.process.stdin.write(body + b"\n")  # type: ignore[union-attr]
        return pipe.next_id

    return send


def _jsonl_receive(pipe: Pipe):  # noqa: ANN202
    import msgspec

    async def receive() -> dict:
        line = await pipe.process.stdout.readline()  # type: ignore[union-attr]
        if not line:
            raise EOFError("server closed stdout")
        message = msgspec.json.decode(line)
        if "error" in message:
            raise RuntimeError(message["error"])
        return message

    return receive


def _bare(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def _row(name: str, times: list[float], baseline: list[float] | None = None) -> str:
    ms = sorted(t * 1000 for t in times)
    ratio = f" {statistics.median(ms) / (statistics.median(baseline) * 1000):6.2f}x" if baseline else ""
    return f"{name:<38} {ms[0]:7.1f} {statistics.median(ms):7.1f} {ms[-1]:7.1f}{ratio}"


_IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)")


def _importtime(tree: Path, top: int) -> list[str]:
    """The ``top`` slowest imports (cumulative) of one start of ``tree``'s sidecar through its first session/list."""
    with tempfile.TemporaryDirectory() as root:
        frames = b"".join(
            msgspec.json.encode({"jsonrpc": "2.0", "id": n, "method": method, "params": params}) + b"\n"
            for n, (method, params) in enumerate([("initialize", {"sessionRoot": root}), ("session/list", {})], 1)
        )
        done = subprocess.run(
            [sys.executable, "-P", "-X", "importtime", "-m", "sidecar", "serve", "--jsonl"],
            input=frames,
            capture_output=True,
            env={**os.environ, "PYTHONPATH": str(tree)},
            check=True,
        )
    found = []
    for line in done.stderr.decode().splitlines():
        match = _IMPORT_LINE.match(line)
        if match:
            found.append((int(match.group(2)), len(match.group(3)) // 2, match.group(4)))
    total = sum(cumulative for cumulative, depth, _ in found if depth == 0)
    lines = [f"  {total / 1000:7.1f} ms in all ({len(found)} modules)"]
    for cumulative, depth, name in sorted(found, reverse=True)[:top]:
        lines.append(f"  {cumulative / 1000:7.1f} ms  {'  ' * depth}{name}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--jsonl", action="store_true", help="--jsonl framing instead of LSP's")
    parser.add_argument("--before", metavar="REV", help="measure this commit too, run by run beside this tree")
    parser.add_argument("--importtime", type=int, default=0, metavar="N", help="the N slowest imports of each side")
    parser.add_argument(
        "--source", action="store_true", help="no bytecode: every module compiled at every start (see the doc)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as scratch:
        sides = {"this tree": REPO}
        if args.before:
            before = Path(scratch) / "before"
            before.mkdir()
            # The commit's files alone (git archive): no worktree is registered in the repository.
            archive = subprocess.run(["git", "-C", str(REPO), "archive", args.before], capture_output=True, check=True)
            subprocess.run(["tar", "-x", "-C", str(before)], input=archive.stdout, check=True)
            sides = {f"before ({args.before})": before, "after (this tree)": REPO}
        sides = {
            side: _prepared(tree, Path(scratch) / f"source-{number}", args.source)
            for number, (side, tree) in enumerate(sides.items())
        }
        _measure(sides, args, Path(scratch))


def _prepared(tree: Path, scratch: Path, source: bool) -> Path:
    """The tree to put on PYTHONPATH: ``tree`` with its package's bytecode written (as installed), or
    with ``source``, a copy of its package without any bytecode (compiled at every start)."""
    if not source:
        compileall.compile_dir(str(tree / "sidecar"), quiet=1)
        return tree
    shutil.copytree(tree / "sidecar", scratch / "sidecar", ignore=shutil.ignore_patterns("__pycache__"))
    return scratch


def _measure(sides: dict[str, Path], args: argparse.Namespace, scratch: Path) -> None:
    bare: dict[str, list[float]] = {"pass": [], "import msgspec": []}
    runs: dict[str, list[tuple[float, float, float | None, float | None]]] = {side: [] for side in sides}
    for number in range(args.repeat):
        for code in bare:
            bare[code].append(_bare(code))
        order = list(sides) if number % 2 == 0 else list(reversed(sides))
        for side in order:
            root = scratch / f"{len(runs[side])}-{side[:6]}"
            runs[side].append(asyncio.run(_one(sides[side], str(root), args.jsonl)))
    baseline = bare["import msgspec"]
    code = "no bytecode, compiled at every start" if args.source else "bytecode written, as installed"
    print(
        f"sidecar start-up, {args.repeat} runs ({'jsonl' if args.jsonl else 'lsp'} framing, {code}), ms;"
        " x: median / import msgspec's"
    )
    print(f"{'':<38} {'min':>7} {'median':>7} {'max':>7} {'ratio':>7}")
    print(_row("python -c pass", bare["pass"], baseline))
    print(_row('python -c "import msgspec"', baseline, baseline))
    for side, side_runs in runs.items():
        initialized, listed, cpu_initialized, cpu_listed = (list(column) for column in zip(*side_runs))
        prefix = f"{side}: " if len(sides) > 1 else ""
        print(_row(f"{prefix}initialize", initialized, baseline))
        print(_row(f"{prefix}+ session/list", listed, baseline))
        if None not in cpu_initialized + cpu_listed:
            print(_row(f"{prefix}cpu: initialize", cpu_initialized))  # type: ignore[arg-type]  # no None (checked above)
            print(_row(f"{prefix}cpu: + session/list", cpu_listed))  # type: ignore[arg-type]  # no None (checked above)
    for side, tree in sides.items() if args.importtime else ():
        print(f"\n{side}: the {args.importtime} slowest imports through the first session/list (-X importtime)")
        print("\n".join(_importtime(tree, args.importtime)))


if __name__ == "__main__":
    main()
