"""How the store's faces stay cheap to import: each name a face lists is loaded from its module the first
time it is asked for (a module ``__getattr__``, PEP 562), so ``import sidecar.store`` costs nothing until a
name is used, and a process that never asks for a backend never loads it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from importlib import import_module


def lazy_names(
    package: str, where: Mapping[str, str], namespace: MutableMapping[str, object]
) -> Callable[[str], object]:
    """The ``__getattr__`` of face ``package``: ``where`` maps each name to the module of the package that
    defines it; a name once loaded is kept in the face's ``namespace`` (its globals), so it is looked up once."""

    def load(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    return load
