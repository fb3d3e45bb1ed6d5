import { type ChildProcess } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { Connection, type Disposable, type Event } from "./connection.js";
import { ConnectionClosedError } from "./errors.js";
import { SessionMethods, type CallOptions, type ClientInfo, type InitializeResult, type MethodName, type ParamsOf, type ProgressParams, type ResultOf, type ServerNotifications, type ServerRequests, type SidecarSettings } from "./protocol.js";
export declare const CLIENT_NAME = "@session-sidecar/client";
export declare const CLIENT_VERSION = "0.1.0";
export type SummarizeParams = ServerRequests["session/summarize"]["params"];
export type SummarizeResult = ServerRequests["session/summarize"]["result"];
export type DidCompactParams = ServerNotifications["session/didCompact"];
export type DidAppendParams = ServerNotifications["session/didAppend"];
export type DidReloadParams = ServerNotifications["session/didReload"];
export type WorkDoneProgress = ProgressParams["value"];
/**
 * Answers the sidecar's `session/summarize` request (compaction with
 * `provider: "client"`): the agent summarizes with its own model. Return the
 * summary (or `{ text }`); throw to fail the compaction (a message that reads
 * like a context overflow becomes a `contextOverflow` error on the server).
 * `signal` fires if the sidecar withdraws the request or the client closes.
 */
export type SummarizeHandler = (params: SummarizeParams, context: {
    signal: AbortSignal;
}) => Promise<SummarizeResult | string> | SummarizeResult | string;
export interface ClientOptions {
    /** Sent in initialize; default `{ name: "@session-sidecar/client", version }`. */
    clientInfo?: ClientInfo;
    /** Serve the sessions below this folder (initialize's `sessionRoot`). */
    sessionRoot?: string;
    /** Settings overrides sent in initialize (merged last over the sidecar's own). */
    settings?: SidecarSettings;
    /**
     * The token of a sidecar serving TCP (`serve --listen`, its `--token-file`), sent in initialize.
     * Without it, or with another, initialize fails with `unauthorized` (-33071) and the server hangs up.
     */
    token?: string;
    /** Answers `session/summarize` for compactions with `provider: "client"`. */
    summarize?: SummarizeHandler;
    /** How long `dispose()` waits for shutdown and for the process to exit before killing it (ms, default 5000). */
    shutdownTimeoutMs?: number;
    /**
     * After a call's signal aborts, how long to wait for the sidecar's answer to
     * `$/cancelRequest` (it stops at a safe point having written nothing, or had
     * finished) before the call rejects on its own with an unconfirmed
     * `RequestCancelledError` (`data.confirmed === false`); ms, default 500.
     */
    cancelGraceMs?: number;
}
export interface SpawnOptions extends ClientOptions {
    /**
     * What to run: the executable's path or name, or the program and its leading
     * arguments (`["uvx", "session-sidecar"]`); default `$SESSION_SIDECAR_BIN`,
     * else `session-sidecar` found on PATH.
     */
    command?: string | readonly string[];
    /** Arguments before ours (e.g. `["-m", "sidecar"]` when `command` is a Python interpreter). */
    args?: string[];
    /** `--root DIR`: the sessions root (else `$SESSION_SIDECAR_HOME`, else the user data dir). */
    root?: string;
    /** Environment of the process; default this process's. */
    env?: NodeJS.ProcessEnv;
    /** Working directory of the process. */
    cwd?: string;
    /**
     * The sidecar's log: `"pipe"` (default) keeps its last 64 KiB (`client.stderr`,
     * and in `ConnectionClosedError.stderr`), `"inherit"` shares ours, `"ignore"` drops it.
     */
    stderr?: "pipe" | "inherit" | "ignore";
}
/** A `$/progress` token: the client's own per call, or one the server created. */
export type ProgressToken = number | string;
/** Progress of work the sidecar started itself (see `onServerProgress`). */
export interface ServerProgress {
    token: ProgressToken;
    value: WorkDoneProgress;
}
/** LSP's request for a server-created progress token (not in schema.json's serverRequests). */
export declare const WORK_DONE_PROGRESS_CREATE = "window/workDoneProgress/create";
/**
 * A connection to one session-sidecar process, initialized and ready.
 *
 * Every session method of the protocol is a typed method (`session/x` ->
 * `client.x(params, { signal, onProgress })`); `request` sends any method by
 * name. `dispose()` shuts the sidecar down (and kills it if it does not exit
 * in time).
 */
