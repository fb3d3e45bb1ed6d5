"""Params and results of every protocol method: the contract, as msgspec Structs.

protocol/schema.json is generated from these types (``python -m sidecar.schema``),
and the service's operations take and return them, so the server, the docs and
the clients cannot drift apart. Field names are camelCase, as on the wire.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType


class _Params(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    """Unknown params are an error: a misspelt field must not be ignored silently."""

    # LSP work-done progress: with a token, a long call reports ``$/progress``
    # under it. Every method accepts one; the service never reads it.
    workDoneToken: int | str | None = None


class _Result(msgspec.Struct, omit_defaults=True, kw_only=True):
    pass


class _SessionRef(_Params):
    sessionId: str


# -- create / open / close ------------------------------------------------------


class CreateParams(_Params):
    cwd: str
    sessionId: str | None = None
    name: str | None = None
    parentSession: str | None = None
    # false: an in-memory session that never touches the disk (subagents, tests,
    # previews); every method works on it, a fork of it is written as usual.
    persist: bool = True
    # The terminal it is used from: continueRecent with the same id resumes it.
    terminalId: str | None = None
    # Send session/didAppend and session/didReload when another program writes the file.
    watch: bool = False
    # A spec-format root only (store.format "spec"): what started the session, kept in its
    # metadata.json; cronJobId implies source "cron".
    source: Literal["interactive", "cron"] | None = None
    cronJobId: str | None = None


class CreateResult(_Result):
    sessionId: str
    path: str
    header: dict[str, Any]


class OpenParams(_Params):
    """Name the session by ``sessionId`` (looked up below the root) or by ``path``."""

    sessionId: str | None = None
    path: str | None = None
    # Read without taking the session's lock (another sidecar may be writing it);
    # every write to a session opened so is refused.
    readOnly: bool = False
    # The terminal it is used from: continueRecent with the same id resumes it.
    terminalId: str | None = None
    # Send session/didAppend and session/didReload when another program (pi's own CLI,
    # say) writes the file while it is open. Opening again without it stops them.
    watch: bool = False


class OpenWarning(_Result):
    """Something opening found wrong with the file that did not stop it from opening.

    ``kind`` ``"danglingParent"``: these entries name a parent that is not in the
    file, so the path to each stops there and the history before it is not in
    the context; ``session-sidecar doctor --fix`` reconnects them.
    """

    kind: str
    message: str
    entryIds: list[str] = []


class OpenResult(_Result):
    sessionId: str
    path: str
    header: dict[str, Any]
    leafId: str | None
    entryCount: int
    parseErrors: int
    persisted: bool
    migratedFrom: int | None = None
    warnings: list[OpenWarning] = []
    # What is wrong with the line before the header (oh-my-pi's title slot), if
    # anything: damaged, of the wrong width, or missing under oh-my-pi's
    # compatibility. The rest of the file opened as usual.
    titleFault: str | None = None


class ContinueRecentParams(_Params):
    cwd: str
    # Prefer the session this terminal used last in ``cwd`` over the newest one.
    terminalId: str | None = None


class MoveParams(_Params):
    sessionId: str
    # The project folder the session belongs to from now on (absolute).
    cwd: str


class MoveResult(_Result):
    sessionId: str
    path: str


class CloseParams(_SessionRef):
    pass


class FlushParams(_SessionRef):
    pass


class FlushResult(_Result):
    persisted: bool


# -- append / context -----------------------------------------------------------


class AppendParams(_Params):
    sessionId: str
    entries: list[dict[str, Any]]
    # Absent: below the leaf. null: a new root. An id: below that entry.
    parentId: str | None | UnsetType = UNSET
    # The leaf the client believes in (null: an empty session). When another
    # program moved it (appended to the file), nothing is written: sessionChanged.
    expectedLeafId: str | None | UnsetType = UNSET


class ExternalChange(_Result):
    """What this call found another program had done to the file since the session last saw it."""

    # Entries another program appended, now in the session (file order); the leaf moved to the last.
    entryIds: list[str]
    # The file was read again whole: "rewritten" (other bytes), "truncated", "replaced" (another
    # file renamed over it), "interleaved" (their lines went out between ours). Else null.
    reloaded: str | None = None
    # The header line was rewritten in place (oh-my-pi's title): only the header was read again.
    headerChanged: bool = False


class AppendedEntry(_Result):
    id: str
    parentId: str | None
    timestamp: str


class AppendResult(_Result):
    entries: list[AppendedEntry]
    leafId: str | None
    contextTokens: int
    shouldCompact: bool
    # Set when the file had changed behind the sidecar's back (folded in before this append).
    external: ExternalChange | None = None
    # Set when this append took the context past compaction.clearToolResults.triggerTokens and old
    # tool outputs were cleared: one custom entry, appended after the batch (leafId is that entry).
    clearedToolResults: ClearedToolResults | None = None


class BuildContextParams(_Params):
    sessionId: str
    # Absent: the session's leaf. null: before the first entry (empty context).
    leafId: str | None | UnsetType = UNSET
    format: Literal["agent", "llm"] = "agent"
    # The cursor of an earlier result: send only the messages after it when the path only grew.
    since: str | None = None
    # Whose context rules: "pi" or "omp" (oh-my-pi's, see PROTOCOL.md). Absent:
    # those of the tool whose folder the session is in (the root's compatibility).
    rules: Literal["pi", "omp"] | None = None
    # The provider and model the llm-format context is for: a compaction that recorded that
    # provider's own compaction item (``native``) for that model gives the item instead of its text.
    targetProvider: str | None = None
    targetModel: str | None = None


class ModelRef(_Result):
    provider: str | None = None
    modelId: str | None = None


class BuildContextResult(_Result):
    messages: list[dict[str, Any]]
    thinkingLevel: str
    model: dict[str, Any] | None
    models: dict[str, str]
    mode: str
    injectedRules: list[str]
    leafId: str | None
    estimatedTokens: int
    entryIds: list[str]
    modeData: dict[str, Any] | None = None
    # Give back as ``since`` to get only what follows this result.
    cursor: str | None = None
    # True: messages and entryIds hold only what follows ``since`` (the client
    # keeps its first baseCount messages). False with rebuildReason: the whole context.
    delta: bool = False
    baseCount: int = 0
    rebuildReason: str | None = None
    # Set when the file had changed behind the sidecar's back (folded in before this answer).
    external: ExternalChange | None = None


# -- tree -----------------------------------------------------------------------


class BranchParams(_Params):
    sessionId: str
    entryId: str | None
    # Write a ``branch_summary`` of the branch being left (from the common
    # ancestor to the old leaf) below ``entryId``, as pi's tree navigation does.
    summarize: bool = False
    customInstructions: str | None = None
    provider: str | None = None
    model: str | None = None


class BranchResult(_Result):
    leafId: str | None
    # The branch_summary entry written when ``summarize`` was set and the old branch had content.
    summaryEntryId: str | None = None


class GetTreeParams(_SessionRef):
    pass


class TreeNode(_Result):
    """One entry of the tree. The tree is sent flat, in file order: a linear
    session is as deep as it is long, and nested JSON that deep breaks parsers
    (serde_json stops at 128 levels). ``parentId`` is null for a root, and for
    an entry whose parent is missing or in a cycle (damaged files)."""

    id: str
    parentId: str | None
    type: str
    timestamp: str | None
    role: str | None = None
    label: str | None = None


class GetTreeResult(_Result):
    nodes: list[TreeNode]
    leafId: str | None
    # Set when the file had changed behind the sidecar's back (folded in before this answer).
    external: ExternalChange | None = None


class GetEntriesParams(_Params):
    sessionId: str
    ids: list[str] | None = None


class GetEntriesResult(_Result):
    entries: list[dict[str, Any]]


class SetLabelParams(_Params):
    sessionId: str
    entryId: str
    label: str | None


class SetLabelResult(_Result):
    entryId: str
    leafId: str | None


class SetNameParams(_Params):
    sessionId: str
    name: str


class SetNameResult(_Result):
    entryId: str
    name: str | None


# -- fork / list / lifecycle ----------------------------------------------------


class ForkParams(_Params):
    sessionId: str
    entryId: str | None = None
    cwd: str | None = None


class ForkResult(_Result):
    sessionId: str
    path: str
    persisted: bool


class ListParams(_Params):
    cwd: str | None = None
    all: bool = False
    limit: int | None = None
    cursor: str | None = None
    query: str | None = None
    includeArchived: bool = False


class SessionTokens(_Result):
    # Sum of the tokens every assistant message of the file reported (its usage's totalTokens, else
    # input + output + cacheRead + cacheWrite; aborted and errored replies left out): what the session cost.
    total: int
    # What the last such message reported: about the size of the context at that point. 0 when none reported.
    last: int


class SessionInfo(_Result):
    """A session as session/list gives it: a superset of ACP's SessionInfo (sessionId, cwd, title, updatedAt, _meta)."""

    sessionId: str
    path: str
    cwd: str
    created: str
    modified: str
    messageCount: int
    firstMessage: str
    archived: bool
    # Token usage the assistant messages reported, over the whole file (every branch).
    tokens: SessionTokens
    name: str | None = None
    title: str | None = None
    parentSession: str | None = None
    # With a query: the first matching message text around the match, marked **like this**.
    snippet: str | None = None
    # An in-memory session of this sidecar (created with persist: false); its path is "".
    inMemory: bool = False
    # ACP's name for ``modified`` (ISO 8601).
    updatedAt: str | None = None
    # ACP's extension slot, reserved (ACP clients must ignore what they do not know).
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class ListResult(_Result):
    sessions: list[SessionInfo]
    nextCursor: str | None


