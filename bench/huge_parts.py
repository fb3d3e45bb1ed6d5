"""Where the first open of the 1 GB session (bench/huge.py's) spends its CPU time, phase by phase.

    .venv/bin/python bench/huge_parts.py [--entries N] [--rounds N]

Each round runs in one process: parse_path, SessionTree.add_parsed, tree.path(leaf) and pi's
build_context (told whether ids repeat, as the service tells it), each timed alone with the cycle
collector paused as the load pauses it. Medians over the rounds; the figures are process CPU times.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from huge import data_path  # noqa: E402

from sidecar.context.build import build_context  # noqa: E402
from sidecar.format.jsonl import parse_path  # noqa: E402
from sidecar.store.tree import SessionTree  # noqa: E402


def one_round(path: Path) -> dict[str, float]:
    figures: dict[str, float] = {}

    def timed(label: str, work):  # type: ignore[no-untyped-def]
        start = time.process_time()
        result = work()
        figures[label] = time.process_time() - start
        return result

    gc.disable()
    try:
        parsed = timed("parse_path", lambda: parse_path(path))
        tree = SessionTree()
        timed("add_parsed", lambda: tree.add_parsed(parsed.items))
        walked = timed("path(leaf)", lambda: tree.path(tree.leaf_id))
        timed("build_context", lambda: build_context(walked, tree.ids_unique))
    finally:
        gc.enable()
    figures["entries on the path"] = len(walked)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=400_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    path = data_path(args.entries)
    rounds = [one_round(path) for _ in range(args.rounds)]
    for key in rounds[0]:
        values = [r[key] for r in rounds]
        if key.startswith("entries"):
            print(f"{key:22} {int(values[0]):,}")
        else:
            print(f"{key:22} {statistics.median(values) * 1000:8.1f} ms CPU  ({min(values) * 1000:.1f}-{max(values) * 1000:.1f})")


if __name__ == "__main__":
    main()
