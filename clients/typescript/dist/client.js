import { spawn as spawnProcess } from "node:child_process";
import { Connection, Emitter, ResponseError } from "./connection.js";
import { openSocket } from "./server.js";
import { ConnectionClosedError, protocolMajor, ProtocolVersionError, RequestCancelledError, SidecarError } from "./errors.js";
import { ErrorCodes, PROTOCOL_VERSION, SessionMethods, } from "./protocol.js";
export const CLIENT_NAME = "@session-sidecar/client";
export const CLIENT_VERSION = "0.1.0";
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
export class SidecarClient extends SessionMethods {
    /** The underlying JSON-RPC connection (raw notifications, `onUnhandledProgress`, `onProtocolError`). */
    connection;
    /** The sidecar process, when this client spawned it. */
    process;
    _initializeResult;
    options;
    closeController = new AbortController();
    closeEmitter = new Emitter();
    serverProgressEmitter = new Emitter();
    closedError;
    disposing;
    closing = false;
    shutDown = false;
    stderrTail = "";
    tokenCount = 0;
    tokenPrefix = `ts-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    exitInfo;
    exited;
    constructor(input, output, options, child) {
        super();
        this.options = options;
        this.process = child;
        this.connection = new Connection(input, output);
        this.connection.closedError = (method) => this.closedFor(method);
        if (child) {
            child.stderr?.setEncoding("utf8");
            child.stderr?.on("data", (chunk) => {
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
            child.stdin?.on("error", () => { }); // EPIPE after the child died: reported through the close path
            child.on("error", () => { }); // a failed kill(): the close path and the dispose timeout cover it
            child.once("exit", () => this.markClosed());
        }
        else {
            this.exited = Promise.resolve();
        }
        this.connection.onClose(() => this.markClosed());
        this.connection.onRequest("session/summarize", (params, signal) => this.answerSummarize(params, signal));
        // LSP's way for the server to report work nobody asked for (autoCompact): accept
        // the token and pass its $/progress on to onServerProgress.
        this.connection.onRequest(WORK_DONE_PROGRESS_CREATE, (params) => {
            const token = params.token;
            const subscription = this.connection.onProgress(token, (value) => {
                this.serverProgressEmitter.fire({ token, value });
                if (value.kind === "end")
                    subscription.dispose();
            });
            return null;
        });
    }
    // -- starting --------------------------------------------------------------------
    /** Spawn `session-sidecar`, initialize it and return the ready client. */
    static async spawn(options = {}) {
        const [command, ...leading] = typeof options.command === "string" || options.command === undefined
            ? [options.command ?? (process.env.SESSION_SIDECAR_BIN || "session-sidecar")]
            : options.command;
        if (command === undefined)
            throw new TypeError("SpawnOptions.command is an empty list");
        const args = [...leading, ...(options.args ?? [])];
        if (options.root !== undefined)
            args.push("--root", options.root);
        const stderr = options.stderr ?? "pipe";
        const child = spawnProcess(command, args, {
            stdio: ["pipe", "pipe", stderr],
            env: options.env,
            cwd: options.cwd,
            windowsHide: true,
        });
        await new Promise((resolve, reject) => {
            child.once("spawn", resolve);
            child.once("error", (error) => {
                const hint = error.code === "ENOENT" ? `; install session-sidecar or pass its path as \`command\`` : "";
                reject(new ConnectionClosedError(`could not start ${command}: ${error.message}${hint}`, { cause: error }));
            });
        });
        const client = new SidecarClient(child.stdout, child.stdin, options, child);
        try {
            await client.initialize();
        }
        catch (error) {
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
    static async connect(input, output, options = {}) {
        const client = new SidecarClient(input, output, options);
        try {
            await client.initialize();
        }
        catch (error) {
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
    static async connectSocket(path, options = {}) {
        const socket = await openSocket(path, options.waitMs);
        return SidecarClient.connect(socket, socket, options);
    }
    async initialize() {
        const params = {
            clientInfo: this.options.clientInfo ?? { name: CLIENT_NAME, version: CLIENT_VERSION },
            protocolVersion: PROTOCOL_VERSION,
            ...(this.options.sessionRoot !== undefined ? { sessionRoot: this.options.sessionRoot } : {}),
            ...(this.options.settings !== undefined ? { settings: this.options.settings } : {}),
            ...(this.options.token !== undefined ? { token: this.options.token } : {}),
        };
        let result;
        try {
            result = await this.request("initialize", params);
        }
        catch (error) {
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
    get initializeResult() {
        if (!this._initializeResult)
            throw new Error("the client is not initialized");
        return this._initializeResult;
    }
    get serverInfo() {
        return this.initializeResult.serverInfo;
    }
    get capabilities() {
        return this.initializeResult.capabilities;
    }
    get sessionRoot() {
        return this.initializeResult.sessionRoot;
    }
    /** The last 64 KiB of the sidecar's stderr (when spawned with `stderr: "pipe"`). */
    get stderr() {
        return this.stderrTail;
    }
    /** True once the sidecar has exited or its streams closed. */
    get closed() {
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
    get onServerProgress() {
        return this.serverProgressEmitter.event;
    }
    /** The connection closed (the sidecar exited, or `dispose()` finished). */
    get onClose() {
        return this.closeEmitter.event;
    }
    onNotification(method, listener) {
        return this.connection.onNotification(method, listener);
    }
    /**
     * Send a notification (`$/cancelRequest`, `exit`, ...). Throws
     * `ConnectionClosedError` once the connection is closed, and the encoder's
     * error or a payload-too-large `SidecarError` for what cannot be sent.
     */
    notify(method, params) {
        try {
            this.connection.sendNotification(method, params ?? undefined);
        }
        catch (error) {
            throw this.translate(error, method, undefined);
        }
    }
    // -- calls ---------------------------------------------------------------------------
    /**
     * Send `method` and wait for its result. `options.onProgress` gets this
     * call's `$/progress` values (a `workDoneToken` is added to the params);
     * `options.signal` cancels it with `$/cancelRequest`.
     */
    async request(method, params, options = {}) {
        const { signal, onProgress } = options;
        if (this.closedError)
            throw this.closedFor(method);
        if (signal?.aborted) {
            throw new RequestCancelledError(`${method} was aborted before it was sent`, {}, method, { cause: signal.reason });
        }
        let sent = params;
        let progress;
        if (onProgress) {
            const token = `${this.tokenPrefix}-${++this.tokenCount}`;
            sent = { ...(params ?? {}), workDoneToken: token };
            progress = this.connection.onProgress(token, onProgress);
        }
        let id;
        let grace;
        const graceMs = this.options.cancelGraceMs ?? 500;
        // Ask the sidecar to stop; if it has not answered within the grace, settle the call here.
        const onAbort = () => {
            if (id === undefined)
                return;
            const callId = id;
            this.connection.cancel(callId);
            grace = setTimeout(() => {
                this.connection.settle(callId, new RequestCancelledError(`${method} was aborted; the sidecar did not confirm within ${graceMs} ms that it stopped (it may still finish)`, { confirmed: false }, method, { cause: signal?.reason }));
            }, graceMs);
        };
        try {
            const answer = this.connection.sendRequest(method, sent ?? undefined, { onSent: (sentId) => (id = sentId) });
            signal?.addEventListener("abort", onAbort, { once: true });
            const result = (await answer);
            if (method === "shutdown")
                this.shutDown = true;
            return result;
        }
        catch (error) {
            throw this.translate(error, method, signal);
        }
        finally {
            if (grace)
                clearTimeout(grace);
            signal?.removeEventListener("abort", onAbort);
            progress?.dispose();
        }
    }
    translate(error, method, signal) {
        if (error instanceof SidecarError)
            return error;
        if (error instanceof ResponseError) {
            if (error.code === ErrorCodes.requestCancelled) {
                return new RequestCancelledError(error.message, error.data, method, { cause: signal?.reason });
            }
            return new SidecarError(error.code, error.message, error.data, method);
        }
        // The encoder's own error (a BigInt, a cycle) stays what it is.
        return error instanceof Error ? error : new Error(String(error));
    }
    closedFor(method, cause) {
        const base = this.closedError ?? this.makeClosedError();
        return new ConnectionClosedError(`${method}: ${base.message}`, {
            method,
            exitCode: base.exitCode,
            signal: base.signal,
            stderr: base.stderr,
            cause,
        });
    }
    makeClosedError() {
        const exit = this.exitInfo;
        let how = "the connection to the sidecar closed";
        if (exit)
            how = exit.signal ? `the sidecar was killed by ${exit.signal}` : `the sidecar exited with code ${exit.code}`;
        if (this.disposing)
            how += " (the client was disposed)";
        const tail = this.stderrTail.trim().split("\n").slice(-5).join("\n");
        return new ConnectionClosedError(tail && !this.disposing ? `${how}; its log ends:\n${tail}` : how, {
            exitCode: exit?.code ?? null,
            signal: exit?.signal ?? null,
            stderr: this.stderrTail,
        });
    }
    /** The process exited or the streams closed: fail everything still waiting. */
    markClosed() {
        if (this.closing)
            return;
        this.closing = true;
        // Output usually ends just before the process does: wait (briefly) for its
        // exit code and the rest of its log, so the error can say why.
        const exited = this.process ? withTimeout(this.exited, 2000).catch(() => { }) : Promise.resolve();
        void exited.then(() => this.finishClose());
    }
    finishClose() {
        if (this.closedError)
            return;
        this.closedError = this.makeClosedError();
        this.closeController.abort(this.closedError); // first: a summarize handler's signal says why
        this.connection.end(this.closedError.message);
        this.connection.failPending(); // each with closedFor(method): a ConnectionClosedError
        this.closeEmitter.fire(this.closedError);
    }
    async answerSummarize(params, cancelled) {
        const handler = this.options.summarize;
        if (!handler) {
            return new ResponseError(JSONRPC_METHOD_NOT_FOUND, "this client has no summarize handler (pass `summarize` to SidecarClient.spawn/connect to use provider \"client\")");
        }
        const controller = new AbortController();
        const abortOnCancel = () => controller.abort(new Error("session/summarize was cancelled by the sidecar"));
        cancelled.addEventListener("abort", abortOnCancel, { once: true });
        const onClose = () => controller.abort(this.closeController.signal.reason);
        this.closeController.signal.addEventListener("abort", onClose, { once: true });
        try {
            const answer = await handler(params, { signal: controller.signal });
            return typeof answer === "string" ? { text: answer } : answer;
        }
        catch (error) {
            if (error instanceof ResponseError)
                return error;
            if (error instanceof SidecarError)
                return new ResponseError(error.code, error.message, error.data);
            const message = error instanceof Error ? error.message : String(error);
            return new ResponseError(JSONRPC_INTERNAL_ERROR, message || "the summarize handler failed");
        }
        finally {
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
    dispose(options = {}) {
        this.disposing ??= this.doDispose(options.timeoutMs ?? this.options.shutdownTimeoutMs ?? 5000);
        return this.disposing;
    }
    async [Symbol.asyncDispose]() {
        await this.dispose();
    }
    async doDispose(timeoutMs) {
        const deadline = Date.now() + timeoutMs;
        if (!this.closedError && !this.connection.closed && this._initializeResult) {
            try {
                if (!this.shutDown)
                    await withTimeout(this.connection.sendRequest("shutdown"), timeoutMs);
                this.connection.sendNotification("exit");
            }
            catch {
                // wedged, or already gone: the process is killed below
            }
        }
        this.connection.endOutput();
        const child = this.process;
        if (child) {
            child.stdin?.end();
            if (!this.exitInfo) {
                const exitedInTime = await withTimeout(this.exited, Math.max(0, deadline - Date.now())).then(() => true, () => false);
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
function withTimeout(promise, ms) {
    return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
        promise.then((value) => {
            clearTimeout(timer);
            resolve(value);
        }, (error) => {
            clearTimeout(timer);
            reject(error);
        });
    });
}
