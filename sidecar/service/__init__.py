"""The operations the protocol exposes, independent of any transport and of where sessions live.

Sessions are kept by a ``SessionStore`` (store/base.py; the file store by
default); the service maps params onto it and onto the operations in
``sidecar/operations/``, and never touches a path itself. ``core`` is the
service (``SessionService``, which owns the store and the engines as fields),
``live`` its live sessions (``LiveHub``), ``methods`` the table of the
protocol's methods: for each, its params, the service call that answers it
and what the rpc layer needs to know of it.
"""

from __future__ import annotations

from ..store import HeldUpkeep
from .core import SessionService, redact_on_append

# HeldUpkeep: the index upkeep held back until an answer is out, which the rpc layer keeps without looking in.
__all__ = ["HeldUpkeep", "SessionService", "redact_on_append"]
