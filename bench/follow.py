"""What following another writer costs (issue 28), and how soon a watching client hears of it.

    python bench/follow.py [--requests 2000] [--rounds 4] [--notes 200]

1. ``session/append`` round trip with the check on every call (a stat of the
   file against what the session last saw, and an fstat after each of its own
   writes) against the same sidecar with the check taken out (a benchmark-only
   patch: ``Session.follow``, ``changed_behind`` and ``_saw_own_write`` made
   no-ops). Same workload as rpc_latency.py; the two run side by side, request by
   request, so the shared machine's noise falls on both alike.
   Goal: the check costs the round trip no more than 5%.
2. The check alone, in process: ``Session.follow`` on an unchanged file.
3. A session opened with ``watch: true``: time from another program's append
   (one write of a pi line) to the ``session/didAppend`` notification. Goal: 100 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from rpc_latency import Pipe, Workload

WITHOUT_CHECK = (
    "import sidecar.store.files.session as s\n"
    "s.FileSession.follow = lambda self, wait=True: None\n"
    "s.FileSession.changed_behind = lambda self: False\n"
    "s.FileSession._saw_own_write = lambda self: None\n"
    "from sidecar.cli import main\n"
    "raise SystemExit(main())\n"
)


async def paired_round_trips(root: Path, requests: int, per_session: int) -> tuple[list[float], list[float]]:
    """Round trips of two sidecars driven in lockstep: one with the check, one without.

    Each request goes to one, then the same request to the other (which goes first
    alternates), so a busy moment of the shared machine falls on both alike.
    """
    with_check = await Pipe.start(sys.executable, "-m", "sidecar", "serve", "--log-level", "warning")
    without = await Pipe.start(sys.executable, "-c", WITHOUT_CHECK, "serve", "--log-level", "warning")
    pipes = [with_check, without]
    works = []
    for number, pipe in enumerate(pipes):
        await pipe.call(
            "initialize", {"sessionRoot": str(root / str(number)), "settings": {"store": {"fsync": "never"}}}
        )
        works.append(Workload(pipe, True, per_session))
    for _ in range(200):
        for pipe, work in zip(pipes, works):
            await pipe.call("session/append", await work.params())
    samples: list[list[float]] = [[], []]
    for count in range(requests):
        order = (0, 1) if count % 2 == 0 else (1, 0)
        for index in order:
            params = await works[index].params()
            start = time.perf_counter_ns()
            await pipes[index].call("session/append", params)
            samples[index].append((time.perf_counter_ns() - start) / 1000)
    for pipe in pipes:
        await pipe.stop()
    return sorted(samples[0]), sorted(samples[1])


def in_process(requests: int, per_session: int) -> tuple[float, float]:
    """p50 microseconds of what an inline append runs (``is_open``, then ``SessionService.append``),
    with the check and with it taken out (on that service's sessions), request by request in turn."""
    from sidecar import wire
    from sidecar.config import Settings, StoreSettings
    from sidecar.service import SessionService

    def no_check(session) -> None:
        session.follow = lambda wait=True: None
        session.changed_behind = lambda: False
        session._saw_own_write = lambda: None

    samples: list[list[float]] = [[], []]
    with tempfile.TemporaryDirectory() as tmp:
        services = [SessionService(Path(tmp) / str(n), Settings(store=StoreSettings(fsync="never"))) for n in (0, 1)]
        sids = ["", ""]
        for count in range(requests):
            for index in (0, 1) if count % 2 == 0 else (1, 0):
                service = services[index]
                if count % per_session == 0:
                    sids[index] = service.create(wire.CreateParams(cwd="/bench")).sessionId
                    if index == 1:
                        no_check(service.session(sids[index]))
                    service.append(
                        wire.AppendParams(
                            sessionId=sids[index],
                            entries=[
                                {"type": "message", "message": {"role": "user", "content": "start"}},
                                {
                                    "type": "message",
                                    "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
                                },
                            ],
                        )
                    )
                params = wire.AppendParams(
                    sessionId=sids[index],
                    entries=[
                        {
                            "type": "message",
                            "message": {"role": "user", "content": f"message {count}: " + "lorem ipsum " * 8},
                        }
                    ],
                )
                start = time.perf_counter_ns()
                service.is_open(sids[index])
                service.append(params)
                samples[index].append((time.perf_counter_ns() - start) / 1000)
        for service in services:
            service.close_all()
    return statistics.median(samples[0]), statistics.median(samples[1])


def check_alone(count: int) -> float:
    """Microseconds of one ``Session.follow`` on a file nobody changed."""
    from sidecar import wire
    from sidecar.service import SessionService

    with tempfile.TemporaryDirectory() as tmp:
        service = SessionService(Path(tmp))
        sid = service.create(wire.CreateParams(cwd="/bench")).sessionId
        service.append(
            wire.AppendParams(
                sessionId=sid,
                entries=[
                    {"type": "message", "message": {"role": "user", "content": "start"}},
                    {"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}},
                ],
            )
        )
        session = service.session(sid)
        start = time.perf_counter_ns()
        for _ in range(count):
            session.follow()
        elapsed = time.perf_counter_ns() - start
        service.close_all()
    return elapsed / count / 1000


async def notification_latency(root: Path, notes: int) -> list[float]:
    pipe = await Pipe.start(sys.executable, "-m", "sidecar", "serve", "--log-level", "warning")
    await pipe.call("initialize", {"sessionRoot": str(root), "settings": {"store": {"fsync": "never"}}})
    created = (await pipe.call("session/create", {"cwd": "/bench", "watch": True}))["result"]
    sid, path = created["sessionId"], Path(created["path"])
    answer = await pipe.call(
        "session/append",
        {
            "sessionId": sid,
            "entries": [
                {"type": "message", "message": {"role": "user", "content": "start"}},
                {"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}},
            ],
        },
    )
    leaf = answer["result"]["leafId"]
    samples = []
    for n in range(notes):
        entry_id = f"ext{n:05d}"
        line = json.dumps(
            {
                "type": "message",
                "id": entry_id,
                "parentId": leaf,
                "timestamp": "2025-01-01T00:00:00.000Z",
                "message": {"role": "user", "content": f"from another program {n}"},
            },
            separators=(",", ":"),
        )
        start = time.perf_counter_ns()
        with open(path, "ab") as out:  # as pi's appendFileSync: one write of the line
            out.write(line.encode() + b"\n")
        while True:
            message = await pipe.receive()
            if message.get("method") == "session/didAppend" and message["params"]["leafId"] == entry_id:
                break
        samples.append((time.perf_counter_ns() - start) / 1e6)
        leaf = entry_id
        await asyncio.sleep(0.005)
    await pipe.stop()
    return sorted(samples)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--per-session", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=6, help="alternate with and without the check this many times")
    parser.add_argument("--notes", type=int, default=200)
    args = parser.parse_args()
    with_check: list[list[float]] = []
    without: list[list[float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for number in range(args.rounds):
            on_samples, off_samples = await paired_round_trips(Path(tmp) / str(number), args.requests, args.per_session)
            with_check.append(on_samples)
            without.append(off_samples)
    p50 = lambda s: statistics.median(s)  # noqa: E731
    p99 = lambda s: s[int(len(s) * 0.99) - 1]  # noqa: E731
    on, off = statistics.median(map(p50, with_check)), statistics.median(map(p50, without))
    on99, off99 = statistics.median(map(p99, with_check)), statistics.median(map(p99, without))
    ratios = sorted(p50(a) / p50(b) for a, b in zip(with_check, without))
    print(
        f"session/append round trip, {args.requests} per round and sidecar (the two in lockstep), "
        f"median of {args.rounds} rounds"
    )
    print(f"{'sidecar':<28}{'p50 us':>10}{'p99 us':>10}")
    print(f"{'with the check':<28}{on:>10.0f}{on99:>10.0f}")
    print(f"{'check taken out':<28}{off:>10.0f}{off99:>10.0f}")
    print(f"{'ratio':<28}{on / off:>10.3f}{on99 / off99:>10.3f}")
    print(f"p50 ratio per round: {', '.join(f'{r:.3f}' for r in ratios)}   (goal: <= 1.05)")
    inproc_on, inproc_off = in_process(args.requests * 5, args.per_session)
    print(
        f"in process, is_open + SessionService.append p50: {inproc_on:.1f} us with the check, {inproc_off:.1f} us "
        f"without: the check costs {inproc_on - inproc_off:.1f} us = {(inproc_on - inproc_off) / off * 100:.1f}% "
        "of the round trip without it"
    )
    alone = check_alone(20000)
    print(
        f"the check alone (Session.follow, file unchanged): {alone:.2f} us = {alone / off * 100:.1f}% of the round trip"
    )
    with tempfile.TemporaryDirectory() as tmp:
        latency = await notification_latency(Path(tmp), args.notes)
    print(
        f"another program's append -> session/didAppend ({args.notes} appends): p50 {statistics.median(latency):.2f} ms, "
        f"p99 {latency[int(len(latency) * 0.99) - 1]:.2f} ms, max {latency[-1]:.2f} ms   (goal: <= 100 ms)"
    )


if __name__ == "__main__":
    asyncio.run(main())