class ArchiveParams(_SessionRef):
    pass


class ArchiveResult(_Result):
    sessionId: str
    path: str
    archived: bool


class DeleteParams(_SessionRef):
    pass


class DeleteResult(_Result):
    sessionId: str
    trashPath: str | None


class RestoreParams(_SessionRef):
    pass


class RestoreResult(_Result):
    sessionId: str
    path: str


# -- compaction -------------------------------------------------------------------


class CompactParams(_Params):
    sessionId: str
    # Compact the path to this entry instead of the leaf; the compaction entry is appended below it.
    leafId: str | None = None
    customInstructions: str | None = None
    provider: str | None = None  # "anthropic", "openai", "client", "offline"; default: see settings
    model: str | None = None
    reserveTokens: int | None = None
    keepRecentTokens: int | None = None
    # The provider's own compaction item for the same span, recorded beside the text summary.
    native: NativeCompaction | None = None


class CompactFallback(_Result):
    """The provider's summary was empty or garbage; the offline summarizer wrote these summaries instead."""

    provider: str  # the provider that was asked
    model: str
    reason: Literal["empty", "garbage"]
    summaries: list[Literal["history", "turnPrefix", "branch"]]
    usedProvider: str  # "offline"


class CompactDetails(_Result):
    readFiles: list[str]
    modifiedFiles: list[str]
    fallback: CompactFallback | None = None


