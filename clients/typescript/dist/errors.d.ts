import { type ErrorKind, type JsonObject } from "./protocol.js";
/** Client-side code of `ConnectionClosedError` (the sidecar exited or the streams closed); -32099 as in the Python client. */
export declare const CONNECTION_CLOSED = -32099;
/**
 * An error answer from the sidecar, or a failure to get one.
 *
 * `code` is the JSON-RPC error code, `data` the error's `data` object
 * (`data.kind` names the error for programs, e.g. `"sessionNotFound"`;
 * `data.field` names the bad field of an `invalidParams`).
 */
export declare class SidecarError extends Error {
    name: string;
    readonly code: number;
    readonly data: JsonObject;
    /** The method whose call failed, when there is one. */
    readonly method: string | undefined;
    constructor(code: number, message: string, data?: unknown, method?: string, options?: {
        cause?: unknown;
    });
    /** `data.kind` (e.g. `"sessionNotFound"`); falls back to the kind of a known code. */
    get kind(): ErrorKind | (string & {}) | undefined;
    /** The error object as it came over the wire. */
    toJSON(): {
        code: number;
        message: string;
        data: JsonObject;
    };
}
/**
 * The call was cancelled (its AbortSignal fired) and the sidecar stopped it
 * before it changed anything (`-32800`, `requestCancelled`). Its `name` is
 * `"AbortError"`, as for `fetch`.
 */
export declare class RequestCancelledError extends SidecarError {
    name: string;
    constructor(message: string, data?: unknown, method?: string, options?: {
        cause?: unknown;
    });
}
/** The sidecar exited, or its streams closed, before the call was answered. */
export declare class ConnectionClosedError extends SidecarError {
    name: string;
    /** The process's exit code, when the client spawned it and it has exited. */
    readonly exitCode: number | null;
    /** The signal that ended the process, if any. */
    readonly signal: NodeJS.Signals | null;
    /** The end of the sidecar's stderr (its log), when the client captured it. */
    readonly stderr: string;
    constructor(message: string, details?: {
        method?: string;
        exitCode?: number | null;
        signal?: NodeJS.Signals | null;
        stderr?: string;
        cause?: unknown;
    });
}
/** The major part of a protocolVersion ("1.0" -> "1"). */
export declare function protocolMajor(version: string): string;
/**
 * The sidecar speaks a protocol this client does not: their major versions
 * differ (PROTOCOL.md, Lifecycle). Thrown by `SidecarClient.spawn`/`connect`,
 * which then stop the sidecar.
 */
export declare class ProtocolVersionError extends Error {
    readonly serverVersion: string;
    readonly clientVersion: string;
    name: string;
    constructor(serverVersion: string, clientVersion: string);
}