export declare class SidecarClient extends SessionMethods implements AsyncDisposable {
    /** The underlying JSON-RPC connection (raw notifications, `onUnhandledProgress`, `onProtocolError`). */
    readonly connection: Connection;
    /** The sidecar process, when this client spawned it. */
    readonly process: ChildProcess | undefined;
    private _initializeResult;
    private readonly options;
    private readonly closeController;
    private readonly closeEmitter;
    private readonly serverProgressEmitter;
    private closedError;
    private disposing;
    private closing;
    private shutDown;
    private stderrTail;
    private tokenCount;
    private readonly tokenPrefix;
    private exitInfo;
    private readonly exited;
    private constructor();
    /** Spawn `session-sidecar`, initialize it and return the ready client. */
    static spawn(options?: SpawnOptions): Promise<SidecarClient>;
    /**
     * Attach to a sidecar over given streams (`input`: the sidecar's output,
     * `output`: its input), initialize it and return the ready client.
     * `dispose()` sends shutdown and exit and ends `output`.
     */
    static connect(input: Readable, output: Writable, options?: ClientOptions): Promise<SidecarClient>;
    /**
     * Attach to a sidecar serving a unix socket (`serve --socket PATH`, or
     * `SidecarServer.start`), waiting up to `waitMs` (default 5000) for the
     * socket to accept, then initialize. `dispose()` ends this connection only:
     * the server goes on serving its other clients.
     */
    static connectSocket(path: string, options?: ClientOptions & {
        waitMs?: number;
    }): Promise<SidecarClient>;
    private initialize;
    /** initialize's result: server info, capabilities, the sessions root and the effective settings. */
    get initializeResult(): InitializeResult;
    get serverInfo(): InitializeResult["serverInfo"];
    get capabilities(): InitializeResult["capabilities"];
    get sessionRoot(): string;
    /** The last 64 KiB of the sidecar's stderr (when spawned with `stderr: "pipe"`). */
    get stderr(): string;
    /** True once the sidecar has exited or its streams closed. */
    get closed(): boolean;
    /**
     * Progress of work the sidecar started by itself (an autoCompact run, announced
     * with `window/workDoneProgress/create`): begin, reports, end, then `onDidCompact`.
     */
    get onServerProgress(): Event<ServerProgress>;
    /** The connection closed (the sidecar exited, or `dispose()` finished). */
    get onClose(): Event<ConnectionClosedError>;
    /**
     * Listen to a server notification by name: typed for the schema's names; any
     * other string is the escape hatch (params unknown). Prefer the typed
     * `onDidAppend(...)` and its siblings: a misspelt one does not compile.
     */
    onNotification<N extends keyof ServerNotifications>(method: N, listener: (params: ServerNotifications[N]) => void): Disposable;
    onNotification(method: string, listener: (params: unknown) => void): Disposable;
    /**
     * Send a notification (`$/cancelRequest`, `exit`, ...). Throws
     * `ConnectionClosedError` once the connection is closed, and the encoder's
     * error or a payload-too-large `SidecarError` for what cannot be sent.
     */
    notify(method: string, params?: unknown): void;
    /**
     * Send `method` and wait for its result. `options.onProgress` gets this
     * call's `$/progress` values (a `workDoneToken` is added to the params);
     * `options.signal` cancels it with `$/cancelRequest`.
     */
    request<M extends MethodName>(method: M, params: ParamsOf<M>, options?: CallOptions): Promise<ResultOf<M>>;
    private translate;
    private closedFor;
    private makeClosedError;
    /** The process exited or the streams closed: fail everything still waiting. */
    private markClosed;
    private finishClose;
    private answerSummarize;
    /**
     * Shut the sidecar down: `shutdown` (it finishes calls in flight and closes
     * every session), `exit`, end its input, and wait for it to exit; past
     * `timeoutMs` (default `shutdownTimeoutMs`, 5000) the process is killed.
     * Resolves to the exit code (null when attached to streams or killed).
     * Safe to call more than once.
     */
    dispose(options?: {
        timeoutMs?: number;
    }): Promise<number | null>;
    [Symbol.asyncDispose](): Promise<void>;
    private doDispose;
}
