"""Arrows point down: rpc -> service -> operations -> engines -> store -> format -> wire.

``LEVELS`` ranks every package and top-level module of sidecar/: code may import
only what stands on a lower line (at module level or inside a function), so an
import that runs back up fails here by name, whatever package it is in, and a
new package must be given its line. ``NEVER`` adds the few arrows that point down
yet are still kept out, for a reason each gives.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "sidecar"

LEVELS: list[tuple[str, ...]] = [
    # The commands and the developers' tools, above everything they drive (command modules inside a
    # package, see COMMAND_MODULES, stand here too).
    ("cli", "__main__", "demo", "doctor", "invocation", "schema"),
    # The transports: the JSON-RPC endpoint, sockets, framing.
    ("rpc",),
    # Maps each method's params onto the operations and the store; owns them as fields.
    ("service",),
    # One module per concept the protocol exposes (the append, compaction options, listing results...).
    ("operations",),
    # The engines that stand on the store and on the smaller engines below them.
    ("compaction", "export", "importers", "live", "snapshots", "upkeep"),
    ("context", "providers", "history", "external"),
    # Where sessions live, behind one seam (store/__init__.py).
    ("store",),
    # The file's entry types, codecs and migrations.
    ("format",),
    # The contract's types, settings, the progress handle and the shared leaves.
    ("wire", "config", "work", "trigrams"),
    # Which core reads session lines, Python's or the compiled one (issue 42): format stands on it.
    ("corepath",),
    ("errors", "__version__"),
]
LEVEL = {name: rank for rank, names in enumerate(reversed(LEVELS)) for name in names}

NEVER = {
    # A context is built from entries alone: any store (or none, in a test) can hand them over.
    "context": ("store",),
    # A provider turns a request into text; it never reads a session.
    "providers": ("store",),
    # The transports reach sessions only through the service (the queue key of an open by path comes
    # from format/ids.py, an append's durability point from the service).
    "rpc": ("store",),
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


def _rooms() -> list[str]:
    return sorted(
        {
            path.relative_to(PACKAGE).parts[0].removesuffix(".py")
            for path in PACKAGE.glob("*")
            if path.suffix == ".py" or (path / "__init__.py").is_file()
        }
        - {"__init__"}
    )


def test_every_room_has_its_line() -> None:
    """A package or module nobody ranked would slip past the rule below."""
    assert [room for room in _rooms() if room not in LEVEL] == []


@pytest.mark.parametrize("layer", _rooms())
def test_no_import_runs_back_up(layer: str) -> None:
    paths = sorted((PACKAGE / layer).rglob("*.py")) if (PACKAGE / layer).is_dir() else [PACKAGE / f"{layer}.py"]
    offences = []
    for path in paths:
        if path.name in COMMAND_MODULES:
            continue
        for name in imported_sidecar_modules(path):
            target = layer_of(name)
            if target is None or target == layer:
                continue
            if LEVEL.get(target, -1) >= LEVEL[layer] and LEVEL[layer] != LEVEL["cli"] or target in NEVER.get(layer, ()):
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
STORE_FACES = (
    "sidecar.store",
    "sidecar.store.files",
    "sidecar.store.index",
    "sidecar.store.postgres",
    "sidecar.store.spec",
)
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
            deferred = (
                later
                or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
                or (isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test))
            )
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
            if name == "sidecar.store" or (
                name in STORE_FACES and room != _room_of(name) and path.name != "__init__.py"
            ):
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
