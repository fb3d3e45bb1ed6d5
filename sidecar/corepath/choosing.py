"""The choice of core: ``SIDECAR_CORE`` at first import, ``choose`` after."""

from __future__ import annotations

import os
from collections.abc import Callable

import msgspec

from .gating import GateRules, LineGate, PythonLineGate
from .importing import CodexMapping, CodexVocabulary, PythonCodexMapping
from .python import LineScanner, PythonLineScanner
from .treeing import PythonTreeIndex, TreeIndex

CORES = ("auto", "python", "compiled")


class CoreMissing(ImportError):
    """``SIDECAR_CORE=compiled`` (or ``choose("compiled")``) and the compiled core does not import."""


def _compiled_imports() -> bool:
    try:
        from . import compiled  # noqa: F401  # imported to learn whether sidecar_core is installed
    except ImportError:
        return False
    return True


def _resolve(name: str) -> str:
    if name not in CORES:
        raise ValueError(f"SIDECAR_CORE must be one of {', '.join(CORES)}, not {name!r}")
    if name == "python":
        return "python"
    if _compiled_imports():
        return "compiled"
    if name == "compiled":
        raise CoreMissing(
            "SIDECAR_CORE=compiled but the compiled core (module sidecar_core, package session-sidecar-core) "
            "does not import: build it with scripts/core.sh, or set SIDECAR_CORE=python"
        )
    return "python"


_chosen = _resolve(os.environ.get("SIDECAR_CORE", "auto") or "auto")
_scanners: dict[tuple[str, type[msgspec.Struct]], LineScanner] = {}


def chosen() -> str:
    """The core that runs: "python" or "compiled"."""
    return _chosen


def choose(name: str) -> str:
    """Run ``name`` ("auto", "python" or "compiled") from now on in this process; the core it resolved to."""
    global _chosen
    _chosen = _resolve(name)
    return _chosen


def scanner_of(core: str, head_type: type[msgspec.Struct]) -> LineScanner:
    """The scanner of ``core`` ("python" or "compiled") making heads of ``head_type``, made once."""
    key = (core, head_type)
    scanner = _scanners.get(key)
    if scanner is None:
        if core == "compiled":
            from .compiled import CompiledLineScanner

            scanner = _scanners[key] = CompiledLineScanner(head_type)
        else:
            scanner = _scanners[key] = PythonLineScanner(head_type)
    return scanner


def line_scanner(head_type: type[msgspec.Struct]) -> LineScanner:
    """The chosen core's scanner."""
    return scanner_of(_chosen, head_type)


def gate_of(
    core: str,
    rules: GateRules,
    python_gate: Callable[[bytes], bool],
    names_secret: Callable[[bytes], bool],
) -> LineGate:
    """Redaction's line gate on ``core`` ("python" or "compiled"): the rules' own ``python_gate``, or the
    compiled one made with ``rules`` and ``names_secret`` (whether a key, as bytes, names a secret)."""
    if core == "compiled":
        from .compiled import CompiledLineGate

        return CompiledLineGate(rules, names_secret)
    return PythonLineGate(python_gate)


def tree_index_of(core: str) -> TreeIndex:
    """A new, empty tree index of ``core`` ("python" or "compiled"): one per tree, it holds the tree's columns."""
    if core == "compiled":
        from .compiled import compiled_tree_index

        return compiled_tree_index()
    return PythonTreeIndex()


def tree_index() -> TreeIndex:
    """A new tree index of the chosen core."""
    return tree_index_of(_chosen)


_codex_mappings: dict[tuple[str, int], tuple[CodexVocabulary, CodexMapping]] = {}


def codex_mapping_of(core: str, vocabulary: CodexVocabulary) -> CodexMapping:
    """The Codex importer's mapping on ``core`` ("python" or "compiled"), made once per vocabulary."""
    key = (core, id(vocabulary))
    made = _codex_mappings.get(key)
    if made is None or made[0] is not vocabulary:
        mapping: CodexMapping
        if core == "compiled":
            from .compiled import CompiledCodexMapping

            mapping = CompiledCodexMapping(vocabulary)
        else:
            mapping = PythonCodexMapping(vocabulary)
        made = _codex_mappings[key] = (vocabulary, mapping)
    return made[1]


def codex_mapping(vocabulary: CodexVocabulary) -> CodexMapping:
    """The chosen core's Codex mapping."""
    return codex_mapping_of(_chosen, vocabulary)
