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
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** Something to stop listening with. */
export interface Disposable {
  dispose(): void;
}

/** Subscribe a listener; dispose the result to unsubscribe. */
export type Event<T> = (listener: (value: T) => void) => Disposable;

/** A minimal multi-listener event source. */
export class Emitter<T> {
  private readonly listeners = new Set<(value: T) => void>();

  readonly event: Event<T> = (listener) => {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  };

  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(value);
      } catch (error) {
        // A listener's bug must not stop the reader; report it where Node reports such things.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }

  get size(): number {
    return this.listeners.size;
  }
}

/** An error object from the other side (or made here for a call that could not be sent). */
export class ResponseError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** Why the connection ended, as given to `onClose`. */
export class ConnectionEnded extends Error {
  override name = "ConnectionEnded";
}

export type RequestId = number | string;
export type RequestHandler = (params: any, signal: AbortSignal) => unknown;

interface Pending {
  id: number;
  method: string;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** The frame holds a lone surrogate escape: a sidecar that predates accepting them answers it id null. */
  suspect: boolean;
}

/** A message as it arrives (loosely checked). */
type Incoming = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: unknown };

// JSON.stringify writes a lone surrogate as an escape (a paired one as its UTF-8 bytes).
const LONE_SURROGATE_ESCAPE = /\\ud[89a-f][0-9a-f]{2}/;
const HEADER_END = Buffer.from("\r\n\r\n");

/**
 * One JSON-RPC connection. `input` is what the other side writes, `output`
 * what it reads. Every call settles exactly once: with its answer, with the
 * encoder's error or the payload-too-large error before anything is sent, with
 * an error the sidecar could not attach to an id (see `settleUnaddressed`),
 * or with the closed error when the connection ends.
 */
export class Connection {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly notificationHandlers = new Map<string, Emitter<unknown>>();
  private readonly requestHandlers = new Map<string, RequestHandler>();
  private readonly progressHandlers = new Map<RequestId, (value: any) => void>();
  private readonly serving = new Map<string, AbortController>();
  private readonly unhandledProgressEmitter = new Emitter<{ token: RequestId; value: unknown }>();
  private readonly protocolErrorEmitter = new Emitter<ResponseError>();
  private readonly closeEmitter = new Emitter<ConnectionEnded>();
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private closedWith: ConnectionEnded | undefined;
  /** Makes the error that fails calls once the connection has ended. */
  closedError: (method: string) => Error = (method) => new ConnectionEnded(`${method}: the connection is closed`);

  constructor(
    input: Readable,
    private readonly output: Writable,
  ) {
    input.on("data", (chunk: Buffer | string) => this.receive(typeof chunk === "string" ? Buffer.from(chunk) : chunk));
    input.on("end", () => this.end("the sidecar closed its output"));
    input.on("close", () => this.end("the sidecar closed its output"));
    input.on("error", (error) => this.end(`reading from the sidecar failed: ${error.message}`));
    output.on("error", (error) => this.end(`writing to the sidecar failed: ${error.message}`));
    output.on("close", () => this.end("the sidecar's input closed"));
  }

  get closed(): boolean {
    return this.closedWith !== undefined;
  }

  /** Calls sent and not yet settled. */
  get pendingCount(): number {
    return this.pending.size;
  }

  // -- sending ------------------------------------------------------------------------

  /**
   * Encode `message` as one frame. Throws the encoder's own error (a BigInt,
   * a cycle) or a payload-too-large `ResponseError`; nothing is written then.
   */
  private encode(message: object): { frame: Buffer; body: string } {
    const body = JSON.stringify(message);
    const bytes = Buffer.byteLength(body, "utf8");
    if (bytes > MAX_MESSAGE_BYTES) {
      const method = (message as { method?: string }).method ?? "the message";
      throw new ResponseError(
        -33011,
        `${method}: the message is ${bytes} bytes, over the sidecar's ${MAX_MESSAGE_BYTES}-byte frame limit; send smaller batches (it was not sent)`,
        { kind: "payloadTooLarge", bytes, limit: MAX_MESSAGE_BYTES },
      );
    }
    const frame = Buffer.allocUnsafe(bytes + 32);
    const headerLength = frame.write(`Content-Length: ${bytes}\r\n\r\n`, 0, "ascii");
    frame.write(body, headerLength, "utf8");
    return { frame: frame.subarray(0, headerLength + bytes), body };
  }

