"""When appended lines are forced to stable storage: the fsync policy every backend keeps (store.fsync)."""

from __future__ import annotations

from enum import Enum

__all__ = ["FsyncPolicy"]


class FsyncPolicy(str, Enum):
    """When appended lines are forced to stable storage."""

    ASSISTANT = "assistant"  # after every batch holding an assistant message (default)
    ALWAYS = "always"  # after every batch
    NEVER = "never"  # leave it to the OS; flush() still forces it
