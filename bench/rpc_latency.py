"""Round-trip latency and pipelined throughput of ``session/append``, against an echo server.

    python bench/rpc_latency.py [--requests 2000] [--pipelined 5000]

Both servers run as subprocesses over pipes with LSP framing and are driven
by the same client loop. The sidecar appends one user message per request to
a session that already has its file (a user and an assistant message), so
each append is written to the file and folded into the listing index (fsync
policy "never", so the figure is the protocol's, not the disk's); the session
is rotated every ``--per-session`` appends, because append also estimates the
context, which grows with the session.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import msgspec

_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode
HERE = Path(__file__).resolve().parent


class Pipe:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.next_id = 0

    @classmethod
    async def start(cls, *argv: str) -> Pipe:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=1 << 26,
        )
        return cls(process)

    def send(self, method: str, params: dict) -> int:
        self.next_id += 1
        body = _encode({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))  # type: ignore[union-attr]
        return self.next_id

    async def receive(self) -> dict:
        stdout = self.process.stdout
        assert stdout is not None
        length = 0
        while (line := await stdout.readline()) != b"\r\n":
            if not line:
                raise EOFError("server closed stdout")
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        message = _decode(await stdout.readexactly(length))
        if "error" in message:
            raise RuntimeError(message["error"])
        return message

    async def call(self, method: str, params: dict) -> dict:
        self.send(method, params)
        return await self.receive()

    async def stop(self) -> None:
        self.process.stdin.close()  # type: ignore[union-attr]
        await self.process.wait()


class Workload:
    """session/append params, in a fresh session every ``per_session`` calls (sidecar only)."""

    def __init__(self, pipe: Pipe, sidecar: bool, per_session: int) -> None:
        self.pipe, self.sidecar, self.per_session = pipe, sidecar, per_session
        self.count = 0
        self.session = ""

    async def params(self) -> dict:
        if self.count % self.per_session == 0:
            self.session = f"bench-{self.count}"
            if self.sidecar:
                await self.pipe.call("session/create", {"cwd": "/bench", "sessionId": self.session})
                # A first exchange, so the session has its file (as any real one soon does): every
                # measured append is then written to it and folded into the listing index.
                await self.pipe.call(
                    "session/append",
                    {
                        "sessionId": self.session,
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
        self.count += 1
        text = f"message {self.count}: " + "lorem ipsum " * 8
        return {
            "sessionId": self.session,
            "entries": [{"type": "message", "message": {"role": "user", "content": text}}],
        }


async def pipelined(pipe: Pipe, method: str, batch: list[dict]) -> float:
    """Seconds to send every request of ``batch`` without waiting, then read every answer."""
    start = time.perf_counter()
    for params in batch:
        pipe.send(method, params)
    for _ in batch:
        await pipe.receive()
    return time.perf_counter() - start


async def measure(argv: list[str], sidecar: bool, args: argparse.Namespace, root: Path) -> dict[str, float]:
    pipe = await Pipe.start(*argv)
    if sidecar:
        await pipe.call("initialize", {"sessionRoot": str(root), "settings": {"store": {"fsync": "never"}}})
    work = Workload(pipe, sidecar, args.per_session)
    for _ in range(200):  # warm up
        await pipe.call("session/append", await work.params())
    samples = []
    for _ in range(args.requests):
        params = await work.params()
        start = time.perf_counter_ns()
        await pipe.call("session/append", params)
        samples.append((time.perf_counter_ns() - start) / 1000)
    batch = [await work.params() for _ in range(args.pipelined)]
    server_cpu = cpu_seconds(pipe.process.pid)
    elapsed = await pipelined(pipe, "session/append", batch)
    server_cpu = cpu_seconds(pipe.process.pid) - server_cpu
    await pipe.stop()
    samples.sort()
    return {
        "p50": statistics.median(samples),
        "p99": samples[int(len(samples) * 0.99) - 1],
        "throughput": len(batch) / elapsed,
        "server_cpu_us": server_cpu / len(batch) * 1e6,
    }


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` (every thread) from /proc; NaN where there is none.

    On a loaded machine the pipelined throughput is mostly the share of the cores each process gets;
    the server's CPU time per request is the part of the figure that is the server's own."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def service_only(args: argparse.Namespace, root: Path) -> float:
    """p50 of SessionService.append in this process, same workload (index upkeep included): what no transport removes."""
    from sidecar import wire
    from sidecar.config import Settings, StoreSettings
    from sidecar.service import SessionService

    service = SessionService(root, Settings(store=StoreSettings(fsync="never")))
    samples = []
    for count in range(args.requests):
        if count % args.per_session == 0:
            session_id = f"inproc-{count}"
            service.create(wire.CreateParams(cwd="/bench", sessionId=session_id))
            service.append(
                wire.AppendParams(
                    sessionId=session_id,
                    entries=[
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
                )
            )
        text = f"message {count}: " + "lorem ipsum " * 8
        params = wire.AppendParams(
            sessionId=session_id, entries=[{"type": "message", "message": {"role": "user", "content": text}}]
        )
        start = time.perf_counter_ns()
        service.append(params)
        samples.append((time.perf_counter_ns() - start) / 1000)
    return statistics.median(samples)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--pipelined", type=int, default=5000)
    parser.add_argument("--per-session", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3, help="alternate echo and sidecar this many times")
    args = parser.parse_args()
    # Alternating rounds, then the median of each figure: a busy moment on a
    # shared machine hits one round of both servers, not one server alone.
    rounds: dict[str, list[dict[str, float]]] = {"echo": [], "sidecar": []}
    with tempfile.TemporaryDirectory() as tmp:
        for number in range(args.rounds):
            rounds["echo"].append(await measure([sys.executable, str(HERE / "echo_server.py")], False, args, Path(tmp)))
            rounds["sidecar"].append(
                await measure(
                    [sys.executable, "-m", "sidecar", "serve", "--log-level", "warning"],
                    True,
                    args,
                    Path(tmp) / f"s{number}",
                )
            )
    echo = {key: statistics.median(r[key] for r in rounds["echo"]) for key in rounds["echo"][0]}
    sidecar = {key: statistics.median(r[key] for r in rounds["sidecar"]) for key in rounds["sidecar"][0]}
    ratios = sorted(s["p50"] / e["p50"] for e, s in zip(rounds["echo"], rounds["sidecar"]))
    print(
        f"session/append over stdio, LSP framing: {args.requests} round trips, {args.pipelined} pipelined, "
        f"median of {args.rounds} alternating rounds"
    )
    print(f"{'server':<22}{'p50 us':>10}{'p99 us':>10}{'req/s pipelined':>18}")
    for name, figures in (("echo (hand-rolled)", echo), ("session-sidecar", sidecar)):
        print(f"{name:<22}{figures['p50']:>10.0f}{figures['p99']:>10.0f}{figures['throughput']:>18.0f}")
    print(
        f"{'ratio sidecar/echo':<22}{sidecar['p50'] / echo['p50']:>10.2f}{sidecar['p99'] / echo['p99']:>10.2f}"
        f"{sidecar['throughput'] / echo['throughput']:>18.2f}"
    )
    print(f"p50 ratio per round: {', '.join(f'{r:.2f}' for r in ratios)}")
    throughputs = sorted(s["throughput"] / e["throughput"] for e, s in zip(rounds["echo"], rounds["sidecar"]))
    print(f"pipelined throughput ratio per round: {', '.join(f'{r:.2f}' for r in throughputs)}")
    print(
        f"server CPU per pipelined append: echo {echo['server_cpu_us']:.0f} us, sidecar {sidecar['server_cpu_us']:.0f} us"
        f" (load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        inproc = service_only(args, Path(tmp))
    print(f"SessionService.append in-process p50: {inproc:.0f} us (included in the sidecar's round trip)")
    print(f"transport overhead beyond the echo server at p50: {sidecar['p50'] - echo['p50'] - inproc:.0f} us")
    print("goal: p50 within 1.3x of the echo server")


if __name__ == "__main__":
    asyncio.run(main())
