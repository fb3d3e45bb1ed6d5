"""What the tests holding the compiled core to the Python one share (issue 42).

``needs_compiled_core`` skips a module, with the reason, where the compiled module is not built;
``pytest.mark.usefixtures("core_restored")`` (tests/conftest.py) puts the process's choice of core
back after each test that switches between them."""

from __future__ import annotations

import importlib.util

import pytest

COMPILED_CORE_INSTALLED = importlib.util.find_spec("sidecar_core") is not None

needs_compiled_core = pytest.mark.skipif(
    not COMPILED_CORE_INSTALLED,
    reason="the compiled core (module sidecar_core) is not installed: bash scripts/core.sh builds it",
)
