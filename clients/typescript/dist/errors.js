import { ErrorCodes } from "./protocol.js";
/** Client-side code of `ConnectionClosedError` (the sidecar exited or the streams closed); -32099 as in the Python client. */
export const CONNECTION_CLOSED = -32099;
/**
 * An error answer from the sidecar, or a failure to get one.
 *
 * `code` is the JSON-RPC error code, `data` the error's `data` object
 * (`data.kind` names the error for programs, e.g. `"sessionNotFound"`;
 * `data.field` names the bad field of an `invalidParams`).
 */
export class SidecarError extends Error {
    name = "SidecarError";
    code;
    data;
    /** The method whose call failed, when there is one. */
    method;
    constructor(code, message, data, method, options) {
        super(message, options);
        this.code = code;
        this.data = data !== null && typeof data === "object" && !Array.isArray(data) ? data : {};
        this.method = method;
    }
    /** `data.kind` (e.g. `"sessionNotFound"`); falls back to the kind of a known code. */
    get kind() {
        if (typeof this.data.kind === "string")
            return this.data.kind;
        const entry = Object.entries(ErrorCodes).find(([, code]) => code === this.code);
        return entry?.[0];
    }
    /** The error object as it came over the wire. */
    toJSON() {
        return { code: this.code, message: this.message, data: this.data };
    }
}
/**
 * The call was cancelled (its AbortSignal fired) and the sidecar stopped it
 * before it changed anything (`-32800`, `requestCancelled`). Its `name` is
 * `"AbortError"`, as for `fetch`.
 */
export class RequestCancelledError extends SidecarError {
    name = "AbortError";
    constructor(message, data, method, options) {
        super(ErrorCodes.requestCancelled, message, { kind: "requestCancelled", ...data }, method, options);
    }
}
/** The sidecar exited, or its streams closed, before the call was answered. */
export class ConnectionClosedError extends SidecarError {
    name = "ConnectionClosedError";
    /** The process's exit code, when the client spawned it and it has exited. */
    exitCode;
    /** The signal that ended the process, if any. */
    signal;
    /** The end of the sidecar's stderr (its log), when the client captured it. */
    stderr;
    constructor(message, details = {}) {
        super(CONNECTION_CLOSED, message, { kind: "serverExited" }, details.method, { cause: details.cause });
        this.exitCode = details.exitCode ?? null;
        this.signal = details.signal ?? null;
        this.stderr = details.stderr ?? "";
    }
}
/** The major part of a protocolVersion ("1.0" -> "1"). */
export function protocolMajor(version) {
    return version.split(".", 1)[0];
}
/**
 * The sidecar speaks a protocol this client does not: their major versions
 * differ (PROTOCOL.md, Lifecycle). Thrown by `SidecarClient.spawn`/`connect`,
 * which then stop the sidecar.
 */
export class ProtocolVersionError extends Error {
    serverVersion;
    clientVersion;
    name = "ProtocolVersionError";
    constructor(serverVersion, clientVersion) {
        super(`session-sidecar speaks protocol ${serverVersion} but this client speaks ${clientVersion}: ` +
            `the major versions must match; run a session-sidecar whose protocol is ${protocolMajor(clientVersion)}.x ` +
            `or use a client for protocol ${serverVersion}`);
        this.serverVersion = serverVersion;
        this.clientVersion = clientVersion;
    }
}
