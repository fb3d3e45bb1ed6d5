"""Prompt history figures: history/search and history/list over 100,000 prompts, warm.

    .venv/bin/python bench/history.py [--prompts N] [--repeat N]

Goal (issue 19): a warm search under 20 ms. Each figure is the median of
``--repeat`` calls through SessionService (what a request runs after decoding),
after one call that warms the connection and the page cache.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sidecar import wire  # noqa: E402
from sidecar.service import SessionService  # noqa: E402

WORDS = (
    "fix test parser module error build deploy refactor docs readme config lint type check rename "
    "function class import export pnpm npm cargo go rust python node bench latency cache index query "
    "session fork branch label compaction summary token window context file path folder"
).split()


def fill(svc: SessionService, count: int, seed: int) -> float:
    rng = random.Random(seed)
    cwds = [f"/work/project{n}" for n in range(20)]
    start = time.perf_counter()
    for number in range(count):
        words = rng.choices(WORDS, k=rng.randint(3, 25))
        svc.history_add(wire.HistoryAddParams(prompt=f"{' '.join(words)} #{number}", cwd=rng.choice(cwds)))
    svc.history.settle()
    return time.perf_counter() - start


def median_ms(call, repeat: int) -> float:
    call()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        svc = SessionService(Path(folder))
        filled = fill(svc, args.prompts, seed=7)
        print(
            f"history: {args.prompts} prompts added in {filled:.2f} s "
            f"({args.prompts / filled:,.0f} adds/s, each answered before its row is written)"
        )
        cases = {
            "search 'parser' (common), newest 20": wire.HistorySearchParams(query="parser"),
            "search 'pnpm npm' (two words), newest 20": wire.HistorySearchParams(query="pnpm npm"),
            "search 'parser fix' (words, any order)": wire.HistorySearchParams(query="parser fix"),
            "search 'parser fix' by relevance": wire.HistorySearchParams(query="parser fix", order="relevance"),
            "search 'zzz qqq' (words, no match)": wire.HistorySearchParams(query="zzz qqq"),
            "search 'go to' (short words: scan)": wire.HistorySearchParams(query="go to"),
            "search '#99999' (one match)": wire.HistorySearchParams(query="#99999"),
            "search 'parser' in one cwd": wire.HistorySearchParams(query="parser", cwd="/work/project3"),
            "search 'parser' by relevance": wire.HistorySearchParams(query="parser", order="relevance"),
            "search 'go' (2 chars: scan, early stop)": wire.HistorySearchParams(query="go"),
            "search 'qz' (2 chars: whole scan)": wire.HistorySearchParams(query="qz"),
            "search 'zzz' (no match)": wire.HistorySearchParams(query="zzz"),
        }
        for label, params in cases.items():
            print(f"  {label:<40} {median_ms(lambda: svc.history_search(params), args.repeat):8.2f} ms")
        listing = wire.HistoryListParams(limit=50)
        print(f"  {'list newest 50':<40} {median_ms(lambda: svc.history_list(listing), args.repeat):8.2f} ms")
        svc.close_all()


if __name__ == "__main__":
    main()
