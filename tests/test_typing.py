"""Every ``type: ignore`` in sidecar/ and the Python client (what mypy checks in CI) names the error it silences and says why.

``# type: ignore[code]  # why``: the code keeps the ignore from hiding a second, different error
on the same line (mypy's ``ignore-without-code``), and the reason tells the next reader whether
the ignore can go when the library or the code around it changes.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = (REPO / "sidecar", REPO / "clients" / "python" / "session_sidecar_client")

IGNORE = re.compile(r"#\s*type:\s*ignore\b")
WITH_REASON = re.compile(r"#\s*type:\s*ignore\[[a-z0-9_-]+(?:\s*,\s*[a-z0-9_-]+)*\]\s*#\s*\S")


def ignores_without_reason(source: str) -> list[tuple[int, str]]:
    """(line, comment) of every ``type: ignore`` comment lacking a code or a reason after it."""
    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT and IGNORE.search(token.string):
            if not WITH_REASON.search(token.string):
                found.append((token.start[0], token.string))
    return found


def test_the_rule_tells_a_reason_from_none() -> None:
    assert ignores_without_reason("x = 1  # type: ignore[assignment]  # msgspec fields are not narrowed\n") == []
    assert ignores_without_reason("x = 1  # type: ignore[assignment, arg-type]  # the C extension is untyped\n") == []
    assert len(ignores_without_reason("x = 1  # type: ignore\n")) == 1
    assert len(ignores_without_reason("x = 1  # type: ignore[assignment]\n")) == 1
    assert len(ignores_without_reason("x = 1  # type: ignore  # why\n")) == 1
    assert ignores_without_reason('x = "# type: ignore"\n') == []


def test_every_ignore_names_its_code_and_reason() -> None:
    offenders = []
    for path in sorted(path for package in PACKAGES for path in package.rglob("*.py")):
        for line, comment in ignores_without_reason(path.read_text(encoding="utf-8")):
            offenders.append(f"{path.relative_to(REPO)}:{line}: {comment}")
    assert offenders == [], "type: ignore without a code and a reason:\n" + "\n".join(offenders)
