"""What oh-my-pi's compatibility costs: its context rules, its renames, its blob store.

    .venv/bin/python bench/compat.py [--entries N]

Prints, for one generated session (seeded; tool calls, some with images):
1. buildContext (agent and llm formats) at the leaf under pi's rules and under
   oh-my-pi's (context/omp.py), best of 5;
2. session/setName under oh-my-pi's compatibility: the title line rewritten
   in place, vs the first rename of a file without one (the whole file
   rewritten atomically), best of 5;
3. appending a turn with a 100 KB image: inline (pi) vs to the blob store (omp).
"""

from __future__ import annotations

import argparse
import base64
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sidecar import wire  # noqa: E402
from sidecar.config import Settings, apply_overrides  # noqa: E402
from sidecar.service import SessionService  # noqa: E402


def best(action, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def assistant(text: str, calls: list[str]) -> dict:
    content = [{"type": "text", "text": text}] + [
        {"type": "toolCall", "id": c, "name": "read", "arguments": {"path": c}} for c in calls
    ]
    return {
        "role": "assistant",
        "content": content,
        "provider": "p",
        "model": "m",
        "api": "x",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
        "stopReason": "toolUse" if calls else "stop",
        "timestamp": 1,
    }


def fill(svc: SessionService, entries: int, rng: random.Random) -> str:
    sid = svc.create(wire.CreateParams(cwd="/bench")).sessionId
    batch: list[dict] = []
    n = 0
    while n < entries:
        call = f"c{n}"
        batch += [
            {"type": "message", "message": {"role": "user", "content": f"question {n} " * 20, "timestamp": n}},
            {"type": "message", "message": assistant("reading " * 30, [call])},
            {
                "type": "message",
                "message": {
                    "role": "toolResult",
                    "toolCallId": call,
                    "toolName": "read",
                    "content": [{"type": "text", "text": "x" * rng.randint(200, 4000)}],
                    "isError": False,
                    "timestamp": n,
                },
            },
            {"type": "message", "message": assistant("done " * 20, [])},
        ]
        n += 4
        if len(batch) >= 400:
            svc.append(wire.AppendParams(sessionId=sid, entries=batch))
            batch = []
    if batch:
        svc.append(wire.AppendParams(sessionId=sid, entries=batch))
    return sid


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=8000)
    args = parser.parse_args()
    rng = random.Random(7)
    work = Path(tempfile.mkdtemp(prefix="bench-compat-"))
    try:
        root = work / ".omp" / "agent" / "sessions"
        svc = SessionService(root)
        sid = fill(svc, args.entries, rng)
        size = svc.session(sid).path.stat().st_size
        print(f"session: {args.entries} entries, {size / 1e6:.1f} MB, compat {svc.store.compat}")
        for fmt in ("agent", "llm"):
            pi = best(lambda: svc.build_context(wire.BuildContextParams(sessionId=sid, format=fmt, rules="pi")))
            omp = best(lambda: svc.build_context(wire.BuildContextParams(sessionId=sid, format=fmt, rules="omp")))
            print(f"buildContext {fmt:5}: pi rules {pi:7.1f} ms, oh-my-pi rules {omp:7.1f} ms ({omp / pi:.2f}x)")
        in_place = best(lambda: svc.set_name(wire.SetNameParams(sessionId=sid, name=f"name {rng.random()}")))

        times = []
        for _ in range(5):
            path = svc.session(sid).path
            data = path.read_bytes()
            path.write_bytes(data[256:])  # drop the title line, then rename: the whole file is rewritten
            svc.close_all()
            svc = SessionService(root)
            svc.open(wire.OpenParams(sessionId=sid))
            start = time.perf_counter()
            svc.set_name(wire.SetNameParams(sessionId=sid, name=f"name {rng.random()}"))
            times.append(time.perf_counter() - start)
        rewrite = min(times) * 1000
        print(
            f"setName (oh-my-pi): title line in place {in_place:.2f} ms; first rename, whole file rewritten "
            f"{rewrite:.1f} ms"
        )
        image = base64.b64encode(rng.randbytes(100_000)).decode()
        for compat in ("pi", "omp"):
            other = SessionService(work / compat, apply_overrides(Settings(), {"store": {"compat": compat}}, "bench"))
            osid = other.create(wire.CreateParams(cwd="/bench")).sessionId
            other.append(
                wire.AppendParams(
                    sessionId=osid,
                    entries=[
                        {"type": "message", "message": {"role": "user", "content": "hi", "timestamp": 1}},
                        {"type": "message", "message": assistant("ok", [])},
                    ],
                )
            )

            def add() -> None:
                image_now = image[:-8] + base64.b64encode(rng.randbytes(6)).decode()  # a new blob each time
                other.append(
                    wire.AppendParams(
                        sessionId=osid,
                        entries=[
                            {
                                "type": "message",
                                "message": {
                                    "role": "user",
                                    "content": [{"type": "image", "data": image_now, "mimeType": "image/png"}],
                                    "timestamp": 2,
                                },
                            }
                        ],
                    )
                )

            print(f"append of a 100 KB image under {compat:3}: {best(add):.2f} ms")
            other.close_all()
        svc.close_all()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