class CompactResult(_Result):
    entryId: str  # the compaction entry (a prune entry, when one was needed, is written just before it)
    summary: str
    firstKeptEntryId: str
    tokensBefore: int
    tokensAfter: int
    details: CompactDetails
    provider: str
    model: str
    durationMs: int


class DidCompactParams(_Result):
    """Notification ``session/didCompact``: the sidecar compacted a session by itself (autoCompact)."""

    sessionId: str
    # What the autoCompact run answered (absent in a subscriber's notification).
    result: CompactResult | None = None
    # A subscriber's: its position in the session's events, and the compaction entry
    # (which the didAppend just before carried whole).
    cursor: str | None = None
    entryId: str | None = None
    firstKeptEntryId: str | None = None


class DidAppendParams(_Result):
    """Notification ``session/didAppend``: entries reached a watched session's file.

    ``external`` true: another program wrote them (they are in the session now,
    and its leaf is ``leafId``). Sent to clients that opened the session with ``watch``.
    """

    sessionId: str
    entries: list[dict[str, Any]]
    leafId: str | None
    external: bool
    # Sent to a subscriber (session/subscribe): its position in the session's events.
    cursor: str | None = None


class DidReloadParams(_Result):
    """Notification ``session/didReload``: a watched session's file was read again whole
    (another program rewrote, cut or replaced it); what the client holds may be stale."""

    sessionId: str
    # "rewritten", "truncated", "replaced", "interleaved" (see ExternalChange.reloaded), or
    # "header" (only the header line, rewritten in place).
    reason: str
    leafId: str | None
    entryCount: int


