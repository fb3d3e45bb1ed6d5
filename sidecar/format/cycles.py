"""The cycle collector paused while many objects that never form cycles are made."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cycles_paused() -> Iterator[None]:
    """Pause the cycle collector for the block (a load, an import); objects are freed by reference counting as usual.

    Loading a session or importing one makes tens of thousands of objects that never form
    cycles; with the collector on, each batch of them sets off a pass over everything already
    made: about a fifth of the load time of a large session, a third of an import's write.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
