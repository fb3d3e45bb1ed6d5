/**
 * A socket sidecar many clients share: start `session-sidecar serve --socket PATH`
 * and wait until it says it is ready, or attach to one already running.
 *
 * Why: an agent and its observers (a UI, a second process watching the same
 * sessions) talk to one sidecar; starting it and knowing when to connect was
 * left to every author (a race against the socket file appearing).
 */
import { type ChildProcess } from "node:child_process";
import { type Socket } from "node:net";
export interface ServeOptions {
    /** The unix socket to serve on (`serve --socket PATH`). */
    socket: string;
    /** What to run, as `SpawnOptions.command`: default `$SESSION_SIDECAR_BIN`, else `session-sidecar` on PATH. */
    command?: string | readonly string[];
    /** `--root DIR`: the sessions root. */
    root?: string;
    /** More arguments after `serve` (e.g. `["--log-level", "info"]`). */
    args?: string[];
    env?: NodeJS.ProcessEnv;
    cwd?: string;
    /** How long to wait for "ready" (ms, default 15000). */
    readyTimeoutMs?: number;
}
/** A `session-sidecar serve --socket` process this program started. */
export declare class SidecarServer {
    readonly process: ChildProcess;
    /** The socket path clients connect to (`SidecarClient.connectSocket(server.socket)`). */
    readonly socket: string;
    private stderrTail;
    private readonly exited;
    private constructor();
    /** The end of the server's log. */
    get stderr(): string;
    /**
     * Start `session-sidecar serve --socket PATH` and resolve once it prints
     * `session-sidecar: ready` (the socket accepts connections). Rejects with a
     * `ConnectionClosedError` naming the exit and the log's end if it exits
     * first (the socket is in use, say), or past `readyTimeoutMs`.
     */
    static start(options: ServeOptions): Promise<SidecarServer>;
    /** Stop the server (SIGTERM: it closes every session and removes the socket); SIGKILL past `timeoutMs`. Resolves to its exit code. */
    stop(timeoutMs?: number): Promise<number | null>;
    [Symbol.asyncDispose](): Promise<void>;
}
/**
 * Open a connection to the unix socket at `path`, retrying while it does not
 * exist or refuses (a server still starting) until `waitMs` has passed.
 */
export declare function openSocket(path: string, waitMs?: number): Promise<Socket>;
