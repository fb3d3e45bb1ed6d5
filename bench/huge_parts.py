"""Where the first open of the 1 GB session (bench/huge.py's) spends its CPU time, phase by phase.

    .venv/bin/python bench/huge_parts.py [--entries N] [--rounds N]

Each round runs in one process: parse_path, SessionTree.add_parsed, tree.path(leaf) and pi's
build_context (told whether ids repeat, as the service tells it), each timed alone with the cycle
collector paused as the load pauses it. Medians over the rounds; the figures are process CPU times.

First, the floor under any parse with msgspec: every line after the header decoded in one
``decode_lines`` call into a Struct of no fields (each value still read to its end, nothing built).
"""

from __future__ import annotations

import argparse
import gc
import mmap
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import msgspec  # noqa: E402
from huge import data_path  # noqa: E402

from sidecar.context.build import build_context  # noqa: E402
from sidecar.format.jsonl import parse_path  # noqa: E402
from sidecar.store.tree import SessionTree  # noqa: E402


class _Nothing(msgspec.Struct):
    pass


def decode_floor(path: Path) -> float:
    """CPU seconds of msgspec reading every line after the header into nothing (the file mapped)."""
    decoder = msgspec.json.Decoder(_Nothing)
    with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, prot=mmap.PROT_READ) as mapped:
        mapped.madvise(mmap.MADV_SEQUENTIAL)  # as the parse reads it
        lines = memoryview(mapped)[mapped.find(b"\n") + 1 :]
        try:
            start = time.process_time()
            decoder.decode_lines(lines)
            return time.process_time() - start
        finally:
            lines.release()


def one_round(path: Path) -> dict[str, float]:
    figures: dict[str, float] = {"decode floor": decode_floor(path)}

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
            print(
                f"{key:22} {statistics.median(values) * 1000:8.1f} ms CPU  ({min(values) * 1000:.1f}-{max(values) * 1000:.1f})"
            )


if __name__ == "__main__":
    main()
