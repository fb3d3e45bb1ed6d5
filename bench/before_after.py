"""bench/run.py on an earlier commit and on this tree, in one run, figure beside figure.

    .venv/bin/python bench/before_after.py REV [--after REV2] [--rounds N] [run.py's options, e.g. --no-scale --quick]

A restructuring must leave every figure where it was (issue 40: none more than 5% worse). Each side
runs its own bench/run.py against its own code (the earlier commit, and ``--after``'s if given, is checked
out into a temporary worktree and put first on PYTHONPATH, so every sidecar it spawns is that commit's;
without ``--after`` the other side is this tree as it stands), the two sides
alternate for ``--rounds`` rounds so that the machine's drift falls on both, and the table shows each
side's median per figure and the change. Figures are read from run.py's own table (its first column
names a figure; the "measured" column is a number and a unit), so both sides must print that table.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
# A number and the unit after it ("85.3 ms", "1,234 req/s", "12 fsyncs per burst", "0.42 / 0.61 ms").
_NUMBER = re.compile(r"^\s*([0-9][0-9,]*(?:\.[0-9]+)?)\s*(.*)$")
# Figures where a larger number is better (everything else is a time or a size: smaller is better).
_LARGER_IS_BETTER = ("req/s", "entries/s")


def run_table(tree: Path, options: list[str]) -> dict[str, str]:
    """One run of ``tree``'s bench/run.py: its table as {figure: measured}."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, str(tree / "bench" / "run.py"), *options],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"bench/run.py failed in {tree}:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    table: dict[str, str] = {}
    for line in done.stdout.splitlines():
        cells = [cell.strip() for cell in line.split(" | ")]
        if len(cells) == 4 and cells[0] and cells[0][0].isdigit():
            table[cells[0]] = cells[1]
    return table


def number(measured: str) -> tuple[float, str] | None:
    match = _NUMBER.match(measured)
    return None if match is None else (float(match.group(1).replace(",", "")), match.group(2))


def _shown(cell: tuple[float, str] | None) -> str:
    if cell is None:
        return "-"
    value, unit = cell
    return f"{value:,.0f} {unit}" if value >= 100 else f"{value:.3g} {unit}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", help="the earlier commit (e.g. the one before a restructuring)")
    parser.add_argument(
        "--after", help="a later commit to measure instead of this tree (which may then change meanwhile)"
    )
    parser.add_argument("--rounds", type=int, default=2)
    args, options = parser.parse_known_args()
    with tempfile.TemporaryDirectory(prefix="bench-before-") as scratch:
        trees = {"before": Path(scratch) / "before", "after": Path(scratch) / "after" if args.after else REPO}
        for side, rev in (("before", args.rev), ("after", args.after)):
            if rev:
                subprocess.run(
                    ["git", "-C", str(REPO), "worktree", "add", "--detach", "--quiet", str(trees[side]), rev],
                    check=True,
                )
        try:
            runs: dict[str, list[dict[str, str]]] = {"before": [], "after": []}
            for round_ in range(args.rounds):
                order = ["before", "after"] if round_ % 2 == 0 else ["after", "before"]
                for side in order:
                    print(f"round {round_ + 1}/{args.rounds}: {side}", file=sys.stderr, flush=True)
                    runs[side].append(run_table(trees[side], options))
        finally:
            for side in ("before", "after"):
                if trees[side] != REPO:
                    subprocess.run(
                        ["git", "-C", str(REPO), "worktree", "remove", "--force", str(trees[side])], check=False
                    )
    figures = list(dict.fromkeys(name for table in runs["after"] for name in table))
    rows = [
        ("figure", f"before ({args.rev[:12]})", f"after ({args.after[:12] if args.after else 'this tree'})", "change")
    ]
    for figure in figures:
        cells: dict[str, tuple[float, str] | None] = {}
        for side in ("before", "after"):
            values = [parsed for table in runs[side] if (parsed := number(table.get(figure, ""))) is not None]
            cells[side] = (statistics.median(v for v, _ in values), values[0][1]) if values else None
        before, after = cells["before"], cells["after"]
        if before is None or after is None or before[0] == 0:
            change = "-"
        else:
            ratio = after[0] / before[0]
            worse = ratio < 1 if any(unit in after[1] for unit in _LARGER_IS_BETTER) else ratio > 1
            change = f"{ratio:.2f}x" + (" (worse)" if worse and abs(ratio - 1) > 0.05 else "")
        rows.append((figure, *(_shown(c) for c in (before, after)), change))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    print(f"bench/run.py {' '.join(options)}: median of {args.rounds} alternating rounds per side")
    for index, row in enumerate(rows):
        print(" | ".join(cell.ljust(width) for cell, width in zip(row, widths)))
        if index == 0:
            print("-+-".join("-" * width for width in widths))


if __name__ == "__main__":
    main()
