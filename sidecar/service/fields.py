"""A service field made the first time it is read, so that serving starts without loading its engine.

A sidecar answers ``initialize`` and its first ``session/list`` long before (if ever) it takes a
snapshot, records a prompt or follows a watched file: each such collaborator is a field declared
with ``@made_on_first_use``, whose maker imports its engine and builds it once, when a method first
reads it. The made value is kept in the instance's ``__dict__``, where every later read finds it
without passing through here again (this is a non-data descriptor), so a hot path pays nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

Owner = TypeVar("Owner")
Value = TypeVar("Value")


class MadeOnFirstUse(Generic[Owner, Value]):
    def __init__(self, make: Callable[[Owner], Value]) -> None:
        self._make = make
        self._name = make.__name__
        # Re-entrant: a maker may read another field of the same owner (the live hub reads the watches).
        self._lock = threading.RLock()

    def __set_name__(self, owner: type[Owner], name: str) -> None:
        self._name = name

    @overload
    def __get__(self, instance: None, owner: type[Owner]) -> MadeOnFirstUse[Owner, Value]: ...
    @overload
    def __get__(self, instance: Owner, owner: type[Owner]) -> Value: ...
    def __get__(self, instance: Owner | None, owner: type[Owner]) -> Any:
        if instance is None:
            return self
        fields = instance.__dict__
        with self._lock:  # two threads reading it first make one value, not two
            if self._name not in fields:
                fields[self._name] = self._make(instance)
            return fields[self._name]

    def made(self, instance: Owner) -> Value | None:
        """The value if it was made already, else None (a hook with nothing to tell does not make it)."""
        value: Value | None = instance.__dict__.get(self._name)
        return value


def made_on_first_use(make: Callable[[Owner], Value]) -> MadeOnFirstUse[Owner, Value]:
    return MadeOnFirstUse(make)
