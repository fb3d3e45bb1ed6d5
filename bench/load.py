"""Load time of a large session: open + buildContext against the floor of decoding every line.

    python bench/load.py            # generate bench/data/large.jsonl if missing, then measure
    python bench/load.py --regen    # generate it again

The session is pi-shaped and seeded (same bytes on every machine): ~20,000
entries, ~50 MB of user turns, assistants with tool calls, tool results with
big outputs, thinking and model changes, a few compactions and branches. Each
measurement runs in a fresh process so peak RSS is its own.
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parent
DATA = ROOT / "data" / "large.jsonl"
SEED = 20250101
ENTRIES = 20_000
WORDS = "the a session tree leaf branch file line context model token tool result read edit write bash test pass fail".split()


def _stamp(step: int) -> str:
    seconds = 1_735_689_600 + step * 7
    t = time.gmtime(seconds)
    return time.strftime("%Y-%m-%dT%H:%M:%S", t) + f".{step % 1000:03d}Z"


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _output(rng: random.Random, size: int) -> str:
    lines, total = [], 0
    while total < size:
        line = f"{rng.randrange(1, 9999):5d}  " + _text(rng, rng.randrange(4, 16))
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def generate(path: Path, seed: int = SEED, count: int = ENTRIES) -> None:
    rng = random.Random(seed)
    encode = msgspec.json.Encoder().encode
    out = [encode({"type": "session", "version": 3, "id": "bench-large", "timestamp": _stamp(0), "cwd": "/work/bench"})]
    ids: list[str] = []
    parent: str | None = None
    step = 0

    def add(obj: dict) -> None:
        nonlocal parent, step
        step += 1
        entry_id = f"{step:08x}"
        out.append(
            encode({"type": obj.pop("type"), "id": entry_id, "parentId": parent, "timestamp": _stamp(step), **obj})
        )
        ids.append(entry_id)
        parent = entry_id

    usage = {
        "input": 1000,
        "output": 200,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 1200,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }
    while step < count:
        add(
            {
                "type": "message",
                "message": {"role": "user", "content": _text(rng, rng.randrange(5, 60)), "timestamp": step},
            }
        )
        for _ in range(rng.randrange(1, 4)):
            calls = [
                {
                    "type": "toolCall",
                    "id": f"call{step}_{i}",
                    "name": rng.choice(["read", "bash", "edit"]),
                    "arguments": {"path": f"src/{rng.choice(WORDS)}.py", "command": _text(rng, 4)},
                }
                for i in range(rng.randrange(1, 3))
            ]
            add(
                {
                    "type": "message",
                    "message": {
                        "role": "assistant",
                        "content": [
                            {"type": "thinking", "thinking": _text(rng, 30)},
                            {"type": "text", "text": _text(rng, 25)},
                            *calls,
                        ],
                        "api": "anthropic-messages",
                        "provider": "anthropic",
                        "model": "claude-bench",
                        "usage": usage,
                        "stopReason": "toolUse",
                        "timestamp": step,
                    },
                }
            )
            for call in calls:
                size = int(rng.lognormvariate(7.95, 1.0))  # median ~2.8 KB, a long tail of big outputs
                add(
                    {
                        "type": "message",
                        "message": {
                            "role": "toolResult",
                            "toolCallId": call["id"],
                            "toolName": call["name"],
                            "content": [{"type": "text", "text": _output(rng, min(size, 60_000))}],
                            "isError": False,
                            "timestamp": step,
                        },
                    }
                )
        add(
            {
                "type": "message",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": _text(rng, 40)}],
                    "api": "anthropic-messages",
                    "provider": "anthropic",
                    "model": "claude-bench",
                    "usage": usage,
                    "stopReason": "stop",
                    "timestamp": step,
                },
            }
        )
        roll = rng.random()
        if roll < 0.02:
            add({"type": "thinking_level_change", "thinkingLevel": rng.choice(["off", "low", "high"])})
        elif roll < 0.03 and len(ids) > 50:
            parent = ids[-rng.randrange(5, 40)]  # branch back: the next turn starts a new branch
        elif roll < 0.035 and len(ids) > 500:
            add(
                {
                    "type": "compaction",
                    "summary": _text(rng, 400),
                    "firstKeptEntryId": ids[-rng.randrange(20, 200)],
                    "tokensBefore": 150_000,
                }
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(out) + b"\n")


def measure(kind: str, path: Path, repeat: int) -> None:
    """One kind of load, timed ``repeat`` times in this process; prints "seconds peak_kb"."""
    times, detail = [], "-"
    for _ in range(repeat):
        start = time.perf_counter()
        if kind == "floor":
            decode = msgspec.json.decode
            with open(path, "rb") as source:
                for line in source.read().split(b"\n"):
                    if line:
                        decode(line)
        else:
            sys.path.insert(0, str(ROOT.parent))
            from sidecar.context.build import build_context
            from sidecar.context.llm import convert_to_llm
            from sidecar.store.base import FsyncPolicy
            from sidecar.store.files.session import FileSession as Session

            session, _ = Session.load(path, FsyncPolicy.ASSISTANT)
            ctx = build_context(session.tree.path(session.leaf_id))
            if kind == "open+llm":
                convert_to_llm(ctx.messages)
            detail = f"{len(session.tree.path(session.leaf_id))}-path-entries,{len(ctx.messages)}-context-messages"
            session.close()
        times.append(time.perf_counter() - start)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{min(times):.4f} {statistics.median(times):.4f} {peak_kb} {detail}")


def run(kind: str, repeat: int, script: str = __file__) -> tuple[float, float, int, str]:
    """``script --measure kind`` in a fresh process (its own peak RSS): best, median, peak KB, detail."""
    done = subprocess.run(
        [sys.executable, script, "--measure", kind, "--repeat", str(repeat)], capture_output=True, text=True, check=True
    )
    best, median, peak, detail = done.stdout.split()
    return float(best), float(median), int(peak), detail.replace("-", " ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--regen", action="store_true")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--measure", choices=["floor", "open", "open+llm"])
    args = parser.parse_args()
    if args.measure:
        measure(args.measure, DATA, args.repeat)
        return
    if args.regen or not DATA.exists():
        generate(DATA)
    lines = DATA.read_bytes().count(b"\n")
    print(f"{DATA.relative_to(ROOT.parent)}: {DATA.stat().st_size / 1e6:.1f} MB, {lines - 1} entries (seed {SEED})")
    rows = {kind: run(kind, args.repeat) for kind in ("floor", "open", "open+llm")}
    floor = rows["floor"][0]
    print(f"{'what':<40} {'best s':>8} {'median s':>9} {'x floor':>8} {'peak RSS MB':>12}")
    labels = {
        "floor": "msgspec decode of every line (floor)",
        "open": "open + buildContext (agent)",
        "open+llm": "open + buildContext + convertToLlm",
    }
    for kind, (best, median, peak, _) in rows.items():
        print(f"{labels[kind]:<40} {best:>8.3f} {median:>9.3f} {best / floor:>8.2f} {peak / 1024:>12.0f}")
    print(f"context at the leaf: {rows['open'][3].replace(',', ', ')}")


if __name__ == "__main__":
    main()
