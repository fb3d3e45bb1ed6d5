/** The protocol version this client was generated for (major.minor; majors must match). */
export declare const PROTOCOL_VERSION = "1.0";
/** A JSON object the schema leaves open (session entries, headers, messages, settings). */
export type JsonObject = {
    [key: string]: any;
};
export type AgentMessage = UserMessage | AssistantMessage | ToolResultMessage | BashExecutionMessage | CustomMessage | BranchSummaryMessage | CompactionSummaryMessage | SystemMessage;
/** oh-my-pi: an Anthropic server-side tool block (web search...), kept as the provider sent it. */
export interface AnthropicServerToolContent {
    type: "anthropicServerTool";
    block: JsonObject;
}
export interface AppendForeignParams {
    format: "claude-code";
    projectKey: string;
    foreignSessionId: string;
    lines: JsonObject[];
    /** @default null */
    subpath?: string | null;
    /** @default null */
    cwd?: string | null;
    /** @default null */
    state?: JsonObject | null;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface AppendForeignResult {
    sessionId: string;
    appended: number;
    skipped: number;
    created: boolean;
}
export interface AppendParams {
    sessionId: string;
    entries: EntryInput[];
    parentId?: string | null;
    expectedLeafId?: string | null;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface AppendResult {
    entries: AppendedEntry[];
    leafId: string | null;
    contextTokens: number;
    shouldCompact: boolean;
    /** @default null */
    external?: ExternalChange | null;
    /** @default null */
    clearedToolResults?: ClearedToolResults | null;
}
export interface AppendedEntry {
    id: string;
    parentId: string | null;
    timestamp: string;
}
export interface ArchiveParams {
    sessionId: string;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface ArchiveResult {
    sessionId: string;
    path: string;
    archived: boolean;
}
export type AssistantContentBlock = TextContent | ThinkingContent | ToolCall | ImageContent;
/** A model's answer. Tool calls are `toolCall` blocks in `content`. */
export interface AssistantMessage {
    role: "assistant";
    content: (TextContent | ThinkingContent | ToolCall | ImageContent)[] | null;
    /** @default null */
    api?: string | null;
    /** @default null */
    provider?: string | null;
    /** @default null */
    model?: string | null;
    /** @default null */
    usage?: Usage | null;
    /** @default null */
    stopReason?: "aborted" | "deferred" | "error" | "length" | "pending" | "stop" | "toolUse" | null;
    /** @default null */
    errorMessage?: string | null;
    /** @default null */
    responseId?: string | null;
    /** @default null */
    timestamp?: number | null;
}
/** A command the user ran with `!` (pi): in the context as a user message. */
export interface BashExecutionMessage {
    role: "bashExecution";
    command: string;
    output: string;
    /** @default null */
    exitCode?: number | null;
    /** @default false */
    cancelled?: boolean;
    /** @default false */
    truncated?: boolean;
    /** @default null */
    fullOutputPath?: string | null;
    /** @default null */
    excludeFromContext?: boolean | null;
    /** @default null */
    timestamp?: number | null;
}
export interface BranchParams {
    sessionId: string;
    entryId: string | null;
    /** @default false */
    summarize?: boolean;
    /** @default null */
    customInstructions?: string | null;
    /** @default null */
    provider?: string | null;
    /** @default null */
    model?: string | null;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface BranchResult {
    leafId: string | null;
    /** @default null */
    summaryEntryId?: string | null;
}
/** A summary of the branch left at `fromId` ("root": from before the first entry). */
export interface BranchSummaryEntry {
    type: "branch_summary";
    fromId: string;
    summary: string;
    /** @default null */
    details?: unknown;
    /** @default null */
    fromHook?: boolean | null;
    /** @default null */
    fromExtension?: boolean | null;
    /** @default null */
    usage?: Usage | null;
    /** @default null */
    id?: string | null;
    /** @default null */
    parentId?: string | null;
    /** @default null */
    timestamp?: string | null;
}
/** What a branch_summary entry becomes in an agent-format context. */
export interface BranchSummaryMessage {
    role: "branchSummary";
    summary: string;
    /** @default null */
    fromId?: string | null;
    /** @default null */
    timestamp?: number | null;
}
export interface BuildContextParams {
    sessionId: string;
    leafId?: string | null;
    /** @default "agent" */
    format?: "agent" | "llm";
    /** @default null */
    since?: string | null;
    /** @default null */
    rules?: "omp" | "pi" | null;
    /** @default null */
    targetProvider?: string | null;
    /** @default null */
    targetModel?: string | null;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface BuildContextResult {
    messages: ContextMessage[];
    thinkingLevel: string;
    model: JsonObject | null;
    models: {
        [key: string]: string;
    };
    mode: string;
    injectedRules: string[];
    leafId: string | null;
    estimatedTokens: number;
    entryIds: string[];
    delta: boolean;
    baseCount: number;
    /** @default null */
    modeData?: JsonObject | null;
    /** @default null */
    cursor?: string | null;
    /** @default null */
    rebuildReason?: string | null;
    /** @default null */
    external?: ExternalChange | null;
}
export interface CancelParams {
    id: number | string;
}
export interface Capabilities {
    methods: string[];
    framings: string[];
    providers: string[];
    /** @default true */
    workDoneProgress?: boolean;
    /** @default true */
    cancelRequest?: boolean;
}
/** Batch clearing of old tool outputs at append time (see sidecar.compaction.clearing). */
export interface ClearToolResultsSettings {
    /** @default false */
    enabled?: boolean;
    /** @default 100000 */
    triggerTokens?: number;
    /** @default 3 */
    keepToolResults?: number;
    /** @default 20000 */
    minimumTokens?: number;
}
/** Old tool outputs the context now shows as a placeholder (the file keeps them in full). */
export interface ClearedToolResults {
    entryId: string;
    toolResultIds: string[];
    tokensFreed: number;
    contextTokensBefore: number;
}
export interface ClientInfo {
    name: string;
    /** @default null */
    version?: string | null;
}
export interface CloseParams {
    sessionId: string;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface CompactDetails {
    readFiles: string[];
    modifiedFiles: string[];
    /** @default null */
    fallback?: CompactFallback | null;
}
/** The provider's summary was empty or garbage; the offline summarizer wrote these summaries instead. */
export interface CompactFallback {
    provider: string;
    model: string;
    reason: "empty" | "garbage";
    summaries: ("branch" | "history" | "turnPrefix")[];
    usedProvider: string;
}
export interface CompactParams {
    sessionId: string;
    /** @default null */
    leafId?: string | null;
    /** @default null */
    customInstructions?: string | null;
    /** @default null */
    provider?: string | null;
    /** @default null */
    model?: string | null;
    /** @default null */
    reserveTokens?: number | null;
    /** @default null */
    keepRecentTokens?: number | null;
    /** @default null */
    native?: NativeCompaction | null;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface CompactResult {
    entryId: string;
    summary: string;
    firstKeptEntryId: string;
    tokensBefore: number;
    tokensAfter: number;
    details: CompactDetails;
    provider: string;
    model: string;
    durationMs: number;
    fellBack: boolean;
    /** @default null */
    fellBackReason?: "empty" | "garbage" | "noProviderConfigured" | null;
}
/** The context before `firstKeptEntryId` replaced by `summary` (session/compact writes these). */
export interface CompactionEntry {
    type: "compaction";
    summary: string;
    firstKeptEntryId: string;
    tokensBefore: number;
    /** @default null */
    details?: unknown;
    /** @default null */
    fromHook?: boolean | null;
    /** @default null */
    usage?: Usage | null;
    /** @default null */
    systemMessage?: SystemMessage | null;
    /** @default null */
    shortSummary?: string | null;
    /** @default null */
    tokensAfter?: number | null;
    /** @default null */
    preserveData?: JsonObject | null;
    /** @default null */
    fromExtension?: boolean | null;
    /** @default null */
    native?: NativeCompaction | null;
    /** @default null */
    id?: string | null;
    /** @default null */
    parentId?: string | null;
    /** @default null */
    timestamp?: string | null;
}
export interface CompactionSettings {
    /** @default true */
    enabled?: boolean;
    /** @default 16384 */
    reserveTokens?: number;
    /** @default 20000 */
    keepRecentTokens?: number;
    /** @default null */
    contextWindow?: number | null;
    /** @default false */
    autoCompact?: boolean;
    /** @default true */
    prune?: boolean;
    clearToolResults?: ClearToolResultsSettings;
}
/** What a compaction entry becomes in an agent-format context. */
export interface CompactionSummaryMessage {
    role: "compactionSummary";
    summary: string;
    /** @default 0 */
    tokensBefore?: number;
    /** @default null */
    timestamp?: number | null;
}
/**
 * pi 1.5: on the path to a leaf, the target entry's content is replaced
 * (null: its message is left out of the context). The last edit of a target wins.
 */
export interface ContextEditEntry {
    type: "context_edit";
    targetId: string;
    replacement: ContextEditReplacement | null;
    /** @default null */
    id?: string | null;
    /** @default null */
    parentId?: string | null;
    /** @default null */
    timestamp?: string | null;
}
export interface ContextEditReplacement {
    content: string | (TextContent | ThinkingContent | ToolCall | ImageContent)[];
}
export interface ContinueRecentParams {
    cwd: string;
    /** @default null */
    terminalId?: string | null;
    /** @default null */
    workDoneToken?: number | string | null;
}
/**
 * Something the target format cannot hold, left out of the copy.
 *
 * `kind`: "entry" (whole entries left out), "part" (content blocks taken out of entries that
 * were kept), "field" (message fields the target has no place for), "branch" (entries off the
 * kept path), "session" (the session's own data: a cwd, a source).
 */
export interface ConvertLoss {
    kind: "branch" | "entry" | "field" | "part" | "session";
    what: string;
    entryIds: string[];
}
/**
 * Copy a session into the other format, as a new session below `targetRoot`.
 *
 * Name the source by `sessionId` (below this sidecar's root) or `path` (a pi
 * `.jsonl` file, or a spec session folder). The source is not changed.
 */
export interface ConvertParams {
    to: "pi" | "spec";
    targetRoot: string;
    /** @default null */
    sessionId?: string | null;
    /** @default null */
    path?: string | null;
    /** @default null */
    leafId?: string | null;
    /** @default null */
    cwd?: string | null;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface ConvertResult {
    sessionId: string;
    path: string;
    format: "pi" | "spec";
    written: number;
    leftOut: ConvertLoss[];
}
/** What a response cost, in dollars. */
export interface Cost {
    input: number;
    output: number;
    cacheRead: number;
    cacheWrite: number;
    total: number;
    /** @default null */
    totalFromProvider?: boolean | null;
}
export interface CreateParams {
    cwd: string;
    /** @default null */
    sessionId?: string | null;
    /** @default null */
    name?: string | null;
    /** @default null */
    parentSession?: string | null;
    /** @default true */
    persist?: boolean;
    /** @default null */
    terminalId?: string | null;
    /** @default false */
    watch?: boolean;
    /** @default null */
    source?: "cron" | "interactive" | null;
    /** @default null */
    cronJobId?: string | null;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface CreateResult {
    sessionId: string;
    path: string;
    header: JsonObject;
}
/** oh-my-pi: which credential of a provider the session uses (its hash). */
export interface CredentialPinEntry {
    type: "credential_pin";
    provider: string;
    hash: string;
    /** @default null */
    id?: string | null;
    /** @default null */
    parentId?: string | null;
    /** @default null */
    timestamp?: string | null;
}
/** An agent's or extension's own data: never in the model's context. Use it for anything pi has no entry for. */
export interface CustomEntry {
    type: "custom";
    customType: string;
    /** @default null */
    data?: unknown;
    /** @default null */
    id?: string | null;
    /** @default null */
    parentId?: string | null;
    /** @default null */
    timestamp?: string | null;
}
/** An extension's message that goes into the context (what a custom_message entry becomes). */
export interface CustomMessage {
    role: "custom";
    customType: string;
    content: string | (TextContent | ImageContent)[];
    /** @default true */
    display?: boolean;
    /** @default null */
    details?: unknown;
    /** @default null */
    timestamp?: number | null;
}
/** An extension's message that goes into the context (as a `custom` message). */
export interface CustomMessageEntry {
    type: "custom_message";
    customType: string;
    content: string | (TextContent | ImageContent)[];
    /** @default true */
    display?: boolean;
    /** @default null */
    details?: unknown;
    /** @default null */
    id?: string | null;
    /** @default null */
    parentId?: string | null;
    /** @default null */
    timestamp?: string | null;
}
export interface DamagedLine {
    line: number;
    error: string;
}
export interface DeleteForeignParams {
    format: "claude-code";
    projectKey: string;
    foreignSessionId: string;
    /** @default null */
    subpath?: string | null;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface DeleteForeignResult {
    sessionId: string | null;
}
export interface DeleteParams {
    sessionId: string;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface DeleteResult {
    sessionId: string;
    trashPath: string | null;
}
/** oh-my-pi: a developer-role message. */
export interface DeveloperMessage {
    role: "developer";
    content: string | (TextContent | ImageContent)[];
    /** @default null */
    timestamp?: number | null;
}
/**
 * Notification `session/didAppend`: entries reached a watched session's file.
 *
 * `external` true: another program wrote them (they are in the session now,
 * and its leaf is `leafId`). Sent to clients that opened the session with `watch`.
 */
export interface DidAppendParams {
    sessionId: string;
    entries: StoredEntry[];
    leafId: string | null;
    external: boolean;
    /** @default null */
    cursor?: string | null;
}
/** Notification `session/didChangeLeaf`: the leaf moved without an append (session/branch). */
export interface DidChangeLeafParams {
    sessionId: string;
    cursor: string;
    leafId: string | null;
}
/** Notification `session/didClose`: the session was closed by this sidecar; the subscription ends. */
export interface DidCloseParams {
    sessionId: string;
    cursor: string;
}
/** Notification `session/didCompact`: the sidecar compacted a session by itself (autoCompact). */
export interface DidCompactParams {
    sessionId: string;
    /** @default null */
    result?: CompactResult | null;
    /** @default null */
    cursor?: string | null;
    /** @default null */
    entryId?: string | null;
    /** @default null */
    firstKeptEntryId?: string | null;
}
/** Notification `session/didLoseControl`: another client took control of a session this client controlled. */
export interface DidLoseControlParams {
    sessionId: string;
}
/**
 * Notification `session/didReload`: a watched session's file was read again whole
 * (another program rewrote, cut or replaced it); what the client holds may be stale.
 */
export interface DidReloadParams {
    sessionId: string;
    reason: string;
    leafId: string | null;
    entryCount: number;
}
/** Notification `session/didSetLabel`: a label entry (in the didAppend just before) set or cleared a label. */
export interface DidSetLabelParams {
    sessionId: string;
    cursor: string;
    entryId: string;
    targetId: string;
    /** @default null */
    label?: string | null;
}
/** Notification `session/didSetName`: the session was named (the entry is in the didAppend just before). */
export interface DidSetNameParams {
    sessionId: string;
    cursor: string;
    entryId: string;
    name: string | null;
}
export interface DiffParams {
    sessionId: string;
    from: string;
    to: string;
    /** @default false */
    patch?: boolean;
    /** @default 3 */
    contextLines?: number;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface DiffResult {
    fromTree: string;
    toTree: string;
    files: FileChange[];
    /** @default null */
    patch?: string | null;
}
export type EntryMessage = UserMessage | AssistantMessage | ToolResultMessage | BashExecutionMessage | CustomMessage | SystemMessage;
/** `error` of a failed response. `data.kind` names the error for programs. */
export interface ErrorObject {
    code: number;
    message: string;
    data: JsonObject;
}
export interface ExportParams {
    sessionId: string;
    format: "html" | "json" | "markdown";
    /** @default null */
    leafId?: string | null;
    /** @default false */
    all?: boolean;
    /** @default true */
    redact?: boolean;
    /** @default null */
    path?: string | null;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface ExportRedaction {
    applied: boolean;
    /** @default 0 */
    total?: number;
    /** @default [] */
    kinds?: RedactionKindCount[];
}
export interface ExportResult {
    entries: number;
    redaction: ExportRedaction;
    /** @default null */
    text?: string | null;
    /** @default null */
    path?: string | null;
    /** @default 0 */
    bytes?: number;
}
/** What this call found another program had done to the file since the session last saw it. */
export interface ExternalChange {
    entryIds: string[];
    /** @default null */
    reloaded?: string | null;
    /** @default false */
    headerChanged?: boolean;
}
/** oh-my-pi: Anthropic switched models mid-answer. */
export interface FallbackContent {
    type: "fallback";
    to: JsonObject;
    from: JsonObject;
}
export interface FileChange {
    path: string;
    change: "added" | "modified" | "removed" | "renamed" | "typeChanged";
    /** @default null */
    oldPath?: string | null;
    /** @default false */
    binary?: boolean;
    /** @default null */
    additions?: number | null;
    /** @default null */
    deletions?: number | null;
}
/** oh-my-pi: files the user mentioned with @, read into the context. */
export interface FileMentionMessage {
    role: "fileMention";
    files: JsonObject[];
    /** @default null */
    timestamp?: number | null;
}
export interface FlushParams {
    sessionId: string;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface FlushResult {
    persisted: boolean;
}
export interface FolderUsage {
    folder: string;
    bytes: number;
    sessions: number;
}
export interface ForeignSession {
    foreignSessionId: string;
    sessionId: string;
    mtime: number;
    subpaths: string[];
    /** @default null */
    state?: JsonObject | null;
}
export interface ForkParams {
    sessionId: string;
    /** @default null */
    entryId?: string | null;
    /** @default null */
    cwd?: string | null;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface ForkResult {
    sessionId: string;
    path: string;
    persisted: boolean;
}
export interface GetEntriesParams {
    sessionId: string;
    /** @default null */
    ids?: string[] | null;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface GetEntriesResult {
    entries: StoredEntry[];
}
export interface GetTreeParams {
    sessionId: string;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface GetTreeResult {
    nodes: TreeNode[];
    leafId: string | null;
    /** @default null */
    external?: ExternalChange | null;
}
export interface HistoryAddParams {
    prompt: string;
    /** @default null */
    cwd?: string | null;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface HistoryEntry {
    id: number;
    prompt: string;
    cwd: string | null;
    createdAt: string;
}
export interface HistoryListParams {
    /** @default null */
    cwd?: string | null;
    /** @default 50 */
    limit?: number;
    /** @default null */
    before?: number | null;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface HistoryResult {
    entries: HistoryEntry[];
}
export interface HistorySearchParams {
    query: string;
    /** @default null */
    cwd?: string | null;
    /** @default 20 */
    limit?: number;
    /** @default "recent" */
    order?: "recent" | "relevance";
    /** @default null */
    workDoneToken?: number | string | null;
}
/** oh-my-pi: a hook's message (pi's older name of `custom`). */
export interface HookMessage {
    role: "hookMessage";
    customType: string;
    content: string | (TextContent | ImageContent)[];
    /** @default true */
    display?: boolean;
    /** @default null */
    details?: unknown;
    /** @default null */
    timestamp?: number | null;
}
export interface ImageContent {
    type: "image";
    data: string;
    mimeType: string;
}
export interface ImportKindCount {
    kind: string;
    reasons: {
        [key: string]: string;
    };
    /** @default 0 */
    mapped?: number;
    /** @default 0 */
    kept?: number;
    /** @default 0 */
    skipped?: number;
}
export interface ImportParams {
    tool: string;
    paths: string[];
    /** @default false */
    dryRun?: boolean;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface ImportResult {
    sessions: ImportedSession[];
}
export interface ImportedSession {
    sessionId: string;
    path: string;
    created: boolean;
    tool: string;
    originalId: string;
    source: string;
    entries: number;
    /** @default [] */
    counts?: ImportKindCount[];
    /** @default [] */
    damaged?: DamagedLine[];
    /** @default [] */
    unrecognised?: string[];
    /** @default [] */
    subagents?: string[];
}
/** Unknown fields are ignored here (only here), so an LSP client's initialize is accepted. */
export interface InitializeParams {
    /** @default null */
    clientInfo?: ClientInfo | null;
    /** @default "1.0" */
    protocolVersion?: string;
    /** @default null */
    sessionRoot?: string | null;
    /** @default null */
    settings?: JsonObject | null;
    /** @default null */
    token?: string | null;
    /** @default null */
    keepServing?: string | null;
}
export interface InitializeResult {
    serverInfo: ServerInfo;
    protocolVersion: string;
    capabilities: Capabilities;
    sessionRoot: string;
    settings: JsonObject;
}
/** Sets (or, without `label`, clears) the label of the entry `targetId`. */
export interface LabelEntry {
    type: "label";
    targetId: string;
    /** @default null */
    label?: string | null;
    /** @default null */
    id?: string | null;
    /** @default null */
    parentId?: string | null;
    /** @default null */
    timestamp?: string | null;
}
export interface ListForeignParams {
    format: "claude-code";
    projectKey: string;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface ListForeignResult {
    sessions: ForeignSession[];
}
export interface ListParams {
    /** @default null */
    cwd?: string | null;
    /** @default false */
    all?: boolean;
    /** @default 50 */
    limit?: number | null;
    /** @default null */
    cursor?: string | null;
    /** @default null */
    query?: string | null;
    /** @default false */
    includeArchived?: boolean;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface ListResult {
    sessions: SessionInfo[];
    nextCursor: string | null;
}
export interface LoadForeignParams {
    format: "claude-code";
    projectKey: string;
    foreignSessionId: string;
    /** @default null */
    subpath?: string | null;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface LoadForeignResult {
    sessionId: string | null;
    lines: JsonObject[] | null;
    /** @default null */
    state?: JsonObject | null;
    /** @default 0 */
    mtime?: number;
    /** @default [] */
    subpaths?: string[];
}
export interface MessageEntry {
    type: "message";
    message: UserMessage | AssistantMessage | ToolResultMessage | BashExecutionMessage | CustomMessage | SystemMessage;
    /** @default null */
    id?: string | null;
    /** @default null */
    parentId?: string | null;
    /** @default null */
    timestamp?: string | null;
}
/** oh-my-pi: the agent's mode (plan, ...). */
export interface ModeChangeEntry {
    type: "mode_change";
    mode: string;
    /** @default null */
    data?: JsonObject | null;
    /** @default null */
    id?: string | null;
    /** @default null */
    parentId?: string | null;
    /** @default null */
    timestamp?: string | null;
}
/** pi writes `provider` and `modelId`; oh-my-pi writes `model` ("provider/id") and `role`. */
export interface ModelChangeEntry {
    type: "model_change";
    /** @default null */
    provider?: string | null;
    /** @default null */
    modelId?: string | null;
    /** @default null */
    model?: string | null;
    /** @default null */
    role?: string | null;
    /** @default null */
    id?: string | null;
    /** @default null */
    parentId?: string | null;
    /** @default null */
    timestamp?: string | null;
}
/** oh-my-pi: tokens a call outside the conversation spent. */
export interface ModelUsageEntry {
    type: "model_usage";
    purpose: string;
    api: string;
    provider: string;
    model: string;
    usage: Usage;
    stopReason: "aborted" | "deferred" | "error" | "length" | "pending" | "stop" | "toolUse";
    /** @default null */
    role?: string | null;
    /** @default null */
    errorMessage?: string | null;
    /** @default null */
    id?: string | null;
    /** @default null */
    parentId?: string | null;
    /** @default null */
    timestamp?: string | null;
}
export interface MoveParams {
    sessionId: string;
    cwd: string;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface MoveResult {
    sessionId: string;
    path: string;
}
/**
 * A provider's opaque compaction item: Anthropic's `compaction` content block, or the
 * OpenAI Responses `compaction` output item. Sent back only to that provider and model.
 */
export interface NativeCompaction {
    provider: string;
    model: string;
    item: JsonObject;
}
export interface NotCapturedFile {
    path: string;
    size: number;
    reason: string;
}
export type OmpAgentMessage = UserMessage | OmpAssistantMessage | ToolResultMessage | BashExecutionMessage | CustomMessage | BranchSummaryMessage | CompactionSummaryMessage | SystemMessage | DeveloperMessage | PythonExecutionMessage | HookMessage | FileMentionMessage;
export type OmpAssistantContentBlock = TextContent | ThinkingContent | ToolCall | ImageContent | RedactedThinkingContent | FallbackContent | AnthropicServerToolContent;
/** oh-my-pi's assistant message: more content block kinds. */
export interface OmpAssistantMessage {
    role: "assistant";
    content: (TextContent | ThinkingContent | ToolCall | ImageContent | RedactedThinkingContent | FallbackContent | AnthropicServerToolContent)[] | null;
    /** @default null */
    api?: string | null;
    /** @default null */
    provider?: string | null;
    /** @default null */
    model?: string | null;
    /** @default null */
    usage?: Usage | null;
    /** @default null */
    stopReason?: "aborted" | "deferred" | "error" | "length" | "pending" | "stop" | "toolUse" | null;
    /** @default null */
    errorMessage?: string | null;
    /** @default null */
    responseId?: string | null;
    /** @default null */
    timestamp?: number | null;
}
export type OmpEntryMessage = UserMessage | OmpAssistantMessage | ToolResultMessage | BashExecutionMessage | CustomMessage | SystemMessage | DeveloperMessage | PythonExecutionMessage | HookMessage | FileMentionMessage;
/** A message entry under oh-my-pi's compatibility: its messages. */
export interface OmpMessageEntry {
    type: "message";
    message: UserMessage | OmpAssistantMessage | ToolResultMessage | BashExecutionMessage | CustomMessage | SystemMessage | DeveloperMessage | PythonExecutionMessage | HookMessage | FileMentionMessage;
    /** @default null */
    id?: string | null;
    /** @default null */
    parentId?: string | null;
    /** @default null */
    timestamp?: string | null;
}
export type OmpSessionEntry = OmpMessageEntry | ThinkingLevelChangeEntry | ModelChangeEntry | CompactionEntry | BranchSummaryEntry | CustomEntry | CustomMessageEntry | LabelEntry | SessionInfoEntry | ContextEditEntry | UsageEntry | TtsrInjectionEntry | SessionInitEntry | ModeChangeEntry | ModelUsageEntry | ServiceTierChangeEntry | ResetBoundaryEntry | TitleChangeEntry | CredentialPinEntry;
/** Name the session by `sessionId` (looked up below the root) or by `path`. */
export interface OpenParams {
    /** @default null */
    sessionId?: string | null;
    /** @default null */
    path?: string | null;
    /** @default false */
    readOnly?: boolean;
    /** @default null */
    terminalId?: string | null;
    /** @default false */
    watch?: boolean;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface OpenResult {
    sessionId: string;
    path: string;
    header: JsonObject;
    leafId: string | null;
    entryCount: number;
    parseErrors: number;
    persisted: boolean;
    /** @default null */
    migratedFrom?: number | null;
    /** @default [] */
    warnings?: OpenWarning[];
    /** @default null */
    titleFault?: string | null;
    /** @default null */
    name?: string | null;
    /** @default null */
    title?: string | null;
}
/**
 * Something opening found wrong with the file that did not stop it from opening.
 *
 * `kind` `"danglingParent"`: these entries name a parent that is not in the
 * file, so the path to each stops there and the history before it is not in
 * the context; `session-sidecar doctor --fix` reconnects them.
 */
export interface OpenWarning {
    kind: string;
    message: string;
    /** @default [] */
    entryIds?: string[];
}
/** `$/progress`: sent for a request that carried a `workDoneToken`, before its response. */
export interface ProgressParams {
    token: number | string;
    value: WorkDoneBegin | WorkDoneReport | WorkDoneEnd;
}
/**
 * One summarizing service; unset fields fall back to the vendor's own variables
 * (ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL, OPENAI_API_KEY / OPENAI_BASE_URL).
 */
export interface ProviderEndpoint {
    /** @default null */
    apiKey?: string | null;
    /** @default null */
    baseUrl?: string | null;
    /** @default null */
    model?: string | null;
}
export interface ProvidersSettings {
    /** @default null */
    default?: string | null;
    anthropic?: ProviderEndpoint;
    openai?: ProviderEndpoint;
    /** @default null */
    clientModel?: string | null;
    /** @default 3 */
    maxRetries?: number;
    /** @default 1 */
    retryBaseDelay?: number;
    /** @default 600 */
    timeout?: number;
}
/** A retention policy; absent fields come from the settings' `retention` section. */
export interface PruneParams {
    /** @default null */
    olderThan?: string | null;
    /** @default null */
    keepPerCwd?: number | null;
    /** @default null */
    maxTotal?: string | null;
    /** @default false */
    includePinned?: boolean;
    /** @default false */
    dryRun?: boolean;
    /** @default false */
    confirm?: boolean;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface PruneResult {
    selected: PrunedSession[];
    movedBytes: number;
    pinned: number;
    /** @default [] */
    skipped?: PrunedSession[];
}
export interface PrunedSession {
    sessionId: string | null;
    path: string;
    bytes: number;
    reason: string;
}
/** oh-my-pi: Python the user ran. */
export interface PythonExecutionMessage {
    role: "pythonExecution";
    code: string;
    output: string;
    /** @default null */
    exitCode?: number | null;
    /** @default false */
    cancelled?: boolean;
    /** @default false */
    truncated?: boolean;
    /** @default null */
    timestamp?: number | null;
}
/** oh-my-pi: thinking the provider redacted, kept opaque. */
export interface RedactedThinkingContent {
    type: "redactedThinking";
    data: string;
}
export interface RedactionKindCount {
    kind: string;
    count: number;
}
/** oh-my-pi: the context starts again after this entry. */
export interface ResetBoundaryEntry {
    type: "reset_boundary";
    /** @default null */
    id?: string | null;
    /** @default null */
    parentId?: string | null;
    /** @default null */
    timestamp?: string | null;
}
export interface RestoreParams {
    sessionId: string;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface RestoreResult {
    sessionId: string;
    path: string;
}
/**
 * Notification `session/resync`: events were lost (a slow reader past the backlog, or the file was
 * rewritten); read the session again (getEntries / buildContext), events go on from `cursor`.
 */
export interface ResyncParams {
    sessionId: string;
    cursor: string;
    reason: string;
}
/** The policy `session-sidecar prune` and `session/prune` apply when not given one (none by default). */
export interface RetentionSettings {
    /** @default null */
    olderThan?: string | null;
    /** @default null */
    keepPerCwd?: number | null;
    /** @default null */
    maxTotal?: string | null;
    /** @default false */
    includePinned?: boolean;
}
export interface RewindParams {
    sessionId: string;
    entryId: string;
    /** @default false */
    files?: boolean;
    /** @default false */
    dryRun?: boolean;
    /** @default false */
    force?: boolean;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface RewindResult {
    leafId: string | null;
    /** @default false */
    dryRun?: boolean;
    /** @default null */
    snapshotEntryId?: string | null;
    /** @default null */
    undoEntryId?: string | null;
    /** @default [] */
    restored?: string[];
    /** @default [] */
    created?: string[];
    /** @default [] */
    removed?: string[];
    /** @default [] */
    skipped?: SkippedFile[];
    /** @default false */
    resumed?: boolean;
}
export interface ServerInfo {
    name: string;
    version: string;
}
/** oh-my-pi: the provider service tier (per model family; null: default). */
export interface ServiceTierChangeEntry {
    type: "service_tier_change";
    serviceTier: JsonObject | null;
    /** @default null */
    id?: string | null;
    /** @default null */
    parentId?: string | null;
    /** @default null */
    timestamp?: string | null;
}
export type SessionEntry = MessageEntry | ThinkingLevelChangeEntry | ModelChangeEntry | CompactionEntry | BranchSummaryEntry | CustomEntry | CustomMessageEntry | LabelEntry | SessionInfoEntry | ContextEditEntry | UsageEntry;
/** A session as session/list gives it: a superset of ACP's SessionInfo (sessionId, cwd, title, updatedAt, _meta). */
export interface SessionInfo {
    sessionId: string;
    path: string;
    cwd: string;
    created: string;
    modified: string;
    messageCount: number;
    firstMessage: string;
    archived: boolean;
    tokens: SessionTokens;
    /** @default null */
    name?: string | null;
    /** @default null */
    title?: string | null;
    /** @default null */
    parentSession?: string | null;
    /** @default null */
    snippet?: string | null;
    /** @default false */
    inMemory?: boolean;
    /** @default null */
    updatedAt?: string | null;
    /** @default null */
    _meta?: JsonObject | null;
}
/** pi: the session's name. */
export interface SessionInfoEntry {
    type: "session_info";
    /** @default null */
    name?: string | null;
    /** @default null */
    id?: string | null;
    /** @default null */
    parentId?: string | null;
    /** @default null */
    timestamp?: string | null;
}
/** oh-my-pi: how a subagent's session was started. */
export interface SessionInitEntry {
    type: "session_init";
    /** @default null */
    systemPrompt?: string | null;
    /** @default null */
    task?: string | null;
    /** @default null */
    tools?: string[] | null;
    /** @default null */
    outputSchema?: unknown;
    /** @default null */
    id?: string | null;
    /** @default null */
    parentId?: string | null;
    /** @default null */
    timestamp?: string | null;
}
export interface SessionTokens {
    total: number;
    last: number;
}
export interface SessionUsage {
    sessionId: string | null;
    path: string;
    area: "archive" | "live" | "trash";
    bytes: number;
}
export interface SetLabelParams {
    sessionId: string;
    entryId: string;
    label: string | null;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface SetLabelResult {
    entryId: string;
    leafId: string | null;
}
export interface SetNameParams {
    sessionId: string;
    name: string;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface SetNameResult {
    entryId: string;
    name: string | null;
    /** @default null */
    title?: string | null;
}
export interface Settings {
    store?: StoreSettings;
    retention?: RetentionSettings;
    compaction?: CompactionSettings;
    providers?: ProvidersSettings;
}
export interface SkippedFile {
    path: string;
    reason: string;
}
export interface SnapshotParams {
    sessionId: string;
    /** @default null */
    entryId?: string | null;
    /** @default null */
    cwd?: string | null;
    /** @default null */
    paths?: string[] | null;
    /** @default 10485760 */
    maxFileBytes?: number | null;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface SnapshotResult {
    entryId: string;
    tree: string;
    changedFiles: number;
    /** @default [] */
    notCaptured?: NotCapturedFile[];
    /** @default 0 */
    durationMs?: number;
}
export interface StatsParams {
    /** @default 10 */
    largest?: number;
    /** @default false */
    blobs?: boolean;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface StatsResult {
    totalBytes: number;
    liveBytes: number;
    archiveBytes: number;
    trashBytes: number;
    blobBytes: number;
    blobCount: number;
    indexBytes: number;
    sessionCount: number;
    folders: FolderUsage[];
    largest: SessionUsage[];
    /** @default null */
    unreferencedBlobs?: number | null;
    /** @default null */
    unreferencedBytes?: number | null;
}
export interface StoreSettings {
    /** @default "assistant" */
    fsync?: "always" | "assistant" | "never";
    /** @default false */
    allowExternalPaths?: boolean;
    /** @default null */
    compat?: "omp" | "pi" | null;
    /** @default false */
    redactOnAppend?: boolean;
    /** @default "pi" */
    format?: "pi" | "spec";
    /** @default null */
    databaseUrl?: string | null;
    /** @default 30 */
    leaseSeconds?: number;
}
export interface SubscribeParams {
    sessionId: string;
    /** @default null */
    since?: string | null;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface SubscribeResult {
    cursor: string;
    leafId: string | null;
    entryCount: number;
    /** @default false */
    resync?: boolean;
    /** @default 0 */
    missed?: number;
    /** @default false */
    controller?: boolean;
}
/** Server -> client request `session/summarize` (the `client` provider); answered by `SummarizeResult`. */
export interface SummarizeParams {
    systemPrompt: string;
    prompt: string;
    maxTokens: number;
    /** @default null */
    model?: string | null;
}
export interface SummarizeResult {
    text: string;
}
/** pi 1.5: a system prompt stored in the session. */
export interface SystemMessage {
    role: "system";
    content: string | TextContent[] | null;
    /** @default null */
    sections?: {
        [key: string]: string | null;
    } | null;
    /** @default null */
    timestamp?: number | null;
}
export interface TakeControlParams {
    sessionId: string;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface TakeControlResult {
    sessionId: string;
    tookOver: boolean;
}
export interface TextContent {
    type: "text";
    text: string;
    /** @default null */
    textSignature?: string | null;
}
export interface ThinkingContent {
    type: "thinking";
    thinking: string;
    /** @default null */
    thinkingSignature?: string | null;
    /** @default null */
    redacted?: boolean | null;
}
export interface ThinkingLevelChangeEntry {
    type: "thinking_level_change";
    thinkingLevel: string | null;
    /** @default null */
    id?: string | null;
    /** @default null */
    parentId?: string | null;
    /** @default null */
    timestamp?: string | null;
}
/** oh-my-pi: the session's title changed. */
export interface TitleChangeEntry {
    type: "title_change";
    title: string;
    source: "auto" | "user";
    /** @default null */
    previousTitle?: string | null;
    /** @default null */
    trigger?: string | null;
    /** @default null */
    id?: string | null;
    /** @default null */
    parentId?: string | null;
    /** @default null */
    timestamp?: string | null;
}
/** A tool call inside an assistant message's content (not OpenAI's `tool_calls` beside it). */
export interface ToolCall {
    type: "toolCall";
    id: string;
    name: string;
    arguments: JsonObject;
    /** @default null */
    thoughtSignature?: string | null;
    /** @default null */
    namespace?: string | null;
    /** @default null */
    argumentsError?: string | null;
}
/** The result of the `toolCall` block whose `id` is `toolCallId`. */
export interface ToolResultMessage {
    role: "toolResult";
    toolCallId: string;
    toolName: string;
    content: (TextContent | ImageContent)[] | null;
    /** @default false */
    isError?: boolean;
    /** @default null */
    details?: unknown;
    /** @default null */
    timestamp?: number | null;
}
/**
 * One entry of the tree. The tree is sent flat, in file order: a linear
 * session is as deep as it is long, and nested JSON that deep breaks parsers
 * (serde_json stops at 128 levels). `parentId` is null for a root, and for
 * an entry whose parent is missing or in a cycle (damaged files).
 */
export interface TreeNode {
    id: string;
    parentId: string | null;
    type: string;
    timestamp: string | null;
    /** @default null */
    role?: string | null;
    /** @default null */
    label?: string | null;
}
/** oh-my-pi: rules injected into the context. */
export interface TtsrInjectionEntry {
    type: "ttsr_injection";
    injectedRules: string[];
    /** @default null */
    id?: string | null;
    /** @default null */
    parentId?: string | null;
    /** @default null */
    timestamp?: string | null;
}
export interface UnsubscribeParams {
    sessionId: string;
    /** @default null */
    workDoneToken?: number | string | null;
}
export interface UnsubscribeResult {
    unsubscribed: boolean;
}
/**
 * Tokens of one response. The sidecar sizes a context from the last assistant's usage
 * (totalTokens, else the sum of the others). pi writes every field; a missing one counts 0.
 */
export interface Usage {
    /** @default null */
    input?: number | null;
    /** @default null */
    output?: number | null;
    /** @default null */
    cacheRead?: number | null;
    /** @default null */
    cacheWrite?: number | null;
    /** @default null */
    totalTokens?: number | null;
    /** @default null */
    cost?: Cost | null;
    /** @default null */
    cacheWrite1h?: number | null;
    /** @default null */
    reasoning?: number | null;
}
/** pi 1.5: tokens a call outside the conversation spent (a summary, say). */
export interface UsageEntry {
    type: "usage";
    kind: string;
    provider: string;
    model: string;
    usage: Usage;
    /** @default null */
    note?: string | null;
    /** @default null */
    id?: string | null;
    /** @default null */
    parentId?: string | null;
    /** @default null */
    timestamp?: string | null;
}
export type UserContentBlock = TextContent | ImageContent;
export interface UserMessage {
    role: "user";
    content: string | (TextContent | ImageContent)[] | null;
    /** @default null */
    timestamp?: number | null;
}
export interface WorkDoneBegin {
    kind: "begin";
    title: string;
    /** @default true */
    cancellable?: boolean;
    /** @default null */
    message?: string | null;
    /** @default null */
    percentage?: number | null;
}
export interface WorkDoneEnd {
    kind: "end";
    /** @default null */
    message?: string | null;
}
/** `window/workDoneProgress/create` (server -> client, LSP's): accept `token` by answering null. */
export interface WorkDoneProgressCreateParams {
    token: number | string;
}
export interface WorkDoneReport {
    kind: "report";
    /** @default null */
    message?: string | null;
    /** @default null */
    percentage?: number | null;
}
/** An entry `session/append` accepts: one of pi's entry types, or oh-my-pi's (under its compatibility). */
export type EntryInput = SessionEntry | OmpSessionEntry;
/**
 * An entry as the sidecar returns it. Entries of a type this client does not
 * know (written by a newer pi) come through unchanged: `isKnownEntry` tells.
 */
export type StoredEntry = SessionEntry | OmpSessionEntry;
/** A message of an agent-format context (`buildContext` with `format: "agent"`, the default). */
export type ContextMessage = AgentMessage | OmpAgentMessage;
/** A message of an llm-format context: what a model API takes (the other roles became user messages). */
export type LlmMessage = UserMessage | AssistantMessage | OmpAssistantMessage | ToolResultMessage | SystemMessage | DeveloperMessage;
/** `buildContext`'s result in llm format. */
export type LlmContext = Omit<BuildContextResult, "messages"> & {
    messages: LlmMessage[];
};
/** Every entry type this client knows. */
export declare const KNOWN_ENTRY_TYPES: ReadonlySet<string>;
/** True when this client knows the entry's type (its fields are then typed); others are kept as read. */
export declare function isKnownEntry(entry: {
    type?: unknown;
}): entry is StoredEntry;
/** The `role` of each member of `AgentMessage`. */
export declare const AgentMessageRole: {
    readonly user: "user";
    readonly assistant: "assistant";
    readonly toolResult: "toolResult";
    readonly bashExecution: "bashExecution";
    readonly custom: "custom";
    readonly branchSummary: "branchSummary";
    readonly compactionSummary: "compactionSummary";
    readonly system: "system";
};
export type AgentMessageRole = (typeof AgentMessageRole)[keyof typeof AgentMessageRole];
/** The `type` of each member of `AssistantContentBlock`. */
export declare const AssistantContentBlockType: {
    readonly text: "text";
    readonly thinking: "thinking";
    readonly toolCall: "toolCall";
    readonly image: "image";
};
export type AssistantContentBlockType = (typeof AssistantContentBlockType)[keyof typeof AssistantContentBlockType];
/** The values of `AssistantMessage.stopReason`. */
export declare const AssistantMessageStopReason: {
    readonly aborted: "aborted";
    readonly deferred: "deferred";
    readonly error: "error";
    readonly length: "length";
    readonly pending: "pending";
    readonly stop: "stop";
    readonly toolUse: "toolUse";
};
export type AssistantMessageStopReason = (typeof AssistantMessageStopReason)[keyof typeof AssistantMessageStopReason];
/** The values of `BuildContextParams.format`. */
export declare const BuildContextParamsFormat: {
    readonly agent: "agent";
    readonly llm: "llm";
};
export type BuildContextParamsFormat = (typeof BuildContextParamsFormat)[keyof typeof BuildContextParamsFormat];
/** The values of `BuildContextParams.rules`. */
export declare const BuildContextParamsRules: {
    readonly omp: "omp";
    readonly pi: "pi";
};
export type BuildContextParamsRules = (typeof BuildContextParamsRules)[keyof typeof BuildContextParamsRules];
/** The values of `CompactFallback.reason`. */
export declare const CompactFallbackReason: {
    readonly empty: "empty";
    readonly garbage: "garbage";
};
export type CompactFallbackReason = (typeof CompactFallbackReason)[keyof typeof CompactFallbackReason];
/** The values of `CompactFallback.summaries`. */
export declare const CompactFallbackSummaries: {
    readonly branch: "branch";
    readonly history: "history";
    readonly turnPrefix: "turnPrefix";
};
export type CompactFallbackSummaries = (typeof CompactFallbackSummaries)[keyof typeof CompactFallbackSummaries];
/** The values of `CompactResult.fellBackReason`. */
export declare const CompactResultFellBackReason: {
    readonly empty: "empty";
    readonly garbage: "garbage";
    readonly noProviderConfigured: "noProviderConfigured";
};
export type CompactResultFellBackReason = (typeof CompactResultFellBackReason)[keyof typeof CompactResultFellBackReason];
/** The values of `ConvertLoss.kind`. */
export declare const ConvertLossKind: {
    readonly branch: "branch";
    readonly entry: "entry";
    readonly field: "field";
    readonly part: "part";
    readonly session: "session";
};
export type ConvertLossKind = (typeof ConvertLossKind)[keyof typeof ConvertLossKind];
/** The values of `ConvertParams.to`. */
export declare const ConvertParamsTo: {
    readonly pi: "pi";
    readonly spec: "spec";
};
export type ConvertParamsTo = (typeof ConvertParamsTo)[keyof typeof ConvertParamsTo];
/** The values of `ConvertResult.format`. */
export declare const ConvertResultFormat: {
    readonly pi: "pi";
    readonly spec: "spec";
};
export type ConvertResultFormat = (typeof ConvertResultFormat)[keyof typeof ConvertResultFormat];
/** The values of `CreateParams.source`. */
export declare const CreateParamsSource: {
    readonly cron: "cron";
    readonly interactive: "interactive";
};
export type CreateParamsSource = (typeof CreateParamsSource)[keyof typeof CreateParamsSource];
/** The `role` of each member of `EntryMessage`. */
export declare const EntryMessageRole: {
    readonly user: "user";
    readonly assistant: "assistant";
    readonly toolResult: "toolResult";
    readonly bashExecution: "bashExecution";
    readonly custom: "custom";
    readonly system: "system";
};
export type EntryMessageRole = (typeof EntryMessageRole)[keyof typeof EntryMessageRole];
/** The values of `ExportParams.format`. */
export declare const ExportParamsFormat: {
    readonly html: "html";
    readonly json: "json";
    readonly markdown: "markdown";
};
export type ExportParamsFormat = (typeof ExportParamsFormat)[keyof typeof ExportParamsFormat];
/** The values of `FileChange.change`. */
export declare const FileChangeChange: {
    readonly added: "added";
    readonly modified: "modified";
    readonly removed: "removed";
    readonly renamed: "renamed";
    readonly typeChanged: "typeChanged";
};
export type FileChangeChange = (typeof FileChangeChange)[keyof typeof FileChangeChange];
/** The values of `HistorySearchParams.order`. */
export declare const HistorySearchParamsOrder: {
    readonly recent: "recent";
    readonly relevance: "relevance";
};
export type HistorySearchParamsOrder = (typeof HistorySearchParamsOrder)[keyof typeof HistorySearchParamsOrder];
/** The values of `ModelUsageEntry.stopReason`. */
export declare const ModelUsageEntryStopReason: {
    readonly aborted: "aborted";
    readonly deferred: "deferred";
    readonly error: "error";
    readonly length: "length";
    readonly pending: "pending";
    readonly stop: "stop";
    readonly toolUse: "toolUse";
};
export type ModelUsageEntryStopReason = (typeof ModelUsageEntryStopReason)[keyof typeof ModelUsageEntryStopReason];
/** The `role` of each member of `OmpAgentMessage`. */
export declare const OmpAgentMessageRole: {
    readonly user: "user";
    readonly assistant: "assistant";
    readonly toolResult: "toolResult";
    readonly bashExecution: "bashExecution";
    readonly custom: "custom";
    readonly branchSummary: "branchSummary";
    readonly compactionSummary: "compactionSummary";
    readonly system: "system";
    readonly developer: "developer";
    readonly pythonExecution: "pythonExecution";
    readonly hookMessage: "hookMessage";
    readonly fileMention: "fileMention";
};
export type OmpAgentMessageRole = (typeof OmpAgentMessageRole)[keyof typeof OmpAgentMessageRole];
/** The `type` of each member of `OmpAssistantContentBlock`. */
export declare const OmpAssistantContentBlockType: {
    readonly text: "text";
    readonly thinking: "thinking";
    readonly toolCall: "toolCall";
    readonly image: "image";
    readonly redactedThinking: "redactedThinking";
    readonly fallback: "fallback";
    readonly anthropicServerTool: "anthropicServerTool";
};
export type OmpAssistantContentBlockType = (typeof OmpAssistantContentBlockType)[keyof typeof OmpAssistantContentBlockType];
/** The values of `OmpAssistantMessage.stopReason`. */
export declare const OmpAssistantMessageStopReason: {
    readonly aborted: "aborted";
    readonly deferred: "deferred";
    readonly error: "error";
    readonly length: "length";
    readonly pending: "pending";
    readonly stop: "stop";
    readonly toolUse: "toolUse";
};
export type OmpAssistantMessageStopReason = (typeof OmpAssistantMessageStopReason)[keyof typeof OmpAssistantMessageStopReason];
/** The `role` of each member of `OmpEntryMessage`. */
export declare const OmpEntryMessageRole: {
    readonly user: "user";
    readonly assistant: "assistant";
    readonly toolResult: "toolResult";
    readonly bashExecution: "bashExecution";
    readonly custom: "custom";
    readonly system: "system";
    readonly developer: "developer";
    readonly pythonExecution: "pythonExecution";
    readonly hookMessage: "hookMessage";
    readonly fileMention: "fileMention";
};
export type OmpEntryMessageRole = (typeof OmpEntryMessageRole)[keyof typeof OmpEntryMessageRole];
/** The `type` of each member of `OmpSessionEntry`. */
export declare const OmpSessionEntryType: {
    readonly message: "message";
    readonly thinking_level_change: "thinking_level_change";
    readonly model_change: "model_change";
    readonly compaction: "compaction";
    readonly branch_summary: "branch_summary";
    readonly custom: "custom";
    readonly custom_message: "custom_message";
    readonly label: "label";
    readonly session_info: "session_info";
    readonly context_edit: "context_edit";
    readonly usage: "usage";
    readonly ttsr_injection: "ttsr_injection";
    readonly session_init: "session_init";
    readonly mode_change: "mode_change";
    readonly model_usage: "model_usage";
    readonly service_tier_change: "service_tier_change";
    readonly reset_boundary: "reset_boundary";
    readonly title_change: "title_change";
    readonly credential_pin: "credential_pin";
};
export type OmpSessionEntryType = (typeof OmpSessionEntryType)[keyof typeof OmpSessionEntryType];
/** The `type` of each member of `SessionEntry`. */
export declare const SessionEntryType: {
    readonly message: "message";
    readonly thinking_level_change: "thinking_level_change";
    readonly model_change: "model_change";
    readonly compaction: "compaction";
    readonly branch_summary: "branch_summary";
    readonly custom: "custom";
    readonly custom_message: "custom_message";
    readonly label: "label";
    readonly session_info: "session_info";
    readonly context_edit: "context_edit";
    readonly usage: "usage";
};
export type SessionEntryType = (typeof SessionEntryType)[keyof typeof SessionEntryType];
/** The values of `SessionUsage.area`. */
export declare const SessionUsageArea: {
    readonly archive: "archive";
    readonly live: "live";
    readonly trash: "trash";
};
export type SessionUsageArea = (typeof SessionUsageArea)[keyof typeof SessionUsageArea];
/** The values of `StoreSettings.fsync`. */
export declare const StoreSettingsFsync: {
    readonly always: "always";
    readonly assistant: "assistant";
    readonly never: "never";
};
export type StoreSettingsFsync = (typeof StoreSettingsFsync)[keyof typeof StoreSettingsFsync];
/** The values of `StoreSettings.compat`. */
export declare const StoreSettingsCompat: {
    readonly omp: "omp";
    readonly pi: "pi";
};
export type StoreSettingsCompat = (typeof StoreSettingsCompat)[keyof typeof StoreSettingsCompat];
/** The values of `StoreSettings.format`. */
export declare const StoreSettingsFormat: {
    readonly pi: "pi";
    readonly spec: "spec";
};
export type StoreSettingsFormat = (typeof StoreSettingsFormat)[keyof typeof StoreSettingsFormat];
/** The values of `TitleChangeEntry.source`. */
export declare const TitleChangeEntrySource: {
    readonly auto: "auto";
    readonly user: "user";
};
export type TitleChangeEntrySource = (typeof TitleChangeEntrySource)[keyof typeof TitleChangeEntrySource];
/** The `type` of each member of `UserContentBlock`. */
export declare const UserContentBlockType: {
    readonly text: "text";
    readonly image: "image";
};
export type UserContentBlockType = (typeof UserContentBlockType)[keyof typeof UserContentBlockType];
/** The `kind` of each `$/progress` value. */
export declare const ProgressKind: {
    readonly begin: "begin";
    readonly report: "report";
    readonly end: "end";
};
export type ProgressKind = (typeof ProgressKind)[keyof typeof ProgressKind];
/** Client -> server requests: params and result of each method. */
export interface Methods {
    "initialize": {
        params: InitializeParams;
        result: InitializeResult;
    };
    "shutdown": {
        params: null;
        result: null;
    };
    "session/create": {
        params: CreateParams;
        result: CreateResult;
    };
    "session/open": {
        params: OpenParams;
        result: OpenResult;
    };
    "session/continueRecent": {
        params: ContinueRecentParams;
        result: OpenResult | null;
    };
    "session/close": {
        params: CloseParams;
        result: null;
    };
    "session/flush": {
        params: FlushParams;
        result: FlushResult;
    };
    "session/append": {
        params: AppendParams;
        result: AppendResult;
    };
    "session/buildContext": {
        params: BuildContextParams;
        result: BuildContextResult;
    };
    "session/branch": {
        params: BranchParams;
        result: BranchResult;
    };
    "session/getTree": {
        params: GetTreeParams;
        result: GetTreeResult;
    };
    "session/getEntries": {
        params: GetEntriesParams;
        result: GetEntriesResult;
    };
    "session/setLabel": {
        params: SetLabelParams;
        result: SetLabelResult;
    };
    "session/setName": {
        params: SetNameParams;
        result: SetNameResult;
    };
    "session/fork": {
        params: ForkParams;
        result: ForkResult;
    };
    "session/list": {
        params: ListParams;
        result: ListResult;
    };
    "session/archive": {
        params: ArchiveParams;
        result: ArchiveResult;
    };
    "session/unarchive": {
        params: ArchiveParams;
        result: ArchiveResult;
    };
    "session/delete": {
        params: DeleteParams;
        result: DeleteResult;
    };
    "session/restore": {
        params: RestoreParams;
        result: RestoreResult;
    };
    "session/compact": {
        params: CompactParams;
        result: CompactResult;
    };
    "session/move": {
        params: MoveParams;
        result: MoveResult;
    };
    "session/stats": {
        params: StatsParams;
        result: StatsResult;
    };
    "session/prune": {
        params: PruneParams;
        result: PruneResult;
    };
    "history/add": {
        params: HistoryAddParams;
        result: null;
    };
    "history/search": {
        params: HistorySearchParams;
        result: HistoryResult;
    };
    "history/list": {
        params: HistoryListParams;
        result: HistoryResult;
    };
    "session/snapshot": {
        params: SnapshotParams;
        result: SnapshotResult;
    };
    "session/diff": {
        params: DiffParams;
        result: DiffResult;
    };
    "session/rewind": {
        params: RewindParams;
        result: RewindResult;
    };
    "session/import": {
        params: ImportParams;
        result: ImportResult;
    };
    "session/export": {
        params: ExportParams;
        result: ExportResult;
    };
    "session/convert": {
        params: ConvertParams;
        result: ConvertResult;
    };
    "session/appendForeign": {
        params: AppendForeignParams;
        result: AppendForeignResult;
    };
    "session/loadForeign": {
        params: LoadForeignParams;
        result: LoadForeignResult;
    };
    "session/listForeign": {
        params: ListForeignParams;
        result: ListForeignResult;
    };
    "session/deleteForeign": {
        params: DeleteForeignParams;
        result: DeleteForeignResult;
    };
    "session/subscribe": {
        params: SubscribeParams;
        result: SubscribeResult;
    };
    "session/unsubscribe": {
        params: UnsubscribeParams;
        result: UnsubscribeResult;
    };
    "session/takeControl": {
        params: TakeControlParams;
        result: TakeControlResult;
    };
}
export type MethodName = keyof Methods;
export type ParamsOf<M extends MethodName> = Methods[M]["params"];
export type ResultOf<M extends MethodName> = Methods[M]["result"];
/** Every method of the schema, in schema order. */
export declare const METHOD_NAMES: readonly ["initialize", "shutdown", "session/create", "session/open", "session/continueRecent", "session/close", "session/flush", "session/append", "session/buildContext", "session/branch", "session/getTree", "session/getEntries", "session/setLabel", "session/setName", "session/fork", "session/list", "session/archive", "session/unarchive", "session/delete", "session/restore", "session/compact", "session/move", "session/stats", "session/prune", "history/add", "history/search", "history/list", "session/snapshot", "session/diff", "session/rewind", "session/import", "session/export", "session/convert", "session/appendForeign", "session/loadForeign", "session/listForeign", "session/deleteForeign", "session/subscribe", "session/unsubscribe", "session/takeControl"];
/** Server -> client requests (answered by the client). */
export interface ServerRequests {
    "session/summarize": {
        params: SummarizeParams;
        result: SummarizeResult;
    };
    "window/workDoneProgress/create": {
        params: WorkDoneProgressCreateParams;
        result: null;
    };
}
export declare const SERVER_REQUEST_NAMES: readonly ["session/summarize", "window/workDoneProgress/create"];
/** Client -> server notifications. */
export interface ClientNotifications {
    "initialized": JsonObject | null;
    "exit": null;
    "$/cancelRequest": CancelParams;
}
/** Server -> client notifications. */
export interface ServerNotifications {
    "$/progress": ProgressParams;
    "session/didCompact": DidCompactParams;
    "session/didAppend": DidAppendParams;
    "session/didReload": DidReloadParams;
    "session/didChangeLeaf": DidChangeLeafParams;
    "session/didSetLabel": DidSetLabelParams;
    "session/didSetName": DidSetNameParams;
    "session/didClose": DidCloseParams;
    "session/resync": ResyncParams;
    "session/didLoseControl": DidLoseControlParams;
}
export declare const SERVER_NOTIFICATION_NAMES: readonly ["$/progress", "session/didCompact", "session/didAppend", "session/didReload", "session/didChangeLeaf", "session/didSetLabel", "session/didSetName", "session/didClose", "session/resync", "session/didLoseControl"];
/** The error object of a failed response. */
export type ResponseErrorObject = ErrorObject;
/** Settings, as initialize's `settings` overrides and as initialize returns them. */
export type SidecarSettings = Settings;
/** Error codes by kind (`error.data.kind`). */
export declare const ErrorCodes: {
    /** A request before initialize. */
    readonly serverNotInitialized: -32002;
    /** Not a valid request object, a reused id, or a request after shutdown. */
    readonly invalidRequest: -32600;
    /** No such method; capabilities.methods lists them. */
    readonly methodNotFound: -32601;
    /** Params do not fit the method; data.field names the bad field. */
    readonly invalidParams: -32602;
    /** A bug in the server; the stderr log has the traceback. */
    readonly internalError: -32603;
    /** The frame or its JSON could not be read; answered with id null. */
    readonly parseError: -32700;
    /** The client cancelled the request (`$/cancelRequest`) before it changed anything. */
    readonly requestCancelled: -32800;
    /** No session with that id below the root (or, for close, none open), or no file at that path. */
    readonly sessionNotFound: -33001;
    /** A session id that is not 1-64 letters, digits, '.', '_' or '-' (letters or digits at both ends). */
    readonly invalidSessionId: -33002;
    /** An entry id (leaf, branch target, label target, parent) that is not in the session. */
    readonly entryNotFound: -33003;
    /** Another process holds the session open for writing. */
    readonly sessionLocked: -33004;
    /** The disk refused a read or write (space, permissions); latched until the session is reopened. */
    readonly storageError: -33005;
    /** The file is not a session (no valid header line); it is left unchanged. */
    readonly damagedFile: -33006;
    /** A path outside the sessions root (allowed only with store.allowExternalPaths). */
    readonly pathOutsideRoot: -33007;
    /** The session id, or the file a move would create, exists already. */
    readonly sessionExists: -33008;
    /** An appended entry is malformed; data.index names it and nothing of the batch was written. */
    readonly invalidEntry: -33009;
    /** The session is not in a state that allows the call (e.g. archiving one that has no file yet). */
    readonly invalidState: -33010;
    /** A frame over the size limit (64 MiB); it is skipped. */
    readonly payloadTooLarge: -33011;
    /** Another program appended to the session's file: its leaf is not the `expectedLeafId` the append named. Nothing was written; `data.leafId` is the leaf now and `data.entries` (or only `data.entryIds` when large) what the client has not seen. */
    readonly sessionChanged: -33012;
    /** Nothing a compaction could replace: the path is empty, its leaf is a compaction already (`data.entryId` names it; asking again never returns it as a new result), or everything since the last compaction is within keepRecentTokens. `data.reason` says which: "empty", "leafIsCompaction", "withinKeepRecentTokens". */
    readonly nothingToCompact: -33020;
    /** The summarizing model failed (after bounded retries); `data` names provider and status. */
    readonly providerError: -33021;
    /** The summarization request itself is larger than the model accepts. */
    readonly contextOverflow: -33022;
    /** The named provider has no key, endpoint or client to ask. */
    readonly providerNotConfigured: -33023;
    /** The session's leaf moved to another branch while compacting; nothing was written. */
    readonly compactionConflict: -33024;
    /** The summary, with the blocks the sidecar adds to it, would not be smaller than the messages it replaces (or the context would not shrink): nothing was written. `data` holds `summaryTokens`, `replacedTokens`, `tokensBefore` and `tokensAfter` (estimates, chars / 4). */
    readonly compactionNotSmaller: -33025;
    /** A rewind would overwrite files changed outside the agent since the last snapshot; `data.paths` names them. Pass `force` to rewind anyway (they are in the snapshot taken just before, so it can be undone). */
    readonly worktreeChanged: -33040;
    /** No snapshot of the files at or before the entry (or the diff's point) to go back to. */
    readonly noSnapshot: -33041;
    /** The snapshot store could not do it (git missing or failing, its objects gone, the folder unreadable). */
    readonly snapshotFailed: -33042;
    /** A snapshot names a path outside the session's folder (or through a symlink); nothing outside is written. */
    readonly pathOutsideCwd: -33043;
    /** session/export could not write the file asked for (folder missing, no permission, disk full). */
    readonly exportWriteFailed: -33050;
    /** A path given to session/import that does not exist or holds no session of that tool. */
    readonly importSourceNotFound: -33060;
    /** A source that exists but cannot be read as that tool's sessions (an opencode file that is not SQLite). */
    readonly importSourceUnreadable: -33061;
    /** Another client of this sidecar controls the session; observe it, or call session/takeControl to write. */
    readonly notController: -33070;
    /** A TCP client's initialize did not carry the token the server was started with; nothing else is served. */
    readonly unauthorized: -33071;
    /** A client of a shared (socket) sidecar asked for its own sessions root or settings; they are the server's. */
    readonly sharedServer: -33072;
    /** The unix socket path asked for (`keepServing`) is served by another sidecar, or is not a socket. */
    readonly socketInUse: -33073;
    /** `--database-url` / `store.databaseUrl` is not a PostgreSQL URL we can use; the message says what to fix. */
    readonly databaseUrlInvalid: -33080;
    /** The database's schema is newer than this sidecar knows, or its tables were not made by session-sidecar. */
    readonly databaseSchemaMismatch: -33081;
    /** The session's on-disk format has no place for what was asked (a branch, a label, a thinking block in the spec format): nothing was written. The message names the format and the part. */
    readonly formatCannotHold: -33090;
};
export type ErrorKind = keyof typeof ErrorCodes;
/** Per-call options: cancellation and `$/progress` for this call. */
export interface CallOptions {
    /** Aborting sends `$/cancelRequest`; the call then rejects with a `RequestCancelledError` (or resolves, if the server finished first). */
    signal?: AbortSignal;
    /** Receives this call's `$/progress` values (begin, report..., end) before the call resolves. */
    onProgress?: (value: ProgressParams["value"]) => void;
}
/** One typed method per session method of the protocol (`session/x` -> `x`). */
export declare abstract class SessionMethods {
    /** Send `method` with `params` and wait for its result. */
    abstract request<M extends MethodName>(method: M, params: ParamsOf<M>, options?: CallOptions): Promise<ResultOf<M>>;
    /** `session/create`. */
    create(params: CreateParams, options?: CallOptions): Promise<CreateResult>;
    /**
     * `session/open`.
     * Name the session by `sessionId` (looked up below the root) or by `path`.
     */
    open(params?: OpenParams, options?: CallOptions): Promise<OpenResult>;
    /** `session/continueRecent`. */
    continueRecent(params: ContinueRecentParams, options?: CallOptions): Promise<OpenResult | null>;
    /** `session/close`. */
    close(params: CloseParams, options?: CallOptions): Promise<null>;
    /** `session/flush`. */
    flush(params: FlushParams, options?: CallOptions): Promise<FlushResult>;
    /** `session/append`. */
    append(params: AppendParams, options?: CallOptions): Promise<AppendResult>;
    /** `session/buildContext`. */
    buildContext(params: BuildContextParams & {
        format: "llm";
    }, options?: CallOptions): Promise<LlmContext>;
    buildContext(params: BuildContextParams, options?: CallOptions): Promise<BuildContextResult>;
    /** `session/branch`. */
    branch(params: BranchParams, options?: CallOptions): Promise<BranchResult>;
    /** `session/getTree`. */
    getTree(params: GetTreeParams, options?: CallOptions): Promise<GetTreeResult>;
    /** `session/getEntries`. */
    getEntries(params: GetEntriesParams, options?: CallOptions): Promise<GetEntriesResult>;
    /** `session/setLabel`. */
    setLabel(params: SetLabelParams, options?: CallOptions): Promise<SetLabelResult>;
    /** `session/setName`. */
    setName(params: SetNameParams, options?: CallOptions): Promise<SetNameResult>;
    /** `session/fork`. */
    fork(params: ForkParams, options?: CallOptions): Promise<ForkResult>;
    /** `session/list`. */
    list(params?: ListParams, options?: CallOptions): Promise<ListResult>;
    /** `session/archive`. */
    archive(params: ArchiveParams, options?: CallOptions): Promise<ArchiveResult>;
    /** `session/unarchive`. */
    unarchive(params: ArchiveParams, options?: CallOptions): Promise<ArchiveResult>;
    /** `session/delete`. */
    delete(params: DeleteParams, options?: CallOptions): Promise<DeleteResult>;
    /** `session/restore`. */
    restore(params: RestoreParams, options?: CallOptions): Promise<RestoreResult>;
    /** `session/compact`. */
    compact(params: CompactParams, options?: CallOptions): Promise<CompactResult>;
    /** `session/move`. */
    move(params: MoveParams, options?: CallOptions): Promise<MoveResult>;
    /** `session/stats`. */
    stats(params?: StatsParams, options?: CallOptions): Promise<StatsResult>;
    /**
     * `session/prune`.
     * A retention policy; absent fields come from the settings' `retention` section.
     */
    prune(params?: PruneParams, options?: CallOptions): Promise<PruneResult>;
    /** `history/add`. */
    historyAdd(params: HistoryAddParams, options?: CallOptions): Promise<null>;
    /** `history/search`. */
    historySearch(params: HistorySearchParams, options?: CallOptions): Promise<HistoryResult>;
    /** `history/list`. */
    historyList(params?: HistoryListParams, options?: CallOptions): Promise<HistoryResult>;
    /** `session/snapshot`. */
    snapshot(params: SnapshotParams, options?: CallOptions): Promise<SnapshotResult>;
    /** `session/diff`. */
    diff(params: DiffParams, options?: CallOptions): Promise<DiffResult>;
    /** `session/rewind`. */
    rewind(params: RewindParams, options?: CallOptions): Promise<RewindResult>;
    /** `session/import`. */
    import(params: ImportParams, options?: CallOptions): Promise<ImportResult>;
    /** `session/export`. */
    export(params: ExportParams, options?: CallOptions): Promise<ExportResult>;
    /**
     * `session/convert`.
     * Copy a session into the other format, as a new session below `targetRoot`.
     *
     * Name the source by `sessionId` (below this sidecar's root) or `path` (a pi
     * `.jsonl` file, or a spec session folder). The source is not changed.
     */
    convert(params: ConvertParams, options?: CallOptions): Promise<ConvertResult>;
    /** `session/appendForeign`. */
    appendForeign(params: AppendForeignParams, options?: CallOptions): Promise<AppendForeignResult>;
    /** `session/loadForeign`. */
    loadForeign(params: LoadForeignParams, options?: CallOptions): Promise<LoadForeignResult>;
    /** `session/listForeign`. */
    listForeign(params: ListForeignParams, options?: CallOptions): Promise<ListForeignResult>;
    /** `session/deleteForeign`. */
    deleteForeign(params: DeleteForeignParams, options?: CallOptions): Promise<DeleteForeignResult>;
    /** `session/subscribe`. */
    subscribe(params: SubscribeParams, options?: CallOptions): Promise<SubscribeResult>;
    /** `session/unsubscribe`. */
    unsubscribe(params: UnsubscribeParams, options?: CallOptions): Promise<UnsubscribeResult>;
    /** `session/takeControl`. */
    takeControl(params: TakeControlParams, options?: CallOptions): Promise<TakeControlResult>;
    /** Listen to one server notification by name (the typed `onDidAppend`... call this). */
    abstract onNotification<N extends keyof ServerNotifications>(method: N, listener: (params: ServerNotifications[N]) => void): {
        dispose(): void;
    };
    abstract onNotification(method: string, listener: (params: unknown) => void): {
        dispose(): void;
    };
    /** `session/didCompact` (`DidCompactParams`). */
    onDidCompact(listener: (params: ServerNotifications["session/didCompact"]) => void): {
        dispose(): void;
    };
    /** `session/didAppend` (`DidAppendParams`). */
    onDidAppend(listener: (params: ServerNotifications["session/didAppend"]) => void): {
        dispose(): void;
    };
    /** `session/didReload` (`DidReloadParams`). */
    onDidReload(listener: (params: ServerNotifications["session/didReload"]) => void): {
        dispose(): void;
    };
    /** `session/didChangeLeaf` (`DidChangeLeafParams`). */
    onDidChangeLeaf(listener: (params: ServerNotifications["session/didChangeLeaf"]) => void): {
        dispose(): void;
    };
    /** `session/didSetLabel` (`DidSetLabelParams`). */
    onDidSetLabel(listener: (params: ServerNotifications["session/didSetLabel"]) => void): {
        dispose(): void;
    };
    /** `session/didSetName` (`DidSetNameParams`). */
    onDidSetName(listener: (params: ServerNotifications["session/didSetName"]) => void): {
        dispose(): void;
    };
    /** `session/didClose` (`DidCloseParams`). */
    onDidClose(listener: (params: ServerNotifications["session/didClose"]) => void): {
        dispose(): void;
    };
    /** `session/resync` (`ResyncParams`). */
    onResync(listener: (params: ServerNotifications["session/resync"]) => void): {
        dispose(): void;
    };
    /** `session/didLoseControl` (`DidLoseControlParams`). */
    onDidLoseControl(listener: (params: ServerNotifications["session/didLoseControl"]) => void): {
        dispose(): void;
    };
}
/** Protocol method -> the SessionMethods method serving it. */
export declare const CLIENT_METHOD_NAMES: {
    readonly "session/create": "create";
    readonly "session/open": "open";
    readonly "session/continueRecent": "continueRecent";
    readonly "session/close": "close";
    readonly "session/flush": "flush";
    readonly "session/append": "append";
    readonly "session/buildContext": "buildContext";
    readonly "session/branch": "branch";
    readonly "session/getTree": "getTree";
    readonly "session/getEntries": "getEntries";
    readonly "session/setLabel": "setLabel";
    readonly "session/setName": "setName";
    readonly "session/fork": "fork";
    readonly "session/list": "list";
    readonly "session/archive": "archive";
    readonly "session/unarchive": "unarchive";
    readonly "session/delete": "delete";
    readonly "session/restore": "restore";
    readonly "session/compact": "compact";
    readonly "session/move": "move";
    readonly "session/stats": "stats";
    readonly "session/prune": "prune";
    readonly "history/add": "historyAdd";
    readonly "history/search": "historySearch";
    readonly "history/list": "historyList";
    readonly "session/snapshot": "snapshot";
    readonly "session/diff": "diff";
    readonly "session/rewind": "rewind";
    readonly "session/import": "import";
    readonly "session/export": "export";
    readonly "session/convert": "convert";
    readonly "session/appendForeign": "appendForeign";
    readonly "session/loadForeign": "loadForeign";
    readonly "session/listForeign": "listForeign";
    readonly "session/deleteForeign": "deleteForeign";
    readonly "session/subscribe": "subscribe";
    readonly "session/unsubscribe": "unsubscribe";
    readonly "session/takeControl": "takeControl";
};
