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
    """The params do not fit the method (a missing or mistyped field)."""

    code = INVALID_PARAMS
    kind = "invalidParams"


class SessionNotFound(SidecarError):
    """No session with that id below the root (or, for close, none open), or no file at that path."""

    code = -33001
    kind = "sessionNotFound"


class InvalidSessionId(SidecarError):
    """A session id that is not 1-64 letters, digits, '.', '_' or '-' (letters or digits at both ends)."""

    code = -33002
    kind = "invalidSessionId"


class EntryNotFound(SidecarError):
    """An entry id (leaf, branch target, label target, parent) that is not in the session."""

    code = -33003
    kind = "entryNotFound"


class SessionLocked(SidecarError):
    """Another process holds the session open for writing."""

    code = -33004
    kind = "sessionLocked"


class StorageError(SidecarError):
    """The disk refused a read or write (space, permissions); latched until the session is reopened."""

    code = -33005
    kind = "storageError"


class DamagedFile(SidecarError):
    """The file is not a session (no valid header line); it is left unchanged."""

    code = -33006
    kind = "damagedFile"


class PathOutsideRoot(SidecarError):
    """A path outside the sessions root (allowed only with store.allowExternalPaths)."""

    code = -33007
    kind = "pathOutsideRoot"


class SessionExists(SidecarError):
    """The session id, or the file a move would create, exists already."""

    code = -33008
    kind = "sessionExists"


class InvalidEntry(SidecarError):
    """An appended entry is malformed; data.index names it and nothing of the batch was written."""

    code = -33009
    kind = "invalidEntry"


class InvalidState(SidecarError):
    """The session is not in a state that allows the call (e.g. archiving one that has no file yet)."""

    code = -33010
    kind = "invalidState"


class PayloadTooLarge(SidecarError):
    """A frame over the size limit (64 MiB); it is skipped."""

    code = -33011
    kind = "payloadTooLarge"


class SessionChanged(SidecarError):
    """Another program appended to the session's file: its leaf is not the ``expectedLeafId``
    the append named. Nothing was written; ``data.leafId`` is the leaf now and ``data.entries``
    (or only ``data.entryIds`` when large) what the client has not seen."""

    code = -33012
    kind = "sessionChanged"


class RequestCancelled(SidecarError):
    """The client cancelled the request (``$/cancelRequest``) before it changed anything."""

    code = REQUEST_CANCELLED
    kind = "requestCancelled"


# -- compaction and summarizing: -33020..-33039 --------------------------------


class NothingToCompact(SidecarError):
    """Nothing a compaction could replace: the path is empty, its leaf is a compaction already
    (``data.entryId`` names it; asking again never returns it as a new result), or everything since
    the last compaction is within keepRecentTokens. ``data.reason`` says which: "empty",
    "leafIsCompaction", "withinKeepRecentTokens"."""

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


class CompactionNotSmaller(SidecarError):
    """The summary, with the blocks the sidecar adds to it, would not be smaller than the messages it
    replaces (or the context would not shrink): nothing was written. ``data`` holds ``summaryTokens``,
    ``replacedTokens``, ``tokensBefore`` and ``tokensAfter`` (estimates, chars / 4)."""

    code = -33025
    kind = "compactionNotSmaller"


# -- snapshots and rewind: -33040..-33049 ----------------------------------------


class WorktreeChanged(SidecarError):
    """A rewind would overwrite files changed outside the agent since the last snapshot; ``data.paths`` names them.

    Pass ``force`` to rewind anyway (they are in the snapshot taken just before, so it can be undone)."""

    code = -33040
    kind = "worktreeChanged"


class NoSnapshot(SidecarError):
    """No snapshot of the files at or before the entry (or the diff's point) to go back to."""

    code = -33041
    kind = "noSnapshot"


class SnapshotFailed(SidecarError):
    """The snapshot store could not do it (git missing or failing, its objects gone, the folder unreadable)."""

    code = -33042
    kind = "snapshotFailed"


class PathOutsideCwd(SidecarError):
    """A snapshot names a path outside the session's folder (or through a symlink); nothing outside is written."""

    code = -33043
    kind = "pathOutsideCwd"


# --- import (session/import) ---
class ImportSourceNotFound(SidecarError):
    """A path given to session/import that does not exist or holds no session of that tool."""

    code = -33060
    kind = "importSourceNotFound"


class ImportSourceUnreadable(SidecarError):
    """A source that exists but cannot be read as that tool's sessions (an opencode file that is not SQLite)."""

    code = -33061
    kind = "importSourceUnreadable"


class ExportWriteFailed(SidecarError):
    """session/export could not write the file asked for (folder missing, no permission, disk full)."""

    code = -33050
    kind = "exportWriteFailed"


# -- the spec format (issue 14): -33090..-33099 -------------------------------------


class FormatCannotHold(SidecarError):
    """The session's on-disk format has no place for what was asked (a branch, a label, a thinking
    block in the spec format): nothing was written. The message names the format and the part."""

    code = -33090
    kind = "formatCannotHold"


# -- the PostgreSQL store: -33080..-33089 ----------------------------------------


class DatabaseUrlInvalid(SidecarError):
    """``--database-url`` / ``store.databaseUrl`` is not a PostgreSQL URL we can use; the message says what to fix."""

    code = -33080
    kind = "databaseUrlInvalid"


class DatabaseSchemaMismatch(SidecarError):
    """The database's schema is newer than this sidecar knows, or its tables were not made by session-sidecar."""

    code = -33081
    kind = "databaseSchemaMismatch"


class BlobMissing(SidecarError):
    """Lines name a blob (``blob:sha256:<hex>``) the PostgreSQL store does not hold: collected by
    ``empty-trash --blobs``, or never stored. Nothing was written; ``data.digest`` names it."""

    code = -33086
    kind = "blobMissing"


# -- live sessions (sockets, subscriptions, roles): -33070..-33079 ---------------


class NotController(SidecarError):
    """Another client of this sidecar controls the session; observe it, or call session/takeControl to write."""

    code = -33070
    kind = "notController"


class Unauthorized(SidecarError):
    """A TCP client's initialize did not carry the token the server was started with; nothing else is served."""

    code = -33071
    kind = "unauthorized"


class SharedServer(SidecarError):
    """A client of a shared (socket) sidecar asked for its own sessions root or settings; they are the server's."""

    code = -33072
    kind = "sharedServer"


class SocketInUse(SidecarError):
    """The unix socket path asked for (``keepServing``) is served by another sidecar, or is not a socket."""

    code = -33073
    kind = "socketInUse"


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
    SessionChanged,
    NothingToCompact,
    ProviderError,
    ContextOverflow,
    ProviderNotConfigured,
    CompactionConflict,
    CompactionNotSmaller,
    WorktreeChanged,
    NoSnapshot,
    SnapshotFailed,
    PathOutsideCwd,
    ImportSourceNotFound,
    ImportSourceUnreadable,
    ExportWriteFailed,
    FormatCannotHold,
    DatabaseUrlInvalid,
    DatabaseSchemaMismatch,
    NotController,
    Unauthorized,
    SharedServer,
    SocketInUse,
)
