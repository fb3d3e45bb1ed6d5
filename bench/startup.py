"""Sidecar start-up: spawn -> ``initialize`` answered, and -> the first session call answered.

    .venv/bin/python bench/startup.py [--repeat 15] [--jsonl]

Prints min / median / max in milliseconds of:

- ``python -c pass``: the interpreter alone, the floor nothing here can go below;
- ``initialize``: spawn ``python -m sidecar serve`` until the initialize answer
  (figure 5 of bench/run.py, which times the same thing);
- ``+ session/list``: spawn until the answer to a ``session/list`` sent right
  after the initialize answer (what a client waits for before its first real call).

Each run is a fresh process on a fresh, empty sessions root. On Linux the
``cpu`` rows give the CPU time the sidecar process had used (all its threads,
from /proc/PID/task/*/schedstat) when each answer arrived: unlike wall time it
hardly moves when other work loads the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from rpc_latency import Pipe  # noqa: E402

SIDECAR = [sys.executable, "-m", "sidecar", "serve", "--log-level", "warning"]


def _cpu_seconds(pid: int) -> float | None:
    """CPU time used so far by every thread of ``pid`` (Linux), else None."""
    total = 0
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            total += int((task / "schedstat").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return total / 1e9


async def _one(root: str, jsonl: bool) -> tuple[float, float, float | None, float | None]:
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


def _bare_python(repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append(time.perf_counter() - start)
    return times


def _row(name: str, times: list[float]) -> str:
    ms = sorted(t * 1000 for t in times)
    return f"{name:<20} {ms[0]:7.1f} {statistics.median(ms):7.1f} {ms[-1]:7.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--jsonl", action="store_true", help="--jsonl framing instead of LSP's")
    args = parser.parse_args()
    bare = _bare_python(args.repeat)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for number in range(args.repeat):
            runs.append(asyncio.run(_one(str(Path(tmp) / str(number)), args.jsonl)))
    initialized, listed, cpu_initialized, cpu_listed = (list(column) for column in zip(*runs))
    print(f"sidecar start-up, {args.repeat} runs ({'jsonl' if args.jsonl else 'lsp'} framing), ms")
    print(f"{'':<20} {'min':>7} {'median':>7} {'max':>7}")
    print(_row("python -c pass", bare))
    print(_row("initialize", initialized))
    print(_row("+ session/list", listed))
    if None not in cpu_initialized + cpu_listed:
        print(_row("cpu: initialize", cpu_initialized))
        print(_row("cpu: + session/list", cpu_listed))


if __name__ == "__main__":
    main()
