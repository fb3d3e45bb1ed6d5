"""Only the listing figures of bench/run.py (figure 3): 10,000 sessions in 100 folders.

    .venv/bin/python bench/list.py [--repeat N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    cold, first_query, warm, query, floor = run._list_figures(10_000, 100, args.repeat)
    print(f"warm list            {warm * 1000:8.1f} ms   (lstat every file {floor * 1000:.1f} ms; goal < 50 ms)")
    print(f"warm query           {query * 1000:8.1f} ms")
    print(f"cold rebuild         {cold * 1000:8.1f} ms   (goal < 3 s)")
    print(f"first query after it {first_query * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
