"""No circles of files in sidecar/: every import counts, at module level or inside a function.

The graph has one node per module (a package's ``__init__`` is a module of its own name) and an
edge for every import statement: relative ones resolved, ``from pkg import name`` counting
``pkg.name`` when that is a module and ``pkg`` otherwise. A strongly connected component of more
than one module is a circle: two files that cannot be read, tested or moved one without the other.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "sidecar"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def all_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The sidecar modules ``path`` (module ``name``) imports, anywhere in the file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def add(target: str) -> None:
        # An import of a.b.c runs a, a.b and a.b.c; the edge that matters is to the module named.
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target and target != name:
            found.add(target)

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "sidecar" or alias.name.startswith("sidecar."):
                    add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not (target == "sidecar" or target.startswith("sidecar.")):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                add(sub if sub in modules else target)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = all_modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def describe(component: list[str], graph: dict[str, set[str]]) -> str:
    members = set(component)
    edges = [f"    {a} -> {b}" for a in component for b in sorted(graph[a] & members)]
    return f"circle of {len(component)}: {', '.join(component)}\n" + "\n".join(edges)


def test_the_graph_sees_every_kind_of_import() -> None:
    """The checker itself: relative imports resolved, submodules told from names."""
    graph = import_graph()
    assert "sidecar.format.ids" in graph["sidecar.store.files.store"]
    assert "sidecar" in graph  # the package's __init__ is a module
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_circles_of_files() -> None:
    graph = import_graph()
    found = circles(graph)
    report = "\n".join(describe(component, graph) for component in found)
    print(report)
    assert found == [], f"{len(found)} circles of files in sidecar/:\n{report}"
