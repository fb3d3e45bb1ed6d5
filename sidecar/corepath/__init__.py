"""Which core reads session lines (and gates them for redaction): the pure-Python reference or the compiled one (issue 42).

``SIDECAR_CORE`` picks it when this is first imported: ``auto`` (the default)
runs the compiled core when its module (``sidecar_core``, the
session-sidecar-core package built from core/) imports, else Python;
``python`` runs Python; ``compiled`` runs the compiled core and fails loudly
when it is absent. Both paths implement ``LineScanner``; the compiled one
gives exactly what Python gives (tests/format/test_core_differential.py), and
a stretch it cannot vouch for it hands to Python. Redaction's line gate
(``gate_of``, gating.py), the tree's index (``tree_index``, treeing.py)
and the Codex importer's mapping (``codex_mapping``, importing.py) are chosen the same way.
"""

from __future__ import annotations

from .choosing import (
    CORES,
    CoreMissing,
    choose,
    chosen,
    codex_mapping,
    codex_mapping_of,
    gate_of,
    line_scanner,
    scanner_of,
    tree_index,
    tree_index_of,
)
from .gating import GateRules, LineGate, PythonLineGate
from .importing import CodexMapped, CodexMapping, CodexVocabulary, PythonCodexMapping
from .python import Columns, LineScanner, PythonLineScanner
from .treeing import PythonTreeIndex, TreeIndex

__all__ = [
    "CORES",
    "CodexMapped",
    "CodexMapping",
    "CodexVocabulary",
    "Columns",
    "CoreMissing",
    "GateRules",
    "LineGate",
    "LineScanner",
    "PythonCodexMapping",
    "PythonLineGate",
    "PythonLineScanner",
    "PythonTreeIndex",
    "TreeIndex",
    "choose",
    "chosen",
    "codex_mapping",
    "codex_mapping_of",
    "gate_of",
    "line_scanner",
    "scanner_of",
    "tree_index",
    "tree_index_of",
]
