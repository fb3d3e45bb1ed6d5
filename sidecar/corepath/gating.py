"""Redaction's gate on an entry's line (issue 38): the interface, the rules it is made with, and the Python path.

The gate answers, for an entry's line as written, whether the full redaction
walk must look at it: False only when the walk would change nothing. The rules
it reads (which needles a run may hold, the stems of secret-sounding names,
which keys name no secret, and whether a key does) belong to the redaction
rules (sidecar/export/redact/rules.py), which hand them over here: this layer
stands below them. The pure-Python gate is theirs too, handed over as a
function; the compiled one (core/src/gate.rs) reads the same tests in one pass
each, and may say "walk" where Python's says "clean", never the other way
(tests/export/test_gate_differential.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import msgspec


class GateRules(msgspec.Struct, frozen=True):
    # The needles (as written, ASCII, no space or quote) a row matching inside one run of 12 to 19 holds.
    run_needles: tuple[bytes, ...]
    # The stems every secret-sounding name holds, lowercase.
    stems: tuple[bytes, ...]
    # Keys that name no secret (the structural fields): passed over without a judgement.
    plain_keys: tuple[bytes, ...]


class LineGate(Protocol):
    def may_hold_secret(self, raw: bytes) -> bool:
        """False only when the full redaction walk would change nothing in the entry of line ``raw``."""
        ...

    def which_may_hold_secret(self, raws: Sequence[bytes]) -> list[bool]:
        """``may_hold_secret`` of each line."""
        ...


class PythonLineGate:
    """The rules' own gate, a function of the line."""

    def __init__(self, line_may_hold_secret: Callable[[bytes], bool]) -> None:
        self.may_hold_secret = line_may_hold_secret

    def which_may_hold_secret(self, raws: Sequence[bytes]) -> list[bool]:
        return list(map(self.may_hold_secret, raws))
