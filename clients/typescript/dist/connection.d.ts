/**
 * The JSON-RPC 2.0 connection under `SidecarClient`: LSP framing on a pair of
 * streams, requests matched by id, notifications, `$/progress`, cancellation.
 *
 * Why our own and not vscode-jsonrpc (which the client used before): the client
 * must settle every call whatever the sidecar answers, and vscode-jsonrpc gives
 * no hold on the cases that left calls waiting: an error answered with
 * `id: null`, a frame over the sidecar's limit, a value `JSON.stringify`
 * cannot encode (its writer reported those as a closed connection). It is also
 * CommonJS that `require`s Node's built-ins, which an esbuild ESM bundle cannot
 * run (`Dynamic require of "util"`). This module imports only `node:` modules.
 */
import type { Readable, Writable } from "node:stream";
/** The sidecar's frame limit (sidecar/rpc/framing.py MAX_MESSAGE_BYTES): a larger frame is refused unread. */
export declare const MAX_MESSAGE_BYTES: number;
/** Something to stop listening with. */
export interface Disposable {
    dispose(): void;
}
/** Subscribe a listener; dispose the result to unsubscribe. */
export type Event<T> = (listener: (value: T) => void) => Disposable;
/** A minimal multi-listener event source. */
export declare class Emitter<T> {
    private readonly listeners;
    readonly event: Event<T>;
    fire(value: T): void;
    get size(): number;
}
/** An error object from the other side (or made here for a call that could not be sent). */
export declare class ResponseError extends Error {
    readonly code: number;
    readonly data?: unknown | undefined;
    constructor(code: number, message: string, data?: unknown | undefined);
}
/** Why the connection ended, as given to `onClose`. */
export declare class ConnectionEnded extends Error {
    name: string;
}
export type RequestId = number | string;
export type RequestHandler = (params: any, signal: AbortSignal) => unknown;
/**
 * One JSON-RPC connection. `input` is what the other side writes, `output`
 * what it reads. Every call settles exactly once: with its answer, with the
 * encoder's error or the payload-too-large error before anything is sent, with
 * an error the sidecar could not attach to an id (see `settleUnaddressed`),
 * or with the closed error when the connection ends.
 */
export declare class Connection {
    private readonly output;
    private nextId;
    private readonly pending;
    private readonly notificationHandlers;
    private readonly requestHandlers;
    private readonly progressHandlers;
    private readonly serving;
    private readonly unhandledProgressEmitter;
    private readonly protocolErrorEmitter;
    private readonly closeEmitter;
    private buffered;
    private bufferedBytes;
    private closedWith;
    /** Makes the error that fails calls once the connection has ended. */
    closedError: (method: string) => Error;
    constructor(input: Readable, output: Writable);
    get closed(): boolean;
    /** Calls sent and not yet settled. */
    get pendingCount(): number;
    /**
     * Encode `message` as one frame. Throws the encoder's own error (a BigInt,
     * a cycle) or a payload-too-large `ResponseError`; nothing is written then.
     */
    private encode;
    private write;
    /**
     * Send a request; the promise settles exactly once. `signal` aborting sends
     * `$/cancelRequest` and calls `onAbort` (the client decides how long to wait
     * for the sidecar's answer before settling it itself, via `settle`).
     */
    sendRequest(method: string, params?: unknown, hooks?: {
        onSent?: (id: number) => void;
    }): Promise<unknown>;
    /** Settle a pending call from outside (an abort past its grace); a later answer to it is dropped. */
    settle(id: number, error: unknown): boolean;
    /** Send a notification. Throws the encoder's error, payload-too-large, or the closed error. */
    sendNotification(method: string, params?: unknown): void;
    /** Send `$/cancelRequest` for a call of ours (quietly: the connection may be gone). */
    cancel(id: number): void;
    onNotification(method: string, listener: (params: any) => void): Disposable;
    onRequest(method: string, handler: RequestHandler): Disposable;
    onProgress(token: RequestId, listener: (value: any) => void): Disposable;
    /** `$/progress` for a token nobody listens to. */
    get onUnhandledProgress(): Event<{
        token: RequestId;
        value: unknown;
    }>;
    /** An error answer no pending call could be given (see `settleUnaddressed`). */
    get onProtocolError(): Event<ResponseError>;
    get onClose(): Event<ConnectionEnded>;
    private receive;
    private dispatch;
    /**
     * An error answered with `id: null`: the sidecar could not read the id of a
     * frame (it recovers the id wherever it can be read, and this client writes
     * it first in every frame, so this is rare). The frame is one of the calls
     * still pending. It settles, with this error:
     *  1. the oldest pending call whose frame holds a lone surrogate escape (the
     *     one thing a sidecar may fail to read in a frame this client encoded), else
     *  2. the pending call, when exactly one is in flight.
     * With several in flight and none suspect nothing can tell which it was: the
     * error goes to `onProtocolError` and the calls stay pending (an AbortSignal
     * or `timeoutMs` bounds them).
     */
    private settleUnaddressed;
    private notify;
    private serve;
    /**
     * The streams ended: nothing more can be sent or answered. Pending calls and
     * the requests we serve wait for `failPending` (the owner first learns how
     * the process ended, so the error can say it).
     */
    end(reason: string): void;
    /** Why the connection ended, once it has. */
    get endReason(): string | undefined;
    /** Fail every pending call with `closedError(method)`, and abort the requests we serve. */
    failPending(): void;
    /** Stop writing (ends `output`). */
    endOutput(): void;
}