class SummarizeParams(_Result):
    """Server -> client request ``session/summarize`` (the ``client`` provider); answered by ``SummarizeResult``."""

    systemPrompt: str
    prompt: str
    maxTokens: int
    model: str | None = None


class SummarizeResult(_Result):
    text: str


# -- upkeep: what the store holds, and retention --------------------------------


class StatsParams(_Params):
    # How many of the largest sessions to name.
    largest: int = 10
    # Also find the blobs no session refers to (reads every session file).
    blobs: bool = False


class FolderUsage(_Result):
    # The project folder below the root (its name encodes the cwd, as pi's does).
    folder: str
    bytes: int
    sessions: int


class SessionUsage(_Result):
    sessionId: str | None
    path: str
    area: Literal["live", "archive", "trash"]
    bytes: int


class StatsResult(_Result):
    totalBytes: int
    liveBytes: int
    archiveBytes: int
    trashBytes: int
    blobBytes: int
    blobCount: int
    indexBytes: int
    sessionCount: int
    # Live and archived sessions by project folder, the largest first.
    folders: list[FolderUsage]
    largest: list[SessionUsage]
    # With ``blobs``: blobs no session (live, archived or trashed) refers to.
    unreferencedBlobs: int | None = None
    unreferencedBytes: int | None = None


class PruneParams(_Params):
    """A retention policy; absent fields come from the settings' ``retention`` section."""

    # A duration: "90d", "12h", "2w" (s, m, h, d, w).
    olderThan: str | None = None
    keepPerCwd: int | None = None
    # A size: "5GB", "500MiB".
    maxTotal: str | None = None
    # Named or labelled sessions are pinned out of every policy unless this is true.
    includePinned: bool = False
    dryRun: bool = False
    # Needed when the policy would send every session to the trash.
    confirm: bool = False


class PrunedSession(_Result):
    sessionId: str | None
    path: str
    bytes: int
    reason: str


class PruneResult(_Result):
    # What the policy selected: moved to the trash (restorable), or only listed with dryRun.
    selected: list[PrunedSession]
    movedBytes: int
    pinned: int
    # Selected but left where they are (another sidecar holds them), with why.
    skipped: list[PrunedSession] = []


# -- prompt history (not sessions: what the user typed, for recall and search) --


class HistoryAddParams(_Params):
    prompt: str
    # The project it was typed in (absolute); absent: no project.
    cwd: str | None = None


class HistorySearchParams(_Params):
    # Case-insensitive substring of the prompt.
    query: str
    cwd: str | None = None
    limit: int = 20
    # "recent": newest first; "relevance": best match first (bm25), then newest.
    order: Literal["recent", "relevance"] = "recent"


class HistoryListParams(_Params):
    cwd: str | None = None
    limit: int = 50
    # Only entries older than this id (the last id of the previous page).
    before: int | None = None


class HistoryEntry(_Result):
    id: int
    prompt: str
    cwd: str | None
    createdAt: str


class HistoryResult(_Result):
    entries: list[HistoryEntry]


# -- snapshots and rewind ----------------------------------------------------------


class SnapshotParams(_Params):
    sessionId: str
    # The entry the snapshot belongs to: the leaf (default) or an entry on the path to it.
    entryId: str | None = None
    # The folder to snapshot; default the session's cwd (header).
    cwd: str | None = None
    # Look only at these paths (relative to cwd); the rest is as in the session's last snapshot.
    paths: list[str] | None = None
    # Files bigger than this are not captured (listed in notCaptured). Default 10 MiB.
    maxFileBytes: int | None = None


class NotCapturedFile(_Result):
    path: str
    size: int
    reason: str  # "tooLarge"; "nestedRepository": a folder with its own .git (size 0)


class SnapshotResult(_Result):
    entryId: str  # the custom entry (customType "session-sidecar/snapshot") naming the snapshot
    tree: str  # the snapshot's id (a git tree in the shadow repository)
    changedFiles: int  # files that differ from the session's previous snapshot of this folder
    notCaptured: list[NotCapturedFile] = []
    durationMs: int = 0


