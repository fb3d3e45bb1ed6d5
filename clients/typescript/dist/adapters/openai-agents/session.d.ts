/**
 * `SidecarSession`: the OpenAI Agents SDK's (`@openai/agents-core`) `Session` kept in a sidecar.
 *
 * How it is kept is the Python adapter's way (its session.py says it at length), so either
 * language resumes a session the other wrote:
 *
 * - `addItems`: one `session/append` of one entry per item (items.ts), below the leaf;
 * - `getItems`: the session's context at its leaf (`session/buildContext`), read whole once and
 *   kept with the leaf it was read at, grown by this object's own appends; each later read asks
 *   the sidecar for the leaf (`session/open` of the open session) and reads the context again
 *   only when the leaf moved (another writer, a compaction);
 * - `popItem`: the leaf moves back to the parent of the last item's entry, by an appended
 *   `custom` entry (customType `openai-agents.leaf`) below that parent: the popped item stays
 *   on a branch of the tree. An item the last compaction kept (before the compaction entry) is
 *   left out of the context by a `context_edit` instead;
 * - `clearSession`: the same marker as a new root: an empty branch;
 * - `runCompaction`: `session/compact` (its `$/progress` to `onCompactionProgress`); the history
 *   is then the summary (a user message, as pi words it for a model) and the items it kept;
 * - `replaceHistoryWithCompaction(items)` (the SDK's own compaction hands over a `compaction`
 *   item and the items it keeps): a new branch from the root holding exactly those items.
 *
 * Types only are imported from `@openai/agents-core`: the adapter runs without it installed.
 */
import type { AgentInputItem, OpenAIResponsesCompactionArgs, OpenAIResponsesCompactionAwareSession, OpenAIResponsesCompactionResult, RunContextAwareSession } from "@openai/agents-core";
import { SidecarClient, type SpawnOptions, type WorkDoneProgress } from "../../client.js";
import { type AppendResult, type CompactParams, type CompactResult } from "../../protocol.js";
/** What `session/compact` is asked with (its params but the session's). */
export type CompactOptions = Omit<CompactParams, "sessionId" | "leafId" | "workDoneToken">;
export interface SidecarSessionOptions {
    /** A sessions root to spawn a sidecar on (`--root`); else the sidecar's default root. */
    root?: string;
    /** An already connected client to use instead of spawning one (it is not closed with the session). */
    client?: SidecarClient;
    /** How to spawn the sidecar (`command`, `args`, `env`...; `root` above wins). */
    spawn?: SpawnOptions;
    /** The session header's working folder (default: this process's). */
    cwd?: string;
    /** What `session/compact` is asked with (`provider`, `model`, `keepRecentTokens`...). */
    compact?: CompactOptions;
    /** Whether the runner's compaction hook compacts after a turn (default: the sidecar's `shouldCompact`). */
    shouldCompact?: (appended: AppendResult) => boolean;
    /** The compaction's `$/progress` values (begin, report..., end). */
    onCompactionProgress?: (value: WorkDoneProgress) => void;
}
/**
 * A conversation of the OpenAI Agents SDK kept as a session of a sidecar:
 * `run(agent, input, { session: new SidecarSession("conversation-1") })`.
 */
export declare class SidecarSession implements OpenAIResponsesCompactionAwareSession, RunContextAwareSession {
    /** The runner passes its run context to every call: how `runCompaction` tells the runner's call from a caller's. */
    readonly acceptsRunContext: true;
    readonly sessionId: string;
    /** The last compaction this session ran (`session/compact`'s result). */
    lastCompaction: CompactResult | undefined;
    private readonly options;
    private readonly cwd;
    private client;
    private ownsClient;
    private sidecarId;
    private queue;
    private items;
    private entryIds;
    private leaf;
    private known;
    private compacted;
    private readonly parents;
    private lastAppend;
    constructor(sessionId: string, options?: SidecarSessionOptions);
    /** The id of the session in the sidecar once opened: `sessionId`, or the one derived from it. */
    get sidecarSessionId(): string | undefined;
    getSessionId(): Promise<string>;
    /** The history, oldest first; with `limit` the newest `limit` items (none for 0 or less, as MemorySession answers). */
    getItems(limit?: number): Promise<AgentInputItem[]>;
    /** Append the items (one entry each, one `session/append`). */
    addItems(items: AgentInputItem[]): Promise<void>;
    /** Take the newest item off the history and return it (undefined when empty); it stays on a branch. */
    popItem(): Promise<AgentInputItem | undefined>;
    /** Start an empty branch: the history is empty, what was in it stays in the tree. */
    clearSession(): Promise<void>;
    /**
     * The sidecar's compaction; the history becomes its summary and the items it kept.
     *
     * Called by a caller (no run context), or with `force`, it compacts; called by the runner
     * after a turn (a run context, or a `responseId`), it compacts when `shouldCompact` says so,
     * and a compaction the sidecar refuses (nothing to gain, say) is skipped, not thrown. The
     * result is null: the runner counts the usage of a model request, and the sidecar's
     * summarizer reports none (`lastCompaction` holds what the compaction did).
     */
    runCompaction(args?: OpenAIResponsesCompactionArgs, runContext?: unknown): Promise<OpenAIResponsesCompactionResult | null>;
    /** The history becomes `items` (a `compaction` item and the items it keeps), on a new branch from the root. */
    replaceHistoryWithCompaction(items: AgentInputItem[]): Promise<void>;
    /** Close the session in the sidecar, and the sidecar if this session spawned it. */
    close(): Promise<void>;
    [Symbol.asyncDispose](): Promise<void>;
    /** Run `work` after every call before it (the SDK may call without awaiting the last). */
    private locked;
    /** The client (spawned on first use) and the session's id in it (opened, or created empty). */
    private ready;
    private open;
    /** Make the history kept here the session's at its leaf: read it again only when the leaf moved. */
    private current;
    /**
     * Note an append; whether the history kept here is still the session's (then the caller adds
     * what the append added): it is when the append went below the leaf it was kept at and the
     * sidecar changed nothing else (tool-result clearing, another program's lines).
     */
    private grew;
    /** Move the leaf to `parentId` (null: before the first entry) so that a reopen finds it there too. */
    private markLeaf;
    private parentOf;
    /** Whether the entry came after the compaction entry the history starts from (else the compaction kept it). */
    private afterCompaction;
}
