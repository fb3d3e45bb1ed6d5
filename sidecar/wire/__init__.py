"""Params and results of every protocol method: the contract, as msgspec Structs.

protocol/schema.json is generated from these types (``python -m sidecar.schema``),
and the service's operations take and return them, so the server, the docs and
the clients cannot drift apart. Field names are camelCase, as on the wire.

One module per concept; this package re-exports every type (``wire.CreateParams``)
and holds ``METHODS``, the table of methods.
"""

from __future__ import annotations

from .sessions import (
    CreateParams, CreateResult, OpenParams, OpenWarning, OpenResult, ContinueRecentParams, MoveParams,
    MoveResult, CloseParams, FlushParams, FlushResult,
)
from .context import (
    AppendParams, ExternalChange, AppendedEntry, AppendResult, BuildContextParams, ModelRef,
    BuildContextResult,
)
from .tree import (
    BranchParams, BranchResult, GetTreeParams, TreeNode, GetTreeResult, GetEntriesParams, GetEntriesResult,
    SetLabelParams, SetLabelResult, SetNameParams, SetNameResult,
)
from .listing import (
    ForkParams, ForkResult, ListParams, SessionTokens, SessionInfo, ListResult, ArchiveParams, ArchiveResult,
    DeleteParams, DeleteResult, RestoreParams, RestoreResult,
)
from .compaction import (
    CompactParams, CompactFallback, CompactDetails, CompactResult, DidCompactParams, DidAppendParams,
    DidReloadParams, SummarizeParams, SummarizeResult,
)
from .upkeep import (
    StatsParams, FolderUsage, SessionUsage, StatsResult, PruneParams, PrunedSession, PruneResult,
)
from .history import (
    HistoryAddParams, HistorySearchParams, HistoryListParams, HistoryEntry, HistoryResult,
)
from .snapshots import (
    SnapshotParams, NotCapturedFile, SnapshotResult, DiffParams, FileChange, DiffResult, RewindParams,
    SkippedFile, RewindResult,
)
from .imports import (
    ImportParams, ImportKindCount, DamagedLine, ImportedSession, ImportResult,
)
from .export import (
    ExportParams, RedactionKindCount, ExportRedaction, ExportResult,
)
from .convert import (
    ConvertParams, ConvertLoss, ConvertResult,
)
from .fidelity import (
    ClearedToolResults, NativeCompaction,
)
from .live import (
    SubscribeParams, SubscribeResult, UnsubscribeParams, UnsubscribeResult, TakeControlParams,
    TakeControlResult, DidChangeLeafParams, DidSetLabelParams, DidSetNameParams, DidCloseParams, ResyncParams,
    DidLoseControlParams,
)

__all__ = [
    "METHODS", "AppendParams", "AppendResult", "AppendedEntry", "ArchiveParams", "ArchiveResult",
    "BranchParams", "BranchResult", "BuildContextParams", "BuildContextResult", "ClearedToolResults",
    "CloseParams", "CompactDetails", "CompactFallback", "CompactParams", "CompactResult",
    "ContinueRecentParams", "ConvertLoss", "ConvertParams", "ConvertResult", "CreateParams", "CreateResult",
    "DamagedLine", "DeleteParams", "DeleteResult", "DidAppendParams", "DidChangeLeafParams", "DidCloseParams",
    "DidCompactParams", "DidLoseControlParams", "DidReloadParams", "DidSetLabelParams", "DidSetNameParams",
    "DiffParams", "DiffResult", "ExportParams", "ExportRedaction", "ExportResult", "ExternalChange",
    "FileChange", "FlushParams", "FlushResult", "FolderUsage", "ForkParams", "ForkResult", "GetEntriesParams",
    "GetEntriesResult", "GetTreeParams", "GetTreeResult", "HistoryAddParams", "HistoryEntry",
    "HistoryListParams", "HistoryResult", "HistorySearchParams", "ImportKindCount", "ImportParams",
    "ImportResult", "ImportedSession", "ListParams", "ListResult", "ModelRef", "MoveParams", "MoveResult",
    "NativeCompaction", "NotCapturedFile", "OpenParams", "OpenResult", "OpenWarning", "PruneParams",
    "PruneResult", "PrunedSession", "RedactionKindCount", "RestoreParams", "RestoreResult", "ResyncParams",
    "RewindParams", "RewindResult", "SessionInfo", "SessionTokens", "SessionUsage", "SetLabelParams",
    "SetLabelResult", "SetNameParams", "SetNameResult", "SkippedFile", "SnapshotParams", "SnapshotResult",
    "StatsParams", "StatsResult", "SubscribeParams", "SubscribeResult", "SummarizeParams", "SummarizeResult",
    "TakeControlParams", "TakeControlResult", "TreeNode", "UnsubscribeParams", "UnsubscribeResult",
]

# Method name -> (params type, result type). The rpc layer and the schema
# generator both read this table.
METHODS: dict[str, tuple[type, object]] = {  # (a result may be a union, or None)
    "session/create": (CreateParams, CreateResult),
    "session/open": (OpenParams, OpenResult),
    "session/continueRecent": (ContinueRecentParams, OpenResult | None),
    "session/close": (CloseParams, None),
    "session/flush": (FlushParams, FlushResult),
    "session/append": (AppendParams, AppendResult),
    "session/buildContext": (BuildContextParams, BuildContextResult),
    "session/branch": (BranchParams, BranchResult),
    "session/getTree": (GetTreeParams, GetTreeResult),
    "session/getEntries": (GetEntriesParams, GetEntriesResult),
    "session/setLabel": (SetLabelParams, SetLabelResult),
    "session/setName": (SetNameParams, SetNameResult),
    "session/fork": (ForkParams, ForkResult),
    "session/list": (ListParams, ListResult),
    "session/archive": (ArchiveParams, ArchiveResult),
    "session/unarchive": (ArchiveParams, ArchiveResult),
    "session/delete": (DeleteParams, DeleteResult),
    "session/restore": (RestoreParams, RestoreResult),
    "session/compact": (CompactParams, CompactResult),
    "session/move": (MoveParams, MoveResult),
    "session/stats": (StatsParams, StatsResult),
    "session/prune": (PruneParams, PruneResult),
    "history/add": (HistoryAddParams, None),
    "history/search": (HistorySearchParams, HistoryResult),
    "history/list": (HistoryListParams, HistoryResult),
    # snapshots and rewind
    "session/snapshot": (SnapshotParams, SnapshotResult),
    "session/diff": (DiffParams, DiffResult),
    "session/rewind": (RewindParams, RewindResult),
    # --- import ---
    "session/import": (ImportParams, ImportResult),
    # export
    "session/export": (ExportParams, ExportResult),
    # converting between formats
    "session/convert": (ConvertParams, ConvertResult),
    # live sessions
    "session/subscribe": (SubscribeParams, SubscribeResult),
    "session/unsubscribe": (UnsubscribeParams, UnsubscribeResult),
    "session/takeControl": (TakeControlParams, TakeControlResult),
}