class DiffParams(_Params):
    sessionId: str
    # An entry id (the snapshot at or before it) or "worktree" (the folder as it is now).
    from_: str = msgspec.field(name="from")
    to: str
    # Include unified diffs of the changed text files.
    patch: bool = False
    contextLines: int = 3


class FileChange(_Result):
    path: str
    change: Literal["added", "modified", "removed", "renamed", "typeChanged"]
    oldPath: str | None = None
    binary: bool = False
    additions: int | None = None
    deletions: int | None = None


class DiffResult(_Result):
    fromTree: str
    toTree: str
    files: list[FileChange]
    patch: str | None = None


class RewindParams(_Params):
    sessionId: str
    entryId: str
    # Also put the files back to the snapshot at or before entryId.
    files: bool = False
    # Report what would change; change nothing.
    dryRun: bool = False
    # Overwrite files changed outside the agent since the last snapshot (they stay in the undo snapshot).
    force: bool = False


class SkippedFile(_Result):
    path: str
    reason: str


class RewindResult(_Result):
    leafId: str | None
    dryRun: bool = False
    # The snapshot entry the files were put back to.
    snapshotEntryId: str | None = None
    # The snapshot of the files taken just before: rewind to it to undo this rewind.
    undoEntryId: str | None = None
    restored: list[str] = []
    created: list[str] = []
    removed: list[str] = []
    # Files left as they are, and why (not captured, in the way, a symlinked folder).
    skipped: list[SkippedFile] = []
    # A rewind interrupted earlier (a crash) was finished first.
    resumed: bool = False


# --- import (session/import) ---
class ImportParams(_Params):
    # Which tool's sessions: "codex" (rollout-*.jsonl, or a folder of them), "claude-code"
    # (<session>.jsonl, or a project folder), "opencode" (opencode.db, or the folder holding it),
    # "spec" (a spec-format session folder <ULID>/, or a spec root holding them).
    tool: str
    paths: list[str]
    # Read and report only: nothing is written.
    dryRun: bool = False


class ImportKindCount(_Result):
    kind: str
    # outcome ("mapped", "kept", "skipped") -> why records of this kind went that way
    reasons: dict[str, str]
    mapped: int = 0
    kept: int = 0
    skipped: int = 0


class DamagedLine(_Result):
    line: int
    error: str


class ImportedSession(_Result):
    sessionId: str
    # The pi session file ("" on a dry run).
    path: str
    # False when an earlier import of the same source is there (then nothing is written) or on a dry run.
    created: bool
    tool: str
    originalId: str
    source: str
    entries: int
    counts: list[ImportKindCount] = []
    damaged: list[DamagedLine] = []
    # Record kinds the importer did not know (kept as custom entries).
    unrecognised: list[str] = []
    # Subagent transcripts / sessions imported as branches of this one.
    subagents: list[str] = []


class ImportResult(_Result):
    sessions: list[ImportedSession]


# -- export (sidecar/export/) ------------------------------------------------------


class ExportParams(_Params):
    sessionId: str
    format: Literal["markdown", "html", "json"]
    # The path root -> leafId (default: the session's leaf). The page (html) always holds every branch.
    leafId: str | None = None
    # Every entry of the tree, every branch, instead of one path.
    all: bool = False
    # Replace secrets by typed placeholders ([REDACTED:aws-access-key:1]).
    redact: bool = True
    # Write the export to this absolute path (atomically, mode 0600) instead of returning its text.
    path: str | None = None


class RedactionKindCount(_Result):
    kind: str
    count: int


class ExportRedaction(_Result):
    applied: bool
    # Secrets replaced, all kinds together; the values are never reported.
    total: int = 0
    kinds: list[RedactionKindCount] = []


class ExportResult(_Result):
    # Entries exported.
    entries: int
    redaction: ExportRedaction
    # The export itself (absent when it was written to path).
    text: str | None = None
    path: str | None = None
    bytes: int = 0


# -- converting between formats (issue 14) --------------------------------------------------


