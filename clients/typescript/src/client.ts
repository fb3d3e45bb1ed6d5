import { spawn as spawnProcess, type ChildProcess } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { Connection, Emitter, ResponseError, type Disposable, type Event } from "./connection.js";
import { openSocket } from "./server.js";
import { ConnectionClosedError, protocolMajor, ProtocolVersionError, RequestCancelledError, SidecarError } from "./errors.js";
import {
  ErrorCodes,
  PROTOCOL_VERSION,
  SessionMethods,
  type CallOptions,
  type ClientInfo,
  type InitializeResult,
  type MethodName,
  type ParamsOf,
  type ProgressParams,
  type ResultOf,
  type ServerNotifications,
  type ServerRequests,
  type SidecarSettings,
} from "./protocol.js";

export const CLIENT_NAME = "@session-sidecar/client";
export const CLIENT_VERSION = "0.1.0";

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
export type SummarizeHandler = (
  params: SummarizeParams,
  context: { signal: AbortSignal },
) => Promise<SummarizeResult | string> | SummarizeResult | string;

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
export const WORK_DONE_PROGRESS_CREATE = "window/workDoneProgress/create";

const STDERR_KEEP = 64 * 1024;
const JSONRPC_METHOD_NOT_FOUND = -32601;
const JSONRPC_INTERNAL_ERROR = -32603;

/**
 * A connection to one session-sidecar process, initialized and ready.
 *
 * Every session method of the protocol is a typed method (`session/x` ->
 * `client.x(params, { signal, onProgress })`); `request` sends any method by
 * name. `dispose()` shuts the sidecar down (and kills it if it does not exit
 * in time).
 */
