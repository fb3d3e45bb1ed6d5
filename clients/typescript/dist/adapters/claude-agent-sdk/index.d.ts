import { SidecarClient, type SpawnOptions } from "../../client.js";
/** The SDK's `SessionKey` (structurally). */
export interface SessionKey {
    projectKey: string;
    sessionId: string;
    subpath?: string;
}
/** The SDK's `SessionStoreEntry`: one transcript line, passed through as it is. */
export type SessionStoreEntry = {
    type: string;
    uuid?: string;
    timestamp?: string;
    [k: string]: unknown;
};
/** The SDK's `SessionSummaryEntry`. */
export interface SessionSummaryEntry {
    sessionId: string;
    mtime: number;
    data: Record<string, unknown>;
}
/** The SDK's `foldSessionSummary`. */
export type FoldSessionSummary = (prev: SessionSummaryEntry | undefined, key: SessionKey, entries: SessionStoreEntry[], options?: {
    mtime?: number;
}) => SessionSummaryEntry;
export interface SidecarSessionStoreOptions {
    /** A sessions root to spawn a sidecar on (first use); absent: the sidecar's default root. */
    root?: string;
    /** An already connected client to use instead (not disposed with the store). */
    client?: SidecarClient;
    /** How to spawn the sidecar (`SidecarClient.spawn`'s options; `root` above wins). */
    spawn?: SpawnOptions;
    /**
     * Folds a batch into the session's summary; default: the SDK's `foldSessionSummary` (imported when
     * first needed). Without either, no summaries are kept and `listSessionSummaries` answers none
     * (the SDK then lists through `listSessions` and `load`).
     */
    fold?: FoldSessionSummary;
}
/** The Claude Agent SDK's sessions kept as sessions of a sidecar. */
export declare class SidecarSessionStore {
    private client;
    private spawning;
    private readonly ownsClient;
    private readonly options;
    private fold;
    private readonly summaries;
    private readonly queues;
    constructor(options?: SidecarSessionStoreOptions);
    private ready;
    /** Shut down the sidecar if this store spawned it. */
    dispose(): Promise<void>;
    [Symbol.asyncDispose](): Promise<void>;
    private folder;
    /** `fn` after the calls queued before it on `name` (the fold reads what the last append left). */
    private inTurn;
    append(key: SessionKey, entries: SessionStoreEntry[]): Promise<void>;
    load(key: SessionKey): Promise<SessionStoreEntry[] | null>;
    listSessions(projectKey: string): Promise<Array<{
        sessionId: string;
        mtime: number;
    }>>;
    listSessionSummaries(projectKey: string): Promise<SessionSummaryEntry[]>;
    delete(key: SessionKey): Promise<void>;
    listSubkeys(key: {
        projectKey: string;
        sessionId: string;
    }): Promise<string[]>;
}
