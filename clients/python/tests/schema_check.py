"""Check JSON values against protocol/schema.json (the subset of JSON Schema it uses), and against the generated TypedDicts."""

from __future__ import annotations

import json
import typing
from functools import lru_cache
from typing import Any

from session_sidecar_client import protocol

from .paths import SCHEMA_PATH


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def problems(value: Any, spec: dict[str, Any], path: str = "$") -> list[str]:
    """Why ``value`` does not fit ``spec`` (empty when it does)."""
    if "$ref" in spec:
        return problems(value, schema()["$defs"][spec["$ref"].rsplit("/", 1)[-1]], path)
    if "anyOf" in spec:
        options = [problems(value, option, path) for option in spec["anyOf"]]
        return (
            [] if any(not p for p in options) else [f"{path}: {value!r} fits none of {len(options)} options: {options}"]
        )
    if "enum" in spec:
        return [] if value in spec["enum"] else [f"{path}: {value!r} not in {spec['enum']}"]
    kind = spec.get("type")
    checks = {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: type(v) is int,
        "number": lambda v: type(v) in (int, float),
        "boolean": lambda v: isinstance(v, bool),
        "null": lambda v: v is None,
        "array": lambda v: isinstance(v, list),
        "object": lambda v: isinstance(v, dict),
    }
    if kind is not None and not checks[kind](value):
        return [f"{path}: {value!r} is not {kind}"]
    found: list[str] = []
    if kind == "array":
        for index, item in enumerate(value):
            found += problems(item, spec.get("items", {}), f"{path}[{index}]")
    if kind == "object":
        properties = spec.get("properties", {})
        for key in spec.get("required", []):
            if key not in value:
                found.append(f"{path}: missing {key}")
        extra = spec.get("additionalProperties", True)
        for key, item in value.items():
            if key in properties:
                found += problems(item, properties[key], f"{path}.{key}")
            elif extra is False:
                found.append(f"{path}: unexpected field {key}")
            elif isinstance(extra, dict):
                found += problems(item, extra, f"{path}.{key}")
    return found


def check_result(method: str, value: Any) -> None:
    """``value`` fits the method's result schema and, field by field, the generated TypedDict."""
    spec = schema()["methods"][method]["result"]
    found = problems(value, spec)
    assert not found, f"{method} result does not fit schema.json: {found}"
    name = protocol.METHODS[method][1].split(" | ")[0]
    check_typed(value, name)


def check_typed(value: Any, type_name: str) -> None:
    """Required keys present, no keys the TypedDict does not know (recursively through nested TypedDicts)."""
    cls = getattr(protocol, type_name, None)
    if cls is None or value is None:
        return
    assert isinstance(value, dict), (type_name, value)
    hints = typing.get_type_hints(cls)
    missing = cls.__required_keys__ - value.keys()
    unknown = value.keys() - (cls.__required_keys__ | cls.__optional_keys__)
    assert not missing and not unknown, f"{type_name}: missing {missing}, unknown {unknown}"
    for key, item in value.items():
        options = _typed_dicts_in(hints[key])
        if not options:
            continue
        for element in item if isinstance(item, list) else [item]:
            if isinstance(element, dict):
                _check_one_of(element, options)


def _check_one_of(value: dict[str, Any], options: list[type]) -> None:
    """``value`` fits one of ``options`` (a tagged union: message roles, block types, entry types)."""
    failures = []
    for option in options:
        try:
            check_typed(value, option.__name__)
            return
        except AssertionError as error:
            failures.append(str(error))
    raise AssertionError(f"fits none of {[o.__name__ for o in options]}: {failures}")


def _typed_dicts_in(annotation: Any) -> list[type]:
    found = []
    if isinstance(annotation, type) and hasattr(annotation, "__required_keys__"):
        found.append(annotation)
    for arg in typing.get_args(annotation):
        found += _typed_dicts_in(arg)
    return found
