"""The compiled line scanner (core/src, module ``sidecar_core``), behind the interface of python.py.

Importing this module raises ImportError when the compiled core is not installed.
"""

from __future__ import annotations

import mmap

import msgspec
import sidecar_core  # built from core/ by scripts/core.sh; absent in a pure-Python install (then ImportError)

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