  private write(frame: Buffer): void {
    this.output.write(frame);
  }

  /**
   * Send a request; the promise settles exactly once. `signal` aborting sends
   * `$/cancelRequest` and calls `onAbort` (the client decides how long to wait
   * for the sidecar's answer before settling it itself, via `settle`).
   */
  sendRequest(method: string, params?: unknown, hooks: { onSent?: (id: number) => void } = {}): Promise<unknown> {
    if (this.closedWith) return Promise.reject(this.closedError(method));
    const id = this.nextId++;
    const message = params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params };
    let encoded: { frame: Buffer; body: string };
    try {
      encoded = this.encode(message);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      this.pending.set(id, { id, method, resolve, reject, suspect: LONE_SURROGATE_ESCAPE.test(encoded.body) });
      this.write(encoded.frame);
      hooks.onSent?.(id);
    });
  }

  /** Settle a pending call from outside (an abort past its grace); a later answer to it is dropped. */
  settle(id: number, error: unknown): boolean {
    const call = this.pending.get(id);
    if (!call) return false;
    this.pending.delete(id);
    call.reject(error);
    return true;
  }

  /** Send a notification. Throws the encoder's error, payload-too-large, or the closed error. */
  sendNotification(method: string, params?: unknown): void {
    if (this.closedWith) throw this.closedError(method);
    const message = params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params };
    this.write(this.encode(message).frame);
  }

  /** Send `$/cancelRequest` for a call of ours (quietly: the connection may be gone). */
  cancel(id: number): void {
    if (this.closedWith) return;
    try {
      this.sendNotification("$/cancelRequest", { id });
    } catch {}
  }

  // -- receiving -----------------------------------------------------------------------

  onNotification(method: string, listener: (params: any) => void): Disposable {
    let emitter = this.notificationHandlers.get(method);
    if (!emitter) this.notificationHandlers.set(method, (emitter = new Emitter()));
    return emitter.event(listener);
  }

  onRequest(method: string, handler: RequestHandler): Disposable {
    this.requestHandlers.set(method, handler);
    return { dispose: () => this.requestHandlers.delete(method) };
  }

  onProgress(token: RequestId, listener: (value: any) => void): Disposable {
    this.progressHandlers.set(token, listener);
    return { dispose: () => this.progressHandlers.delete(token) };
  }

  /** `$/progress` for a token nobody listens to. */
  get onUnhandledProgress(): Event<{ token: RequestId; value: unknown }> {
    return this.unhandledProgressEmitter.event;
  }

  /** An error answer no pending call could be given (see `settleUnaddressed`). */
  get onProtocolError(): Event<ResponseError> {
    return this.protocolErrorEmitter.event;
  }

  get onClose(): Event<ConnectionEnded> {
    return this.closeEmitter.event;
  }

  private receive(chunk: Buffer): void {
    this.buffered.push(chunk);
    this.bufferedBytes += chunk.length;
    for (;;) {
      if (this.closedWith) return;
      let data = this.buffered.length === 1 ? this.buffered[0]! : Buffer.concat(this.buffered, this.bufferedBytes);
      this.buffered = [data];
      const headerEnd = data.indexOf(HEADER_END);
      if (headerEnd < 0) {
        if (data.length > 8192) this.end("the sidecar sent a header block without an end; is it speaking --jsonl?");
        return;
      }
      const headers = data.subarray(0, headerEnd).toString("ascii");
      const match = /(?:^|\r\n)content-length:\s*(\d+)\s*(?:\r\n|$)/i.exec(headers);
      if (!match) {
        this.end(`the sidecar sent a frame without Content-Length (${JSON.stringify(headers.slice(0, 80))})`);
        return;
      }
      const length = Number(match[1]);
      const start = headerEnd + HEADER_END.length;
      if (data.length < start + length) return;
      const body = data.subarray(start, start + length).toString("utf8");
      data = data.subarray(start + length);
      this.buffered = data.length ? [data] : [];
      this.bufferedBytes = data.length;
      let message: Incoming;
      try {
        message = JSON.parse(body);
      } catch (error) {
        this.end(`the sidecar sent a frame that is not JSON (${(error as Error).message})`);
        return;
      }
      this.dispatch(message);
    }
  }

  private dispatch(message: Incoming): void {
    if (message === null || typeof message !== "object" || Array.isArray(message)) return;
    if (typeof message.method === "string") {
      if (message.id !== undefined && message.id !== null) this.serve(message.id as RequestId, message.method, message.params);
      else this.notify(message.method, message.params);
      return;
    }
    const call = typeof message.id === "number" ? this.pending.get(message.id) : undefined;
    if (call) {
      this.pending.delete(call.id);
      if (message.error !== undefined) call.reject(toResponseError(message.error));
      else call.resolve(message.result ?? null);
      return;
    }
    if (message.error !== undefined && (message.id === null || message.id === undefined)) {
      this.settleUnaddressed(toResponseError(message.error));
    }
    // An answer to a call already settled here (aborted past its grace): dropped.
  }

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
  private settleUnaddressed(error: ResponseError): void {
    let chosen: Pending | undefined;
    for (const call of this.pending.values()) {
      if (call.suspect) {
        chosen = call;
        break;
      }
    }
    if (!chosen && this.pending.size === 1) chosen = this.pending.values().next().value;
    if (chosen) {
      this.pending.delete(chosen.id);
      chosen.reject(error);
    } else {
      this.protocolErrorEmitter.fire(error);
    }
  }

  private notify(method: string, params: unknown): void {
    if (method === "$/progress" && params && typeof params === "object") {
      const { token, value } = params as { token: RequestId; value: unknown };
      const listener = this.progressHandlers.get(token);
      if (listener) listener(value);
      else this.unhandledProgressEmitter.fire({ token, value });
      return;
    }
    if (method === "$/cancelRequest" && params && typeof params === "object") {
      this.serving.get(String((params as { id: unknown }).id))?.abort(new Error("cancelled by the sidecar"));
      return;
    }
    this.notificationHandlers.get(method)?.fire(params);
  }

  private serve(id: RequestId, method: string, params: unknown): void {
    const handler = this.requestHandlers.get(method);
    const answer = (reply: object) => {
      this.serving.delete(String(id));
      if (this.closedWith) return;
      try {
        this.write(this.encode({ jsonrpc: "2.0", id, ...reply }).frame);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        this.write(this.encode({ jsonrpc: "2.0", id, error: { code: -32603, message } }).frame);
      }
    };
    if (!handler) {
      answer({ error: { code: -32601, message: `the client does not handle ${method}`, data: { kind: "methodNotFound", method } } });
      return;
    }
    const controller = new AbortController();
    this.serving.set(String(id), controller);
    Promise.resolve()
      .then(() => handler(params, controller.signal))
      .then(
        (result) => {
          if (result instanceof ResponseError) answer({ error: errorObject(result) });
          else answer({ result: result ?? null });
        },
        (error) => {
          if (error instanceof ResponseError) answer({ error: errorObject(error) });
          else answer({ error: { code: -32603, message: error instanceof Error ? error.message : String(error) } });
        },
      );
  }

  // -- ending --------------------------------------------------------------------------

  /**
   * The streams ended: nothing more can be sent or answered. Pending calls and
   * the requests we serve wait for `failPending` (the owner first learns how
   * the process ended, so the error can say it).
   */
  end(reason: string): void {
    if (this.closedWith) return;
    this.closedWith = new ConnectionEnded(reason);
    this.closeEmitter.fire(this.closedWith);
  }

  /** Why the connection ended, once it has. */
  get endReason(): string | undefined {
    return this.closedWith?.message;
  }

  /** Fail every pending call with `closedError(method)`, and abort the requests we serve. */
  failPending(): void {
    for (const controller of this.serving.values()) controller.abort(this.closedWith);
    this.serving.clear();
    const calls = [...this.pending.values()];
    this.pending.clear();
    for (const call of calls) call.reject(this.closedError(call.method));
  }

  /** Stop writing (ends `output`). */
  endOutput(): void {
    try {
      this.output.end();
    } catch {}
  }
}

function toResponseError(error: unknown): ResponseError {
  const object = error !== null && typeof error === "object" ? (error as { code?: unknown; message?: unknown; data?: unknown }) : {};
  const code = typeof object.code === "number" ? object.code : -32603;
  return new ResponseError(code, typeof object.message === "string" ? object.message : "error without a message", object.data);
}

function errorObject(error: ResponseError): object {
  return error.data === undefined ? { code: error.code, message: error.message } : { code: error.code, message: error.message, data: error.data };
}
