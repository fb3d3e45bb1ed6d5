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
    # The store stands below every engine: what it needs of upkeep (what a store holds, what erasing did)
    # is its own (store/usage.py, store/files/usage.py and trash.py).
    "store": ("context", "compaction", "providers", "service", "rpc", "operations", "upkeep", "history", "export",
              "importers", "live", "snapshots"),
    "providers": ("compaction", "store", "service", "rpc", "operations"),
    "compaction": ("service", "rpc", "operations"),
    "operations": ("service", "rpc"),
    "export": ("service", "rpc", "operations"),
    "importers": ("service", "rpc", "operations"),
    "live": ("service", "rpc", "operations"),
    "upkeep": ("service", "rpc", "operations"),
    "history": ("service", "rpc", "operations"),
    "snapshots": ("service", "rpc", "operations"),
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


# -- the store's front door and its rooms ---------------------------------------------------------------------

STORE = PACKAGE / "store"
# The faces code outside store/ imports: the store's own and each backend's (and the index's).
STORE_FACES = ("sidecar.store", "sidecar.store.files", "sidecar.store.index", "sidecar.store.postgres",
               "sidecar.store.spec")
# store's rooms: each may import the root and the rooms listed, never the others.
STORE_ROOMS = {
    "index": (),
    "files": ("index",),
    "postgres": ("files", "index"),
    "spec": ("files", "index"),
}
# The one root module that opens a backend: only inside its function (or for the type checker).
CHOOSER = STORE / "choosing.py"


def _is_module_file(name: str) -> bool:
    """``sidecar.x.y`` names a module file (not a package's face)."""
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file()


def imported_targets(path: Path) -> list[tuple[str, ast.stmt, bool]]:
    """(what is imported, the statement, whether it runs only later) for every sidecar import in ``path``:
    ``from a.b import c`` names ``a.b.c`` when that is a module file, else ``a.b``. "Later": inside a
    function or an ``if TYPE_CHECKING:`` block."""
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = module.rsplit(".", 1)[0] if path.name != "__init__.py" else module.removesuffix(".__init__")
    found: list[tuple[str, ast.stmt, bool]] = []

    def visit(node: ast.AST, later: bool) -> None:
        for child in ast.iter_child_nodes(node):
            deferred = later or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) or (
                isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test))
            if isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - child.level + 1]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                for alias in child.names:
                    full = f"{target}.{alias.name}"
                    found.append((full if _is_module_file(full) else target, child, later))
            elif isinstance(child, ast.Import):
                found.extend((alias.name, child, later) for alias in child.names)
            visit(child, deferred)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return [(name, node, later) for name, node, later in found if name == "sidecar" or name.startswith("sidecar.")]


def _command_module(name: str) -> bool:
    return name.rsplit(".", 1)[-1] + ".py" in COMMAND_MODULES


def test_outside_the_store_code_imports_its_faces() -> None:
    """``sidecar.store`` or a backend's face, never a module file inside store/ (command drivers excepted)."""
    offences = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if STORE in path.parents:
            continue
        for name, node, _ in imported_targets(path):
            if name.startswith("sidecar.store") and name not in STORE_FACES and not _command_module(name):
                offences.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} imports {name}")
    assert offences == []


def _room_of(name: str) -> str | None:
    parts = name.split(".")
    if len(parts) > 3 and parts[:2] == ["sidecar", "store"] and parts[2] in STORE_ROOMS:
        return parts[2]
    if len(parts) == 3 and parts[:2] == ["sidecar", "store"] and parts[2] in STORE_ROOMS:
        return parts[2]
    return None


def test_the_store_rooms_point_one_way() -> None:
    """Backends import store's root and the rooms below them; the root imports no backend (the chooser
    alone, inside its function); nothing in store/ goes through a face of its own package."""
    offences = []
    for path in sorted(STORE.rglob("*.py")):
        relative = path.relative_to(STORE)
        room = relative.parts[0] if len(relative.parts) > 1 else None
        if path.name in COMMAND_MODULES:
            continue
        for name, node, later in imported_targets(path):
            where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno} imports {name}"
            if name == "sidecar.store" or (name in STORE_FACES and room != _room_of(name) and path.name != "__init__.py"):
                offences.append(where + " (a face: inside store/, import the module)")
                continue
            target = _room_of(name)
            if target is None or target == room:
                continue
            if room is None:
                if not (path == CHOOSER and later) and path.name != "__init__.py":
                    offences.append(where)
            elif target not in STORE_ROOMS[room]:
                offences.append(where)
    assert offences == []


def test_the_faces_name_what_they_load() -> None:
    """Every name a face loads on first use is there, from the module it names."""
    import importlib

    for face in STORE_FACES:
        module = importlib.import_module(face)
        for name in module.__all__:
            assert getattr(module, name) is not None, f"{face}.{name}"
