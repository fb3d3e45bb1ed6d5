"""Errors as values with stable codes, raised by the service and mapped by the rpc layer.

JSON-RPC reserves -32768..-32000; our own codes live in -33000..-33099 and
never change meaning once published (protocol/PROTOCOL.md lists them).
"""

from __future__ import annotations

from typing import Any

# JSON-RPC and LSP codes we answer with.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002
REQUEST_CANCELLED = -32800


class SidecarError(Exception):
    """Base of every error the service reports; ``code`` is stable, ``data`` is for programs."""

    code = -33000
    kind = "error"

    def __init__(self, message: str, **data: Any) -> None:
        super().__init__(message)
        self.message = message
        self.data = {"kind": self.kind, **data}


class InvalidParams(SidecarError):
    code = INVALID_PARAMS
    kind = "invalidParams"


class SessionNotFound(SidecarError):
    code = -33001
    kind = "sessionNotFound"


class InvalidSessionId(SidecarError):
    code = -33002
    kind = "invalidSessionId"


class EntryNotFound(SidecarError):
    code = -33003
    kind = "entryNotFound"


class SessionLocked(SidecarError):
    code = -33004
    kind = "sessionLocked"


class StorageError(SidecarError):
    code = -33005
    kind = "storageError"


class DamagedFile(SidecarError):
    code = -33006
    kind = "damagedFile"


class PathOutsideRoot(SidecarError):
    code = -33007
    kind = "pathOutsideRoot"


class SessionExists(SidecarError):
    code = -33008
    kind = "sessionExists"


class InvalidEntry(SidecarError):
    code = -33009
    kind = "invalidEntry"


class InvalidState(SidecarError):
    """The session is not in a state that allows the call (e.g. restoring one not in the trash)."""

    code = -33010
    kind = "invalidState"


class PayloadTooLarge(SidecarError):
    code = -33011
    kind = "payloadTooLarge"


class RequestCancelled(SidecarError):
    """The client cancelled the request (``$/cancelRequest``) before it changed anything."""

    code = REQUEST_CANCELLED
    kind = "requestCancelled"


# -- compaction and summarizing: -33020..-33039 --------------------------------


class NothingToCompact(SidecarError):
    """Everything since the last compaction would be kept (or the leaf is a compaction)."""

    code = -33020
    kind = "nothingToCompact"


class ProviderError(SidecarError):
    """The summarizing model failed (after bounded retries); ``data`` names provider and status."""

    code = -33021
    kind = "providerError"


class ContextOverflow(ProviderError):
    """The summarization request itself is larger than the model accepts."""

    code = -33022
    kind = "contextOverflow"


class ProviderNotConfigured(SidecarError):
    """The named provider has no key, endpoint or client to ask."""

    code = -33023
    kind = "providerNotConfigured"


class CompactionConflict(SidecarError):
    """The session's leaf moved to another branch while compacting; nothing was written."""

    code = -33024
    kind = "compactionConflict"


ALL_ERRORS: tuple[type[SidecarError], ...] = (
    SessionNotFound,
    InvalidSessionId,
    EntryNotFound,
    SessionLocked,
    StorageError,
    DamagedFile,
    PathOutsideRoot,
    SessionExists,
    InvalidEntry,
    InvalidState,
    PayloadTooLarge,
    NothingToCompact,
    ProviderError,
    ContextOverflow,
    ProviderNotConfigured,
    CompactionConflict,
)
