"""imports.py's figures for this checkout beside another one's (a change's before and after), in one run.

    python bench/imports_against.py /path/to/other/checkout [--rounds 5]

Each round runs ``imports.py --measure`` for our open and both imports in a fresh process per figure
(best of 3 in it), for both cores, the checkouts in a shuffled order; the other checkout reads this
one's bench/data (linked in when it has none), so both measure the same files. The open is the same
code in both (what the imports are measured against): its median over both checkouts is the base of
either's ratio. Wall time moves with the machine's load; the CPU time's median is printed beside it.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
KINDS = ("open", "codex", "claude")
CORES = ("python", "compiled")


def measure(checkout: Path, kind: str, core: str) -> tuple[float, float]:
    """(best wall s, median CPU s) of ``kind`` in a fresh process of ``checkout``'s imports.py."""
    bench = checkout / "bench"
    done = subprocess.run(
        [sys.executable, str(bench / "imports.py"), "--measure", kind, "--repeat", "3"],
        cwd=bench,  # (imports.py puts its own checkout first on the path: its sidecar is the one measured)
        env={**os.environ, "SIDECAR_CORE": core},
        capture_output=True,
        text=True,
        check=True,
    )
    best, _, _, detail = done.stdout.split()
    return float(best), float(detail.split(",")[0].removeprefix("cpu="))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", type=Path, help="the checkout to measure beside this one (e.g. main's)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    trees = {"other": args.other.resolve(), "this": HERE.parent}
    data = trees["other"] / "bench" / "data"
    if not data.exists():
        data.symlink_to(HERE / "data")
    rng = random.Random(42)
    got: dict[tuple[str, str, str], list[tuple[float, float]]] = {}
    load_before = os.getloadavg()
    for _ in range(args.rounds):
        for core in CORES:
            order = list(trees)
            rng.shuffle(order)
            for tree in order:
                for kind in KINDS:
                    got.setdefault((core, tree, kind), []).append(measure(trees[tree], kind, core))
    load_after = os.getloadavg()
    print(f"load average (1 min) {load_before[0]:.1f} before, {load_after[0]:.1f} after, on {os.cpu_count()} CPUs")
    print(f"other = {trees['other']}, this = {trees['this']}; {args.rounds} rounds, ms")
    print(
        f"{'core':9} {'tree':6} {'what':7} {'median':>7} {'x open':>7} {'CPU':>6} {'CPU x':>6}  best of 3 in each round"
    )
    for core in CORES:
        opened = statistics.median(w for tree in trees for w, _ in got[(core, tree, "open")])
        opened_cpu = statistics.median(c for tree in trees for _, c in got[(core, tree, "open")])
        for tree in trees:
            for kind in KINDS:
                walls = [w for w, _ in got[(core, tree, kind)]]
                cpu = statistics.median(c for _, c in got[(core, tree, kind)])
                wall = statistics.median(walls)
                print(
                    f"{core:9} {tree:6} {kind:7} {wall * 1000:7.0f} {wall / opened:7.2f} {cpu * 1000:6.0f} "
                    f"{cpu / opened_cpu:6.2f}  {' '.join(f'{w * 1000:.0f}' for w in walls)}"
                )


if __name__ == "__main__":
    main()
