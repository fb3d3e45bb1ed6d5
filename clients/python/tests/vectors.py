"""protocol/vectors/README.md's rules: ``${name}`` substitution and the expect matcher.

Written for this client's tests (the server's suite has its own).
"""

from __future__ import annotations

import re
from typing import Any

PLACEHOLDER = re.compile(r"\$\{(\w+)\}")
TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z")
CAPTURE = re.compile(r"<capture:(\w+)>")


class VectorMismatch(AssertionError):
    pass


def fill(value: Any, names: dict[str, Any]) -> Any:
    """Replace ``${name}``; a string that is only a placeholder takes the value's own JSON type."""
    if isinstance(value, str):
        only = PLACEHOLDER.fullmatch(value)
        if only:
            return names[only.group(1)]
        return PLACEHOLDER.sub(lambda m: str(names[m.group(1)]), value)
    if isinstance(value, list):
        return [fill(v, names) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, names) for k, v in value.items()}
    return value


def expect(expected: Any, actual: Any, names: dict[str, Any], path: str = "") -> None:
    """Raise VectorMismatch unless ``actual`` fits ``expected``; captures go into ``names``."""
    where = path or "message"
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            raise VectorMismatch(f"{where}: expected an object, got {actual!r}")
        if expected.keys() != actual.keys():
            raise VectorMismatch(f"{where}: keys {sorted(actual)} instead of {sorted(expected)}")
        for key in expected:
            expect(expected[key], actual[key], names, f"{path}.{key}")
        return
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            raise VectorMismatch(f"{where}: expected {len(expected)} items, got {actual!r}")
        for index, (e, a) in enumerate(zip(expected, actual)):
            expect(e, a, names, f"{path}[{index}]")
        return
    if isinstance(expected, str):
        capture = CAPTURE.fullmatch(expected)
        if capture:
            names[capture.group(1)] = actual
            return
        ok = {
            "<any>": lambda: True,
            "<string>": lambda: isinstance(actual, str),
            "<integer>": lambda: type(actual) is int,
            "<timestamp>": lambda: isinstance(actual, str) and TIMESTAMP.fullmatch(actual) is not None,
        }.get(expected)
        if ok is not None:
            if not ok():
                raise VectorMismatch(f"{where}: {actual!r} is not {expected}")
            return
        wanted = fill(expected, names)
        if isinstance(wanted, str) and "<*>" in wanted:
            pattern = ".*".join(map(re.escape, wanted.split("<*>")))
            if not (isinstance(actual, str) and re.fullmatch(pattern, actual, re.DOTALL)):
                raise VectorMismatch(f"{where}: {actual!r} does not fit {wanted!r}")
            return
        if wanted != actual or type(wanted) is not type(actual):
            raise VectorMismatch(f"{where}: expected {wanted!r}, got {actual!r}")
        return
    if type(expected) is not type(actual) or expected != actual:
        raise VectorMismatch(f"{where}: expected {expected!r}, got {actual!r}")
