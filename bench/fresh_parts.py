"""Where goal 1's fresh process spends its time, piece by piece (issue 42): spawn to the context decoded.

    .venv/bin/python bench/fresh_parts.py [--rounds 5] [--importtime 25]

Each round spawns a sidecar (``serve``, the goal's command line) wrapped by a few
lines that stamp, on stderr, the moments the server reaches (its first line of
Python, the CLI imported, the service's ``open`` and ``build_context`` begun and
ended, the answer's encode, each write to the pipe), and a client that stamps
what it sees (the initialize answer, the open answer, the first and last byte of
the buildContext answer, its decode). Both take one clock (CLOCK_MONOTONIC), so
the stamps of the two processes line up. Each copy of load.py's 51 MB session
is new to the process (no tree cache). Medians over the rounds, ms; the stamps
add nothing measurable (a function call each).

``--importtime N`` adds one start under ``python -X importtime``, up to the
context answered: its N slowest imports (cumulative) and the total.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fresh  # noqa: E402
import load  # noqa: E402
import msgspec  # noqa: E402

# The server's stamps: run before the sidecar's own code, they wrap what is imported later.
WRAPPER = r"""
import sys, time
def stamp(name):
    sys.stderr.write(f"STAMP {name} {time.perf_counter():.6f}\n"); sys.stderr.flush()
stamp("python")
import importlib.abc, importlib.machinery
WRAP = {}
def wraps(module, owner, name, label):
    WRAP.setdefault(module, []).append((owner, name, label))
class Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname not in WRAP:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        run = spec.loader.exec_module
        def exec_module(module):
            run(module)
            for owner, name, label in WRAP[fullname]:
                holder = getattr(module, owner) if owner else module
                original = getattr(holder, name)
                def timed(*args, _original=original, _label=label, **kwargs):
                    stamp(_label + "<")
                    try:
                        return _original(*args, **kwargs)
                    finally:
                        stamp(_label + ">")
                setattr(holder, name, timed)
        spec.loader.exec_module = exec_module
        return spec
