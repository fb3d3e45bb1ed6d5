"""A clone alone passes its tests: nothing the tests, scripts or docs use lives beside the checkout.

The pi fixtures once lived in a ``shared/`` folder next to the repository, so a clone on a fresh
machine failed 7 tests and errored 15 (issue 36). This test reads every tracked text file for a
path that climbs out of the repository to reach such a folder.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# "../shared/...", 'parent / "shared"', "/work/shared": the shapes a reach outside the checkout took.
OUTSIDE = re.compile(r"\.\./shared\b|parent\s*/\s*[\"']shared[\"']|/work/shared\b")


def test_no_tracked_file_reaches_outside_the_checkout() -> None:
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    offenders = []
    for name in tracked.decode().split("\0"):
        path = REPO / name
        if (
            not name
            or not path.is_file()
            or path.stat().st_size > 4 * 1024 * 1024
            or name == "tests/test_self_contained.py"
        ):
            continue
        text = path.read_bytes()
        if b"\0" in text:
            continue
        for number, line in enumerate(text.decode("utf-8", "replace").splitlines(), 1):
            if OUTSIDE.search(line):
                offenders.append(f"{name}:{number}: {line.strip()}")
    assert not offenders, "files that need a folder beside the checkout:\n" + "\n".join(offenders)


def test_the_pi_fixtures_are_in_the_repository() -> None:
    from conftest import PI_FIXTURES

    assert PI_FIXTURES.is_relative_to(REPO)
    tracked = subprocess.run(
        ["git", "ls-files", str(PI_FIXTURES)], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert {Path(line).name for line in tracked.stdout.split()} >= {"before-compaction.jsonl", "large-session.jsonl"}
