"""The compiled core against the pure-Python one (issue 42), side by side in one run, and pi 1.5.2 beside both.

    .venv/bin/python bench/core.py [--rounds 7] [--no-pi]

On load.py's 51 MB / 20,000-entry session, each round in an order shuffled
per round (seeded), the two cores alike (``corepath.choose`` in this process,
``SIDECAR_CORE`` for a spawned sidecar):

- parse: ``parse_path`` of the file (mapped: it is over MAP_THRESHOLD), in this process;
- tree: a new ``SessionTree`` given the parse's items (``add_parsed``) and the path to its leaf, in this process
  (the index the core gives a tree, corepath/treeing.py: the Python loop and walk, or core/src/tree.rs);
- load + context: ``FileSession.load`` and ``build_context`` at the leaf, in this process (load.py's "open");
- fresh: a new ``python -m sidecar serve``, ``initialize``, ``session/open`` of a copy it never saw and
  ``session/buildContext``, spawn to the answer decoded (fresh.py's figure);
- pi: pi 1.5.2's ``SessionManager.open`` and ``buildSessionContext`` on the same copy, spawn to exit
  (fresh.py's ``pi_fresh``), when Node and pi are installed (tests/parity/pi15, as the parity tests do).

Prints medians with min-max and each ratio's median over the rounds (the ratio
is taken within a round: the machine is shared, only figures taken side by
side mean much). The in-process figures also give CPU time, which moves less.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import fresh  # noqa: E402
import load  # noqa: E402

from sidecar import corepath  # noqa: E402
from sidecar.context.build import build_context  # noqa: E402
from sidecar.format.jsonl import parse_path  # noqa: E402
from sidecar.store.base import FsyncPolicy  # noqa: E402
from sidecar.store.files.session import FileSession  # noqa: E402
from sidecar.store.tree import SessionTree  # noqa: E402

CORES = ("python", "compiled")


def _timed(work: Callable[[], object], repeat: int) -> tuple[float, float]:
    """The least wall and CPU seconds of ``repeat`` runs of ``work``."""
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        work()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus)


def _tree_and_path(items: list) -> None:
    tree = SessionTree()
    tree.add_parsed(items)
    tree.path(tree.leaf_id)


def _load_and_context(path: Path) -> None:
    session, _ = FileSession.load(path, FsyncPolicy.ASSISTANT)
    build_context(session.tree.path(session.leaf_id))
    session.close()


async def _fresh(core: str, root: Path, first: Path, second: Path) -> dict:
    os.environ["SIDECAR_CORE"] = core
    try:
        return await fresh.sidecar_fresh(root, first, second)
    finally:
        del os.environ["SIDECAR_CORE"]


def measure(rounds: int, with_pi: bool, seed: int = 42) -> dict[str, list[float]]:
    if corepath.choose("compiled") != "compiled":
        raise SystemExit("the compiled core is not installed: bash scripts/core.sh")
    node = fresh.ensure_pi15() if with_pi else None
    fresh.compile_bytecode()
    if not load.DATA.exists():
        load.generate(load.DATA)
    rng = random.Random(seed)
    figures: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        figures.setdefault(name, []).append(value)

    with tempfile.TemporaryDirectory(prefix="bench-core-") as tmp:
        for number in range(rounds):
            root = Path(tmp) / f"round{number}" / "sessions"
            folder = root / "--work-bench--"
            # A copy each, never opened before (a copy's tree cache, written at a sidecar's shutdown, would serve the next).
            names = (*CORES, *(f"{core} later" for core in CORES), "pi")
            copies = {name: fresh._copy(load.DATA, folder, f"core-{number}-{name.replace(' ', '-')}") for name in names}
            order = [*CORES, "pi"] if node is not None else list(CORES)
            rng.shuffle(order)
            messages = set()
            for kind in order:
                if kind == "pi":
                    assert node is not None
                    pi = fresh.pi_fresh(node, copies["pi"])
                    add("pi fresh", pi["wall"])
                    messages.add(pi["messages"])
                    continue
                corepath.choose(kind)
                wall, cpu = _timed(lambda: parse_path(load.DATA), 3)
                add(f"{kind} parse", wall)
                add(f"{kind} parse cpu", cpu)
                parsed = parse_path(load.DATA).items
                wall, cpu = _timed(lambda: _tree_and_path(parsed), 3)
                add(f"{kind} tree", wall)
                add(f"{kind} tree cpu", cpu)
                wall, cpu = _timed(lambda: _load_and_context(load.DATA), 3)
                add(f"{kind} load+context", wall)
                add(f"{kind} load+context cpu", cpu)
                opened = asyncio.run(_fresh(kind, root, copies[kind], copies[f"{kind} later"]))
                add(f"{kind} fresh", opened["wall"])
                add(f"{kind} fresh cpu", opened["cpu"])
                add(f"{kind} later", opened["later"])
                messages.add(opened["messages"])
            assert len(messages) == 1, messages  # every contender built the same context
            for figure in ("parse", "tree", "load+context", "fresh", "later"):
                add(f"ratio {figure}", figures[f"compiled {figure}"][-1] / figures[f"python {figure}"][-1])
            if node is not None:
                for kind in CORES:
                    add(f"{kind} fresh / pi", figures[f"{kind} fresh"][-1] / figures["pi fresh"][-1])
            for path in copies.values():
                path.unlink()
    return figures


def _ms(values: list[float]) -> str:
    return fresh.spread(values, 1000.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--no-pi", action="store_true", help="leave pi 1.5.2 out (no Node install)")
    args = parser.parse_args()
    f = measure(args.rounds, not args.no_pi)
    print(
        f"{load.DATA.name}: {load.DATA.stat().st_size / 1e6:.0f} MB, {args.rounds} rounds, "
        f"load average {os.getloadavg()[0]:.1f}; ms, median (min-max)"
    )
    print(f"{'figure':<44} {'python':>16} {'compiled':>16} {'compiled/python':>16}")
    rows = [
        ("parse (parse_path), wall", "parse"),
        ("parse, CPU", "parse cpu"),
        ("tree: add_parsed + path to the leaf, wall", "tree"),
        ("tree, CPU", "tree cpu"),
        ("load + context (in process), wall", "load+context"),
        ("load + context, CPU", "load+context cpu"),
        ("fresh process: spawn to context, wall", "fresh"),
        ("fresh process, its CPU", "fresh cpu"),
        ("same process, another copy, wall", "later"),
    ]
    for label, name in rows:
        ratio = (
            f["ratio " + name]
            if "ratio " + name in f
            else [c / p for c, p in zip(f[f"compiled {name}"], f[f"python {name}"])]
        )
        # The tree's figures are a few ms on this file: shown to a tenth of one.
        show = (lambda values: fresh.spread(values, 1000.0, "{:.1f}")) if name.startswith("tree") else _ms
        print(
            f"{label:<44} {show(f[f'python {name}']):>16} {show(f[f'compiled {name}']):>16} "
            f"{fresh.spread(ratio, 1, '{:.2f}'):>16}"
        )
    if "pi fresh" in f:
        print(f"{'pi 1.5.2 fresh process: spawn to context':<44} {_ms(f['pi fresh']):>16}")
        for kind in CORES:
            print(f"{'  ' + kind + ' fresh / pi':<44} {fresh.spread(f[f'{kind} fresh / pi'], 1, '{:.2f}'):>16}")


if __name__ == "__main__":
    main()
