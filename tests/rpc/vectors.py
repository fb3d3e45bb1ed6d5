"""Replaying protocol/vectors/*.json: the matching rules of protocol/vectors/README.md, in Python."""

from __future__ import annotations

import re
from typing import Any

ISO_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
_NAME = re.compile(r"\$\{([A-Za-z0-9_]+)\}")


class Mismatch(AssertionError):
    pass


def substitute(value: Any, names: dict[str, Any]) -> Any:
    """``${name}`` in strings: a whole-string reference keeps the captured value's type."""
    if isinstance(value, dict):
        return {key: substitute(item, names) for key, item in value.items()}
    if isinstance(value, list):
        return [substitute(item, names) for item in value]
    if isinstance(value, str):
        whole = _NAME.fullmatch(value)
        if whole is not None:
            return names[whole.group(1)]
        return _NAME.sub(lambda m: str(names[m.group(1)]), value)
    return value


def match(expected: Any, actual: Any, names: dict[str, Any], where: str = "$") -> None:
    if isinstance(expected, str):
        if expected == "<any>":
            return
        if expected == "<string>":
            return _check(isinstance(actual, str), expected, actual, where)
        if expected == "<integer>":
            return _check(isinstance(actual, int) and not isinstance(actual, bool), expected, actual, where)
        if expected == "<timestamp>":
            return _check(isinstance(actual, str) and bool(ISO_TIMESTAMP.match(actual)), expected, actual, where)
        if expected.startswith("<capture:") and expected.endswith(">"):
            names[expected[len("<capture:") : -1]] = actual
            return
        text = substitute(expected, names)
        if isinstance(text, str) and "<*>" in text:
            pattern = ".*".join(re.escape(part) for part in text.split("<*>"))
            return _check(isinstance(actual, str) and re.fullmatch(pattern, actual) is not None, text, actual, where)
        return _check(text == actual, text, actual, where)
    if isinstance(expected, dict):
        _check(
            isinstance(actual, dict) and set(expected) == set(actual),
            sorted(expected),
            sorted(actual) if isinstance(actual, dict) else actual,
            where,
        )
        for key, item in expected.items():
            match(item, actual[key], names, f"{where}.{key}")
        return
    if isinstance(expected, list):
        _check(isinstance(actual, list) and len(expected) == len(actual), expected, actual, where)
        for index, item in enumerate(expected):
            match(item, actual[index], names, f"{where}[{index}]")
        return
    _check(expected == actual and type(expected) is type(actual), expected, actual, where)


def _check(ok: bool, expected: Any, actual: Any, where: str) -> None:
    if not ok:
        raise Mismatch(f"at {where}: expected {expected!r}, got {actual!r}")
