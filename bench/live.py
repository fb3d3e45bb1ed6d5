"""Live sessions (issue 16): how soon an observer hears of an append, and what observers cost the writer.

    python bench/live.py [--appends 2000] [--observers 50]

One sidecar in socket mode (``serve --socket``), driven over its unix socket:

1. Write-to-notification latency: a controller appends one user message at a
   time; an observer subscribed on another connection timestamps each
   ``session/didAppend``. p50/p99 of send-of-append -> notification read.
2. The controller's append round trip on three sessions of the same server,
   request by request in turn (so the shared machine's noise falls on all
   alike): one nobody watches, one with N observers reading (N connections
   held by a separate process), and one with the same N plus one observer
   process that is SIGSTOPped (it stops reading; its events pile up to the
   high-water mark, then it is skipped until it drains).
   Goal: p50 with N observers at most 1.3x p50 with none; the stopped one changes nothing.
3. Across hosts (with --database-url, or $SIDECAR_TEST_DATABASE_URL; ``--hosts-only``
   runs only this): two sidecars with roots of their own on one fresh database
   of that server (PostgreSQL LISTEN/NOTIFY, store/postgres/notify.py). A
   controller on A appends one message at a time; an observer subscribed on B
   timestamps each didAppend: p50/p99 of send-of-append -> notification, per
   round, and the CPU time A and B spent per append. Then A's append round trip
   on two sessions in turn: one B listens to (a subscriber there), one nobody
   listens to (the writer never waits for a listener, so the ratio should be ~1x).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CLK_TCK = os.sysconf("SC_CLK_TCK")


class Conn:
    """A jsonl connection to the socket; answers by id, notifications to a callback."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.next_id = 0
        self.waiting: dict[int, asyncio.Future[Any]] = {}
        self.on_note = lambda message, at: None
        self.task = asyncio.ensure_future(self._read())

    @classmethod
    async def open(cls, path: str) -> Conn:
        reader, writer = await asyncio.open_unix_connection(path, limit=1 << 26)
        conn = cls(reader, writer)
        await conn.call("initialize", {"clientInfo": {"name": "bench"}})
        return conn

    async def _read(self) -> None:
        while line := await self.reader.readline():
            at = time.perf_counter()
            message = json.loads(line)
            if "id" in message and message["id"] in self.waiting:
                self.waiting.pop(message["id"]).set_result(message)
            else:
                self.on_note(message, at)

    async def call(self, method: str, params: Any) -> Any:
        self.next_id += 1
        future = asyncio.get_running_loop().create_future()
        self.waiting[self.next_id] = future
        self.writer.write(
            json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}).encode() + b"\n"
        )
        answer = await future
        if "error" in answer:
            raise RuntimeError(answer["error"])
        return answer["result"]


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}