class ConvertParams(_Params):
    """Copy a session into the other format, as a new session below ``targetRoot``.

    Name the source by ``sessionId`` (below this sidecar's root) or ``path`` (a pi
    ``.jsonl`` file, or a spec session folder). The source is not changed."""

    to: Literal["pi", "spec"]
    targetRoot: str
    sessionId: str | None = None
    path: str | None = None
    # pi -> spec: the branch to keep (the path root -> this entry); default the leaf.
    leafId: str | None = None
    # spec -> pi: the header's cwd (the spec format has none); default "".
    cwd: str | None = None


class ConvertLoss(_Result):
    """Something the target format cannot hold, left out of the copy.

    ``kind``: "entry" (whole entries left out), "part" (content blocks taken out of entries that
    were kept), "field" (message fields the target has no place for), "branch" (entries off the
    kept path), "session" (the session's own data: a cwd, a source)."""

    kind: Literal["entry", "part", "field", "branch", "session"]
    what: str
    entryIds: list[str]


class ConvertResult(_Result):
    sessionId: str
    path: str
    format: Literal["pi", "spec"]
    # Entries (pi) or records (spec) written.
    written: int
    # Empty: nothing was lost.
    leftOut: list[ConvertLoss]


# --- context fidelity: tool-result clearing, provider-native compaction (issue 13) ---


class ClearedToolResults(_Result):
    """Old tool outputs the context now shows as a placeholder (the file keeps them in full)."""

    entryId: str  # the custom entry (customType "sidecar.prune") that records the clearing
    toolResultIds: list[str]
    tokensFreed: int  # estimated
    contextTokensBefore: int


class NativeCompaction(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    """A provider's opaque compaction item: Anthropic's ``compaction`` content block, or the
    OpenAI Responses ``compaction`` output item. Sent back only to that provider and model."""

    provider: str  # "anthropic", "openai", or any name the client gives its provider
    model: str
    item: dict[str, Any]
# -- live sessions: subscriptions and roles (socket mode; PROTOCOL.md "Live sessions") --------


class SubscribeParams(_Params):
    sessionId: str
    # The cursor of the last event received: what came after it is sent first (no gap, no
    # duplicate), or ``resync`` is answered when the backlog no longer reaches back that far.
    since: str | None = None


class SubscribeResult(_Result):
    # The position now: events after it follow as notifications (missed ones may come just before this answer).
    cursor: str
    leafId: str | None
    entryCount: int
    # ``since`` is older than the backlog, or from another process: read the session again.
    resync: bool = False
    # Events after ``since`` sent again.
    missed: int = 0
    # Whether this client controls the session (may write it).
    controller: bool = False


class UnsubscribeParams(_SessionRef):
    pass


class UnsubscribeResult(_Result):
    # False: the client was not subscribed.
    unsubscribed: bool


class TakeControlParams(_SessionRef):
    pass


class TakeControlResult(_Result):
    sessionId: str
    # Another client controlled it and was told (session/didLoseControl).
    tookOver: bool


class DidChangeLeafParams(_Result):
    """Notification ``session/didChangeLeaf``: the leaf moved without an append (session/branch)."""

    sessionId: str
    cursor: str
    leafId: str | None


class DidSetLabelParams(_Result):
    """Notification ``session/didSetLabel``: a label entry (in the didAppend just before) set or cleared a label."""

    sessionId: str
    cursor: str
    entryId: str
    targetId: str
    label: str | None = None


class DidSetNameParams(_Result):
    """Notification ``session/didSetName``: the session was named (the entry is in the didAppend just before)."""

    sessionId: str
    cursor: str
    entryId: str
    name: str | None


class DidCloseParams(_Result):
    """Notification ``session/didClose``: the session was closed by this sidecar; the subscription ends."""

    sessionId: str
    cursor: str


class ResyncParams(_Result):
    """Notification ``session/resync``: events were lost (a slow reader past the backlog, or the file was
    rewritten); read the session again (getEntries / buildContext), events go on from ``cursor``."""

    sessionId: str
    cursor: str
    # "backlog" or a reload reason (see ExternalChange.reloaded).
    reason: str


class DidLoseControlParams(_Result):
    """Notification ``session/didLoseControl``: another client took control of a session this client controlled."""

    sessionId: str


# Method name -> (params type, result type). The rpc layer and the schema
# generator both read this table.
METHODS: dict[str, tuple[type, Any]] = {
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