export class SidecarClient extends SessionMethods implements AsyncDisposable {
  /** The underlying JSON-RPC connection (raw notifications, `onUnhandledProgress`, `onProtocolError`). */
  readonly connection: Connection;
  /** The sidecar process, when this client spawned it. */
  readonly process: ChildProcess | undefined;
  private _initializeResult: InitializeResult | undefined;
  private readonly options: ClientOptions;
  private readonly closeController = new AbortController();
  private readonly closeEmitter = new Emitter<ConnectionClosedError>();
  private readonly serverProgressEmitter = new Emitter<ServerProgress>();
  private closedError: ConnectionClosedError | undefined;
  private disposing: Promise<number | null> | undefined;
  private closing = false;
  private shutDown = false;
  private stderrTail = "";
  private tokenCount = 0;
  private readonly tokenPrefix = `ts-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private readonly exited: Promise<void>;

  private constructor(
    input: Readable,
    output: Writable,
    options: ClientOptions,
    child?: ChildProcess,
  ) {
    super();
    this.options = options;
    this.process = child;
    this.connection = new Connection(input, output);
    this.connection.closedError = (method) => this.closedFor(method);
    if (child) {
      child.stderr?.setEncoding("utf8");
      child.stderr?.on("data", (chunk: string) => {
        this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_KEEP);
      });
      child.once("exit", (code, signal) => {
        this.exitInfo = { code, signal };
      });
      // "close": exited, and its stdout and stderr are drained (the log is complete).
      this.exited = new Promise((resolve) => {
        child.once("close", (code, signal) => {
          this.exitInfo ??= { code, signal };
          resolve();
        });
      });
      child.stdin?.on("error", () => {}); // EPIPE after the child died: reported through the close path
      child.on("error", () => {}); // a failed kill(): the close path and the dispose timeout cover it
      child.once("exit", () => this.markClosed());
    } else {
      this.exited = Promise.resolve();
    }
    this.connection.onClose(() => this.markClosed());
    this.connection.onRequest("session/summarize", (params: SummarizeParams, signal: AbortSignal) =>
      this.answerSummarize(params, signal),
    );
    // LSP's way for the server to report work nobody asked for (autoCompact): accept
    // the token and pass its $/progress on to onServerProgress.
    this.connection.onRequest(WORK_DONE_PROGRESS_CREATE, (params: { token: ProgressToken }) => {
      const token = params.token;
      const subscription = this.connection.onProgress(token, (value: WorkDoneProgress) => {
        this.serverProgressEmitter.fire({ token, value });
        if (value.kind === "end") subscription.dispose();
      });
      return null;
    });
  }

  // -- starting --------------------------------------------------------------------

  /** Spawn `session-sidecar`, initialize it and return the ready client. */
  static async spawn(options: SpawnOptions = {}): Promise<SidecarClient> {
    const [command, ...leading] =
      typeof options.command === "string" || options.command === undefined
        ? [options.command ?? (process.env.SESSION_SIDECAR_BIN || "session-sidecar")]
        : options.command;
    if (command === undefined) throw new TypeError("SpawnOptions.command is an empty list");
    const args = [...leading, ...(options.args ?? [])];
    if (options.root !== undefined) args.push("--root", options.root);
    const stderr = options.stderr ?? "pipe";
    const child = spawnProcess(command, args, {
      stdio: ["pipe", "pipe", stderr],
      env: options.env,
      cwd: options.cwd,
      windowsHide: true,
    });
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", (error: NodeJS.ErrnoException) => {
        const hint = error.code === "ENOENT" ? `; install session-sidecar or pass its path as \`command\`` : "";
        reject(
          new ConnectionClosedError(`could not start ${command}: ${error.message}${hint}`, { cause: error }),
        );
      });
    });
    const client = new SidecarClient(child.stdout!, child.stdin!, options, child);
    try {
      await client.initialize();
    } catch (error) {
      await client.dispose({ timeoutMs: 1000 });
      throw error;
    }
    return client;
  }

  /**
   * Attach to a sidecar over given streams (`input`: the sidecar's output,
   * `output`: its input), initialize it and return the ready client.
   * `dispose()` sends shutdown and exit and ends `output`.
   */
  static async connect(input: Readable, output: Writable, options: ClientOptions = {}): Promise<SidecarClient> {
    const client = new SidecarClient(input, output, options);
    try {
      await client.initialize();
    } catch (error) {
      await client.dispose({ timeoutMs: 1000 });
      throw error;
    }
    return client;
  }

  /**
   * Attach to a sidecar serving a unix socket (`serve --socket PATH`, or
   * `SidecarServer.start`), waiting up to `waitMs` (default 5000) for the
   * socket to accept, then initialize. `dispose()` ends this connection only:
   * the server goes on serving its other clients.
   */
  static async connectSocket(path: string, options: ClientOptions & { waitMs?: number } = {}): Promise<SidecarClient> {
    const socket = await openSocket(path, options.waitMs);
    return SidecarClient.connect(socket, socket, options);
  }

  private async initialize(): Promise<void> {
    const params = {
      clientInfo: this.options.clientInfo ?? { name: CLIENT_NAME, version: CLIENT_VERSION },
      protocolVersion: PROTOCOL_VERSION,
      ...(this.options.sessionRoot !== undefined ? { sessionRoot: this.options.sessionRoot } : {}),
      ...(this.options.settings !== undefined ? { settings: this.options.settings } : {}),
      ...(this.options.token !== undefined ? { token: this.options.token } : {}),
    };
    let result: InitializeResult;
    try {
      result = await this.request("initialize", params);
    } catch (error) {
      // A sidecar of another major refuses our version and says which it speaks.
      if (error instanceof SidecarError && error.data.field === "protocolVersion" && typeof error.data.supported === "string") {
        throw new ProtocolVersionError(error.data.supported, PROTOCOL_VERSION);
      }
      throw error;
    }
    if (typeof result.protocolVersion !== "string" || protocolMajor(result.protocolVersion) !== protocolMajor(PROTOCOL_VERSION)) {
      throw new ProtocolVersionError(String(result.protocolVersion), PROTOCOL_VERSION);
    }
    this._initializeResult = result;
    this.connection.sendNotification("initialized", {});
  }

  // -- what initialize said -------------------------------------------------------------

  /** initialize's result: server info, capabilities, the sessions root and the effective settings. */
  get initializeResult(): InitializeResult {
    if (!this._initializeResult) throw new Error("the client is not initialized");
    return this._initializeResult;
  }

  get serverInfo(): InitializeResult["serverInfo"] {
    return this.initializeResult.serverInfo;
  }

  get capabilities(): InitializeResult["capabilities"] {
    return this.initializeResult.capabilities;
  }

  get sessionRoot(): string {
    return this.initializeResult.sessionRoot;
  }

  /** The last 64 KiB of the sidecar's stderr (when spawned with `stderr: "pipe"`). */
  get stderr(): string {
    return this.stderrTail;
  }

  /** True once the sidecar has exited or its streams closed. */
  get closed(): boolean {
    return this.closedError !== undefined;
  }

  // -- events --------------------------------------------------------------------------

  // One typed handler per server notification (onDidAppend, onDidCompact, onDidReload,
  // onDidSetLabel, ...) comes from SessionMethods (generated from the schema):
  // client.onDidAppend(({ sessionId, entries }) => ...) returns a Disposable.

  /**
   * Progress of work the sidecar started by itself (an autoCompact run, announced
   * with `window/workDoneProgress/create`): begin, reports, end, then `onDidCompact`.
   */
  get onServerProgress(): Event<ServerProgress> {
    return this.serverProgressEmitter.event;
  }

  /** The connection closed (the sidecar exited, or `dispose()` finished). */
  get onClose(): Event<ConnectionClosedError> {
    return this.closeEmitter.event;
  }

  /**
   * Listen to a server notification by name: typed for the schema's names; any
   * other string is the escape hatch (params unknown). Prefer the typed
   * `onDidAppend(...)` and its siblings: a misspelt one does not compile.
   */
  onNotification<N extends keyof ServerNotifications>(method: N, listener: (params: ServerNotifications[N]) => void): Disposable;
  onNotification(method: string, listener: (params: unknown) => void): Disposable;
  onNotification(method: string, listener: (params: any) => void): Disposable {
    return this.connection.onNotification(method, listener);
  }

  /**
   * Send a notification (`$/cancelRequest`, `exit`, ...). Throws
   * `ConnectionClosedError` once the connection is closed, and the encoder's
   * error or a payload-too-large `SidecarError` for what cannot be sent.
   */
  notify(method: string, params?: unknown): void {
    try {
      this.connection.sendNotification(method, params ?? undefined);
    } catch (error) {
      throw this.translate(error, method, undefined);
    }
  }

  // -- calls ---------------------------------------------------------------------------

  /**
   * Send `method` and wait for its result. `options.onProgress` gets this
   * call's `$/progress` values (a `workDoneToken` is added to the params);
   * `options.signal` cancels it with `$/cancelRequest`.
   */
  async request<M extends MethodName>(method: M, params: ParamsOf<M>, options: CallOptions = {}): Promise<ResultOf<M>> {
    const { signal, onProgress } = options;
    if (this.closedError) throw this.closedFor(method);
    if (signal?.aborted) {
      throw new RequestCancelledError(`${method} was aborted before it was sent`, {}, method, { cause: signal.reason });
    }
    let sent: unknown = params;
    let progress: Disposable | undefined;
    if (onProgress) {
      const token = `${this.tokenPrefix}-${++this.tokenCount}`;
      sent = { ...((params as object | null) ?? {}), workDoneToken: token };
      progress = this.connection.onProgress(token, onProgress);
    }
    let id: number | undefined;
    let grace: ReturnType<typeof setTimeout> | undefined;
    const graceMs = this.options.cancelGraceMs ?? 500;
    // Ask the sidecar to stop; if it has not answered within the grace, settle the call here.
    const onAbort = () => {
      if (id === undefined) return;
      const callId = id;
      this.connection.cancel(callId);
      grace = setTimeout(() => {
        this.connection.settle(
          callId,
          new RequestCancelledError(
            `${method} was aborted; the sidecar did not confirm within ${graceMs} ms that it stopped (it may still finish)`,
            { confirmed: false },
            method,
            { cause: signal?.reason },
          ),
        );
      }, graceMs);
    };
    try {
      const answer = this.connection.sendRequest(method, sent ?? undefined, { onSent: (sentId) => (id = sentId) });
      signal?.addEventListener("abort", onAbort, { once: true });
      const result = (await answer) as ResultOf<M>;
      if (method === "shutdown") this.shutDown = true;
      return result;
    } catch (error) {
      throw this.translate(error, method, signal);
    } finally {
      if (grace) clearTimeout(grace);
      signal?.removeEventListener("abort", onAbort);
      progress?.dispose();
    }
  }

  private translate(error: unknown, method: string, signal: AbortSignal | undefined): Error {
    if (error instanceof SidecarError) return error;
    if (error instanceof ResponseError) {
      if (error.code === ErrorCodes.requestCancelled) {
        return new RequestCancelledError(error.message, error.data, method, { cause: signal?.reason });
      }
      return new SidecarError(error.code, error.message, error.data, method);
    }
    // The encoder's own error (a BigInt, a cycle) stays what it is.
    return error instanceof Error ? error : new Error(String(error));
  }

  private closedFor(method: string, cause?: unknown): ConnectionClosedError {
    const base = this.closedError ?? this.makeClosedError();
    return new ConnectionClosedError(`${method}: ${base.message}`, {
      method,
      exitCode: base.exitCode,
      signal: base.signal,
      stderr: base.stderr,
      cause,
    });
  }

  private makeClosedError(): ConnectionClosedError {
    const exit = this.exitInfo;
    let how = "the connection to the sidecar closed";
    if (exit) how = exit.signal ? `the sidecar was killed by ${exit.signal}` : `the sidecar exited with code ${exit.code}`;
    if (this.disposing) how += " (the client was disposed)";
    const tail = this.stderrTail.trim().split("\n").slice(-5).join("\n");
    return new ConnectionClosedError(tail && !this.disposing ? `${how}; its log ends:\n${tail}` : how, {
      exitCode: exit?.code ?? null,
      signal: exit?.signal ?? null,
      stderr: this.stderrTail,
    });
  }

  /** The process exited or the streams closed: fail everything still waiting. */
  private markClosed(): void {
    if (this.closing) return;
    this.closing = true;
    // Output usually ends just before the process does: wait (briefly) for its
    // exit code and the rest of its log, so the error can say why.
    const exited = this.process ? withTimeout(this.exited, 2000).catch(() => {}) : Promise.resolve();
    void exited.then(() => this.finishClose());
  }

  private finishClose(): void {
    if (this.closedError) return;
    this.closedError = this.makeClosedError();
    this.closeController.abort(this.closedError); // first: a summarize handler's signal says why
    this.connection.end(this.closedError.message);
    this.connection.failPending(); // each with closedFor(method): a ConnectionClosedError
    this.closeEmitter.fire(this.closedError);
  }

  private async answerSummarize(params: SummarizeParams, cancelled: AbortSignal): Promise<SummarizeResult | ResponseError> {
    const handler = this.options.summarize;
    if (!handler) {
      return new ResponseError(
        JSONRPC_METHOD_NOT_FOUND,
        "this client has no summarize handler (pass `summarize` to SidecarClient.spawn/connect to use provider \"client\")",
      );
    }
    const controller = new AbortController();
    const abortOnCancel = () => controller.abort(new Error("session/summarize was cancelled by the sidecar"));
    cancelled.addEventListener("abort", abortOnCancel, { once: true });
    const onClose = () => controller.abort(this.closeController.signal.reason);
    this.closeController.signal.addEventListener("abort", onClose, { once: true });
    try {
      const answer = await handler(params, { signal: controller.signal });
      return typeof answer === "string" ? { text: answer } : answer;
    } catch (error) {
      if (error instanceof ResponseError) return error;
      if (error instanceof SidecarError) return new ResponseError(error.code, error.message, error.data);
      const message = error instanceof Error ? error.message : String(error);
      return new ResponseError(JSONRPC_INTERNAL_ERROR, message || "the summarize handler failed");
    } finally {
      cancelled.removeEventListener("abort", abortOnCancel);
      this.closeController.signal.removeEventListener("abort", onClose);
    }
  }

  // -- closing -------------------------------------------------------------------------

  /**
   * Shut the sidecar down: `shutdown` (it finishes calls in flight and closes
   * every session), `exit`, end its input, and wait for it to exit; past
   * `timeoutMs` (default `shutdownTimeoutMs`, 5000) the process is killed.
   * Resolves to the exit code (null when attached to streams or killed).
   * Safe to call more than once.
   */
  dispose(options: { timeoutMs?: number } = {}): Promise<number | null> {
    this.disposing ??= this.doDispose(options.timeoutMs ?? this.options.shutdownTimeoutMs ?? 5000);
    return this.disposing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }

  private async doDispose(timeoutMs: number): Promise<number | null> {
    const deadline = Date.now() + timeoutMs;
    if (!this.closedError && !this.connection.closed && this._initializeResult) {
      try {
        if (!this.shutDown) await withTimeout(this.connection.sendRequest("shutdown"), timeoutMs);
        this.connection.sendNotification("exit");
      } catch {
        // wedged, or already gone: the process is killed below
      }
    }
    this.connection.endOutput();
    const child = this.process;
    if (child) {
      child.stdin?.end();
      if (!this.exitInfo) {
        const exitedInTime = await withTimeout(this.exited, Math.max(0, deadline - Date.now())).then(
          () => true,
          () => false,
        );
        if (!exitedInTime) {
          child.kill("SIGKILL");
          await this.exited;
        }
      }
    }
    this.finishClose();
    return this.exitInfo?.code ?? null;
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
