"""Every listing answer of this checkout against another commit's (default ``main``), on the same files.

    .venv/bin/python bench/rebuild_compare.py [--ref main] [--folders 50]

A root is made of ``--folders`` folders of the 100,000-session set (scale.py,
100 sessions each) and the odd sessions of tests/store/test_listing_bulk.py
(labels, names, title lines, custom entries, compactions, damaged lines, a
file that is no session). Each code lists it cold in a fresh process (every
page), runs queries before and after its full-text index is built, and prints
what it answered; the two must be the same. The other commit's ``sidecar``
package comes from ``git archive`` into a temp dir.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
QUERIES = [
    "tokenizer branch",
    "zzz-no-such-text",
    "mixed",
    "first question 2",
    "slot title",
    "named 1",
    "after all",
    "Deploy Cache",
    "ss",
    "q",
    "tool output",
    "header title",
    "0000-7000-8000-00000000012",
]


def make_root(root: Path, folders: int) -> int:
    sys.path[:0] = [str(HERE), str(REPO), str(REPO / "tests"), str(REPO / "tests" / "store")]
    import scale
    from session_builders import labelled_session, service
    from test_listing_bulk import odd_sessions

    source = scale.data_root(100_000, 1_000)
    names = sorted(name for name in os.listdir(source) if name.startswith("--"))[:folders]
    for name in names:
        shutil.copytree(source / name, root / name)  # (mtimes kept)
    odd_sessions(root)
    svc = service(root)
    labelled_session(svc)
    svc.close_all()
    svc.store.catalog.index.close()
    shutil.rmtree(root / ".index")
    return sum(1 for _ in root.glob("*/*.jsonl"))


def answers(root: Path) -> dict:
    """What the code on sys.path answers (run in a child)."""
    from sidecar import wire
    from sidecar.service import SessionService

    svc = SessionService(root)

    def every(**params) -> list[list]:
        out, cursor = [], None
        while True:
            page = svc.list(wire.ListParams(all=True, limit=500, includeArchived=True, cursor=cursor, **params))
            out += [
                [
                    Path(s.path).relative_to(root).as_posix(),
                    s.sessionId,
                    s.cwd,
                    s.created,
                    s.modified,
                    s.messageCount,
                    s.firstMessage,
                    s.name,
                    s.title,
                    s.parentSession,
                    repr(s.tokens),
                    s.snippet,
                ]
                for s in page.sessions
            ]
            cursor = page.nextCursor
            if cursor is None:
                return out

    result = {"list": every()}
    for query in QUERIES:
        result[f"before {query}"] = every(query=query)
    svc.store.catalog.index.build_search()
    for query in QUERIES:
        result[f"after {query}"] = every(query=query)
    svc.store.catalog.index.close()
    return result


def run(code: Path, root: Path) -> dict:
    shutil.rmtree(root / ".index", ignore_errors=True)
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(root)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(code)},
        cwd=str(code),
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default="main")
    parser.add_argument("--folders", type=int, default=50)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(answers(args.child)))
        return
    with tempfile.TemporaryDirectory(prefix="rebuild-compare-") as temp:
        old = Path(temp) / "old"
        old.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", args.ref, "sidecar"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        root = Path(temp) / "root"
        files = make_root(root, args.folders)
        before, after = run(old, root), run(REPO, root)
    differing = [key for key in before if before[key] != after.get(key)]
    listed = len(before["list"])
    hits = sum(len(before[key]) for key in before if key != "list")
    print(
        f"{files} files, {listed} sessions listed, {len(QUERIES)} queries before and after the full-text build"
        f" ({hits} hits): {args.ref} and this checkout answer "
        + ("the same" if not differing else f"DIFFERENTLY in {differing}")
    )
    if differing:
        sys.exit(1)


if __name__ == "__main__":
    main()