sys.meta_path.insert(0, Hook())
wraps("sidecar.service.core", "SessionService", "open", "open")
wraps("sidecar.service.core", "SessionService", "build_context", "build")
wraps("sidecar.rpc.protocol", "SidecarProtocol", "_send_response", "answer")
wraps("sidecar.rpc.framing", "FrameWriter", "_write", "write")
import sidecar.cli
stamp("cli")
sys.argv = ["sidecar", "serve", "--log-level", "warning"]
raise SystemExit(sidecar.cli.main())
"""

STAMP = re.compile(rb"^STAMP (\S+) ([0-9.]+)$", re.M)


async def one_start(root: Path, path: Path, wrapped: bool, importtime: bool = False) -> tuple[dict[str, float], bytes]:
    argv = [sys.executable]
    if importtime:
        argv += ["-X", "importtime"]
    argv += ["-c", WRAPPER] if wrapped else ["-m", "sidecar", "serve", "--log-level", "warning"]
    with tempfile.TemporaryFile() as err:
        t: dict[str, float] = {"spawn": time.perf_counter()}
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=err, limit=1 << 26
        )
        assert process.stdin is not None and process.stdout is not None
        stdout = process.stdout

        def send(number: int, method: str, params: dict) -> None:
            body = msgspec.json.encode({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
            process.stdin.write(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))  # type: ignore[union-attr]

        async def body(first: bytes = b"") -> bytes:
            length = 0
            while (line := first or await stdout.readline()) != b"\r\n":
                first = b""
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            return await stdout.readexactly(length)

        send(1, "initialize", {"sessionRoot": str(root)})
        await body()
        t["initialized"] = time.perf_counter()
        send(2, "session/open", {"path": str(path)})
        opened = msgspec.json.decode(await body())
        t["opened"] = time.perf_counter()
        send(3, "session/buildContext", {"sessionId": opened["result"]["sessionId"]})
        header = await stdout.readline()
        t["first byte"] = time.perf_counter()  # (the header's first line: the answer's first bytes)
        raw = await body(header)
        t["read"] = time.perf_counter()
        built = msgspec.json.decode(raw)
        t["decoded"] = time.perf_counter()
        t["size"] = len(raw)
        t["messages"] = len(built["result"]["messages"])
        process.stdin.close()
        await process.wait()
        err.seek(0)
        stderr = err.read()
    stamps = [(name.decode(), float(value)) for name, value in STAMP.findall(stderr)]
    for name, value in stamps:
        t.setdefault("s " + name, value)  # the first of each
    built = t.get("s build>", float("inf"))
    writes = [value for name, value in stamps if name in ("write<", "write>") and value > built]
    if writes:  # the context answer's
        t["s write<"], t["s last write>"] = writes[0], writes[-1]
    return t, stderr


def pieces(t: dict[str, float]) -> dict[str, float]:
    """Milliseconds per piece, in the order they happen."""
    ms = lambda a, b: (t[b] - t[a]) * 1000  # noqa: E731
    out = {
        "spawn -> first line of Python (interpreter start)": ms("spawn", "s python"),
        "  -> sidecar.cli imported": ms("s python", "s cli"),
        "  -> initialize answered (client has it)": ms("s cli", "initialized"),
        "spawn -> initialize answered": ms("spawn", "initialized"),
        "session/open: request -> service.open begins": ms("initialized", "s open<"),
        "  service.open": ms("s open<", "s open>"),
        "  -> open answer decoded by the client": ms("s open>", "opened"),
        "buildContext: request -> service.build_context begins": ms("opened", "s build<"),
        "  service.build_context (context built)": ms("s build<", "s build>"),
        "  encode (envelope + result) -> first write": ms("s build>", "s write<"),
        "  writes to the pipe (first begun -> last done)": ms("s write<", "s last write>"),
        "  client: first byte seen -> body read": ms("first byte", "read"),
        "  client: last write done -> body read": ms("s last write>", "read"),
        "  client decode": ms("read", "decoded"),
        "total: spawn -> context decoded": ms("spawn", "decoded"),
    }
    return out


def importtime_table(stderr: bytes, top: int) -> tuple[list[tuple[int, int, str]], int]:
    rows = []
    for line in stderr.decode().splitlines():
        if line.startswith("import time:") and "|" in line and "cumulative" not in line:
            own, cumulative, name = (part.strip() for part in line[len("import time:") :].split("|"))
            rows.append((int(cumulative), int(own), name))
    total = sum(own for _, own, _ in rows)
    return sorted(rows, reverse=True)[:top], total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--importtime", type=int, default=0, metavar="N")
    args = parser.parse_args()
    fresh.compile_bytecode()
    if not load.DATA.exists():
        load.generate(load.DATA)
    results: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="bench-fresh-parts-") as tmp:
        root = Path(tmp) / "sessions"
        folder = root / "--work-bench--"
        for number in range(args.rounds):
            path = fresh._copy(load.DATA, folder, f"parts-{number}")
            t, _ = asyncio.run(one_start(root, path, wrapped=True))
            results.append(pieces(t))
            size, messages = t["size"], t["messages"]
            path.unlink()
        print(
            f"{args.rounds} rounds, load {os.getloadavg()[0]:.1f}; the answer {size / 1e6:.1f} MB, "
            f"{messages:.0f} messages; medians (min-max), ms"
        )
        for name in results[0]:
            values = sorted(r[name] for r in results)
            print(f"{name:<58} {statistics.median(values):7.1f}   ({values[0]:.1f}-{values[-1]:.1f})")
        if args.importtime:
            path = fresh._copy(load.DATA, folder, "parts-importtime")
            _, stderr = asyncio.run(one_start(root, path, wrapped=False, importtime=True))
            rows, total = importtime_table(stderr, args.importtime)
            print(f"\n-X importtime, one start up to the context answered: {total / 1000:.1f} ms of imports (self)")
            for cumulative, own, name in rows:
                print(f"{cumulative / 1000:8.1f} {own / 1000:8.1f}  {name}")


if __name__ == "__main__":
    main()