def assistant(text: str) -> dict[str, Any]:
    return {"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def new_session(conn: Conn) -> str:
    sid = (await conn.call("session/create", {"cwd": "/bench"}))["sessionId"]
    await conn.call("session/append", {"sessionId": sid, "entries": [user("start"), assistant("ok")]})
    return sid


async def latency(path: str, appends: int, keep: list[Conn]) -> list[float]:
    controller, observer = await Conn.open(path), await Conn.open(path)
    keep += [controller, observer]
    sid = await new_session(controller)
    await observer.call("session/subscribe", {"sessionId": sid})
    arrived: dict[str, float] = {}
    observer.on_note = lambda m, at: (
        arrived.__setitem__(m["params"]["entries"][-1]["message"]["content"][0]["text"], at)
        if m.get("method") == "session/didAppend"
        else None
    )
    sent: dict[str, float] = {}
    for i in range(appends):
        text = f"m{i} " + "word " * 40
        sent[text] = time.perf_counter()
        await controller.call("session/append", {"sessionId": sid, "entries": [user(text)]})
    while len(arrived) < appends:
        await asyncio.sleep(0.01)
    return [(arrived[t] - sent[t]) * 1000 for t in sent]


OBSERVER_CHILD = r"""
import asyncio, json, sys
async def main(path, sid, count):
    async def one():
        reader, writer = await asyncio.open_unix_connection(path, limit=1 << 26)
        for i, (m, p) in enumerate((("initialize", {"clientInfo": {"name": "obs"}}), ("session/subscribe", {"sessionId": sid}))):
            writer.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": m, "params": p}).encode() + b"\n")
        return reader, writer  # (a writer collected closes its connection)
    readers = [await one() for _ in range(count)]
    print("ready", flush=True)
    async def drain(reader, writer):
        while await reader.read(1 << 16):
            pass
    await asyncio.gather(*(drain(r, w) for r, w in readers))
asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


async def observers(path: str, sid: str, count: int) -> asyncio.subprocess.Process:
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", OBSERVER_CHILD, path, sid, str(count), stdout=asyncio.subprocess.PIPE
    )
    assert child.stdout is not None
    assert (await child.stdout.readline()).strip() == b"ready"
    return child


async def appends_with_observers(path: str, appends: int, count: int) -> dict[str, list[float]]:
    controller = await Conn.open(path)
    sessions = {name: await new_session(controller) for name in ("none", "observed", "observed+stopped")}
    children = [
        await observers(path, sessions["observed"], count),
        await observers(path, sessions["observed+stopped"], count),
        await observers(path, sessions["observed+stopped"], 1),
    ]
    children[2].send_signal(signal.SIGSTOP)
    samples: dict[str, list[float]] = {name: [] for name in sessions}
    names = list(sessions)
    text = "word " * 40
    try:
        for _ in range(200):  # warm-up
            for name in names:
                await controller.call("session/append", {"sessionId": sessions[name], "entries": [user(text)]})
        for i in range(appends):
            order = names[i % 3 :] + names[: i % 3]
            for name in order:
                start = time.perf_counter()
                await controller.call("session/append", {"sessionId": sessions[name], "entries": [user(f"{i} {text}")]})
                samples[name].append((time.perf_counter() - start) * 1000)
    finally:
        children[2].send_signal(signal.SIGCONT)
        for child in children:
            if child.returncode is None:
                child.kill()
            code = await child.wait()
            if code != -signal.SIGKILL:
                print(f"an observer process ended early ({code})", file=sys.stderr)
    return samples


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


async def serve(root: Path, sock: str, env: dict[str, str]) -> asyncio.subprocess.Process:
    root.mkdir(parents=True, exist_ok=True)
    server = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "sidecar",
        "serve",
        "--root",
        str(root),
        "--socket",
        sock,
        stdout=asyncio.subprocess.PIPE,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), **env},
    )
    assert server.stdout is not None
    while b"ready" not in await server.stdout.readline():
        pass
    return server


async def across_hosts(url: str, appends: int, rounds: int) -> dict[str, Any]:
    """Section 3 (see the module doc) on a fresh database of ``url``'s server, dropped after."""
    from urllib.parse import urlsplit, urlunsplit

    import psycopg

    name = "bench_live_" + os.urandom(4).hex()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    db_url = urlunsplit(urlsplit(url)._replace(path="/" + name))
    env = {"SESSION_SIDECAR_DATABASE_URL": db_url}
    out: dict[str, Any] = {"p50": [], "p99": [], "cpu_a": [], "cpu_b": [], "listened": [], "unheard": []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            a = await serve(Path(tmp) / "host-a", str(Path(tmp) / "a.sock"), env)
            b = await serve(Path(tmp) / "host-b", str(Path(tmp) / "b.sock"), env)
            try:
                controller, observer = (
                    await Conn.open(str(Path(tmp) / "a.sock")),
                    await Conn.open(str(Path(tmp) / "b.sock")),
                )
                for _ in range(rounds):
                    sid = await new_session(controller)
                    await observer.call("session/subscribe", {"sessionId": sid})
                    arrived: dict[str, float] = {}
                    # B may catch up several appends at once: every entry of a didAppend arrived then.
                    observer.on_note = lambda m, at: (
                        arrived.update((e["message"]["content"][0]["text"], at) for e in m["params"]["entries"])
                        if m.get("method") == "session/didAppend"
                        else None
                    )
                    sent: dict[str, float] = {}
                    cpu_a, cpu_b = cpu_seconds(a.pid), cpu_seconds(b.pid)
                    for i in range(appends):
                        text = f"m{i} " + "word " * 40
                        sent[text] = time.perf_counter()
                        await controller.call("session/append", {"sessionId": sid, "entries": [user(text)]})
                    deadline = time.monotonic() + 60
                    while len(arrived) < appends:
                        assert time.monotonic() < deadline, f"{appends - len(arrived)} appends never reached B"
                        await asyncio.sleep(0.005)
                    out["cpu_a"].append((cpu_seconds(a.pid) - cpu_a) / appends * 1000)
                    out["cpu_b"].append((cpu_seconds(b.pid) - cpu_b) / appends * 1000)
                    lat = [(arrived[t] - sent[t]) * 1000 for t in sent]
                    out["p50"].append(pct(lat, 0.5))
                    out["p99"].append(pct(lat, 0.99))
                    await observer.call("session/unsubscribe", {"sessionId": sid})
                # A's append with and without a listening B, in turn (one session each).
                listened, unheard = await new_session(controller), await new_session(controller)
                await observer.call("session/subscribe", {"sessionId": listened})
                observer.on_note = lambda m, at: None
                sessions = {"listened": listened, "unheard": unheard}
                for i in range(rounds * appends + 100):
                    for kind in ("listened", "unheard") if i % 2 else ("unheard", "listened"):
                        start = time.perf_counter()
                        await controller.call(
                            "session/append", {"sessionId": sessions[kind], "entries": [user(f"{i} x")]}
                        )
                        if i >= 100:  # after a warm-up
                            out[kind].append((time.perf_counter() - start) * 1000)
            finally:
                for server in (a, b):
                    server.terminate()
                    await server.wait()
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return out


def print_across_hosts(found: dict[str, Any], appends: int) -> None:
    rounds = len(found["p50"])
    print(f"across hosts (PostgreSQL LISTEN/NOTIFY): write on A -> didAppend on B, {rounds} rounds of {appends}:")
    print(
        f"  p50 {statistics.median(found['p50']):.2f} ms (rounds {', '.join(f'{v:.2f}' for v in found['p50'])})   "
        f"p99 {statistics.median(found['p99']):.2f} ms (rounds {', '.join(f'{v:.2f}' for v in found['p99'])})"
    )
    print(
        f"  CPU per append: A {statistics.median(found['cpu_a']):.2f} ms, B {statistics.median(found['cpu_b']):.2f} ms"
    )
    listened, unheard = statistics.median(found["listened"]), statistics.median(found["unheard"])
    print(
        f"  A's append p50: B listening {listened:.3f} ms, nobody listening {unheard:.3f} ms "
        f"({listened / unheard:.2f}x; p99 {pct(found['listened'], 0.99):.2f} / {pct(found['unheard'], 0.99):.2f} ms)"
    )


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--appends", type=int, default=2000)
    parser.add_argument("--observers", type=int, default=50)
    parser.add_argument(
        "--database-url",
        default=os.environ.get("SIDECAR_TEST_DATABASE_URL"),
        help="a PostgreSQL server for section 3 (a fresh database is made and dropped)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds of section 3")
    parser.add_argument("--hosts-only", action="store_true", help="only section 3")
    args = parser.parse_args()
    if args.database_url:
        found = await across_hosts(args.database_url, args.appends, args.rounds)
        print_across_hosts(found, args.appends)
    if args.hosts_only:
        return
    with tempfile.TemporaryDirectory() as tmp:
        root, sock = Path(tmp) / "sessions", str(Path(tmp) / "live.sock")
        root.mkdir()
        server = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "sidecar",
            "serve",
            "--root",
            str(root),
            "--socket",
            sock,
            stdout=asyncio.subprocess.PIPE,
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        assert server.stdout is not None
        while b"ready" not in await server.stdout.readline():
            pass
        try:
            kept: list[Conn] = []
            lat = await latency(sock, args.appends, kept)
            print(f"write -> didAppend on another connection ({len(lat)} appends, one user message each):")
            print(f"  p50 {pct(lat, 0.5):.3f} ms   p99 {pct(lat, 0.99):.3f} ms   max {max(lat):.3f} ms")
            samples = await appends_with_observers(sock, args.appends, args.observers)
            base = statistics.median(samples["none"])
            print(f"controller's session/append round trip, {args.appends} each, interleaved:")
            for name, values in samples.items():
                label = {
                    "none": "no observers",
                    "observed": f"{args.observers} observers reading",
                    "observed+stopped": f"{args.observers} reading + 1 SIGSTOPped",
                }[name]
                p50 = statistics.median(values)
                print(
                    f"  {label:32} p50 {p50:.3f} ms  p99 {pct(values, 0.99):.3f} ms  ({p50 / base:.2f}x none; goal <= 1.3x)"
                )
        finally:
            server.terminate()
            await server.wait()


if __name__ == "__main__":
    asyncio.run(main())
