"""The compiled line scanner, redaction gate and tree index (core/src, module ``sidecar_core``), behind the
interfaces of python.py, gating.py and treeing.py.

Importing this module raises ImportError when the compiled core is not installed.
"""

from __future__ import annotations

import mmap
from collections.abc import Callable

import msgspec
import sidecar_core  # built from core/ by scripts/core.sh; absent in a pure-Python install (then ImportError)

from .gating import GateRules
from .importing import CodexMapped, CodexVocabulary
from .python import Columns, PythonLineScanner


class CompiledLineScanner:
    """The compiled scan; a stretch it refuses (it refuses whatever it cannot vouch for) goes to Python's."""

    def __init__(self, head_type: type[msgspec.Struct]) -> None:
        self._compiled = sidecar_core.LineScanner(head_type, msgspec.UNSET)
        self._python = PythonLineScanner(head_type)

    def scan(self, buffer: bytes | mmap.mmap, start: int, stop: int) -> Columns | None:
        found = self._compiled.scan(buffer, start, stop)
        if found is None:
            return self._python.scan(buffer, start, stop)
        return Columns(*found)

    def scan_compiled(self, buffer: bytes | mmap.mmap, start: int, stop: int) -> Columns | None:
        """The compiled scan alone, None where it refuses (the differential tests compare it with Python's)."""
        found = self._compiled.scan(buffer, start, stop)
        return None if found is None else Columns(*found)


class CompiledLineGate:
    """The compiled gate (core/src/gate.rs): ``names_secret(key)`` judges a key it has not met (as bytes)."""

    def __init__(self, rules: GateRules, names_secret: Callable[[bytes], bool]) -> None:
        self._compiled = sidecar_core.LineGate(
            list(rules.run_needles), list(rules.stems), list(rules.plain_keys), names_secret
        )
        self.may_hold_secret = self._compiled.may_hold_secret
        self.which_may_hold_secret = self._compiled.which_may_hold_secret

    @staticmethod
    def free_bounds(raw: bytes) -> tuple[int, int]:
        """Where the compiled gate finds the free text of ``raw`` (the differential tests compare it with Python's)."""
        return sidecar_core.LineGate.free_bounds(raw)


def compiled_tree_index() -> sidecar_core.TreeIndex:
    """A new compiled tree index (core/src/tree.rs): it implements treeing.py's ``TreeIndex`` as it is."""
    return sidecar_core.TreeIndex()


class CompiledCodexMapping:
    """The compiled Codex mapping (core/src/import_codex.rs); None for a file it does not vouch for."""

    def __init__(self, vocabulary: CodexVocabulary) -> None:
        self._compiled = sidecar_core.CodexMapper(vocabulary)

    def map(self, buffer: bytes | mmap.mmap) -> CodexMapped | None:
        found = self._compiled.map(buffer)
        return None if found is None else CodexMapped(*found)
