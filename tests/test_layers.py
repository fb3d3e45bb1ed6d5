"""Arrows point down: rpc -> service -> operations -> store / context / compaction -> format.

Each rule names a package and the sidecar packages it must never import (at
module level or inside a function): an import that runs back up would tie a
lower layer to one above it, and a second store could no longer plug in below
the service.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "sidecar"

FORBIDDEN = {
    # The contract's types stand on msgspec alone.
    "wire": ("format", "store", "context", "compaction", "providers", "service", "rpc", "operations", "history",
             "upkeep", "export", "importers", "live", "snapshots"),
    "format": ("store", "context", "compaction", "providers", "service", "rpc", "operations", "history", "upkeep"),
    "context": ("store", "compaction", "providers", "service", "rpc", "operations"),
    "store": ("context", "compaction", "providers", "service", "rpc", "operations"),
    "providers": ("compaction", "store", "service", "rpc", "operations"),
    "compaction": ("service", "rpc", "operations"),
    "operations": ("service", "rpc"),
    "export": ("service", "rpc", "operations"),
    "importers": ("service", "rpc", "operations"),
    "live": ("service", "rpc", "operations"),
    "rpc": ("store",),
    # The service maps params onto operations and the store; the transports stand above it.
    "service": ("rpc",),
}


def imported_sidecar_modules(path: Path) -> list[str]:
    """``sidecar.x.y`` for every import in ``path``, relative ones resolved."""
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = module.rsplit(".", 1)[0] if path.name != "__init__.py" else module.removesuffix(".__init__")
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [f"{target}.{alias.name}" for alias in node.names] if node.module is None else [target]
            found.extend(names)
        elif isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
    return [name for name in found if name == "sidecar" or name.startswith("sidecar.")]


def layer_of(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else None


# A package's command-line driver (``session-sidecar import``, ``export``...) stands beside cli.py,
# above the service it drives, whatever package it is kept in.
COMMAND_MODULES = ("command.py", "cli.py")


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_no_import_runs_back_up(layer: str) -> None:
    offences = []
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        if path.name in COMMAND_MODULES:
            continue
        for name in imported_sidecar_modules(path):
            if layer_of(name) in FORBIDDEN[layer]:
                offences.append(f"{path.relative_to(PACKAGE.parent)} imports {name}")
    assert offences == []


def test_the_rule_sees_relative_imports() -> None:
    """The checker itself: a relative import two levels up is resolved to its sidecar package."""
    names = imported_sidecar_modules(PACKAGE / "store" / "files" / "store.py")
    assert "sidecar.store.base" in names and "sidecar.format.ids" in names
    assert layer_of("sidecar.context.build") == "context"
