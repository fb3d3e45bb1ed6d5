"use strict";
var __defProp = Object.defineProperty;
var __getOwnPropDesc = Object.getOwnPropertyDescriptor;
var __getOwnPropNames = Object.getOwnPropertyNames;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __export = (target, all) => {
  for (var name in all)
    __defProp(target, name, { get: all[name], enumerable: true });
};
var __copyProps = (to, from, except, desc) => {
  if (from && typeof from === "object" || typeof from === "function") {
    for (let key of __getOwnPropNames(from))
      if (!__hasOwnProp.call(to, key) && key !== except)
        __defProp(to, key, { get: () => from[key], enumerable: !(desc = __getOwnPropDesc(from, key)) || desc.enumerable });
  }
  return to;
};
var __toCommonJS = (mod) => __copyProps(__defProp({}, "__esModule", { value: true }), mod);

// src/adapters/claude-agent-sdk/index.ts
var index_exports = {};
__export(index_exports, {
  SidecarSessionStore: () => SidecarSessionStore
});
module.exports = __toCommonJS(index_exports);

// src/client.ts
var import_node_child_process = require("node:child_process");

// src/connection.ts
var MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
var Emitter = class {
  listeners = /* @__PURE__ */ new Set();
  event = (listener) => {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  };
  fire(value) {
    for (const listener of [...this.listeners]) {
      try {
        listener(value);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
  get size() {
    return this.listeners.size;
  }
};
var ResponseError = class extends Error {
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
};
var ConnectionEnded = class extends Error {
  name = "ConnectionEnded";
};
var LONE_SURROGATE_ESCAPE = /\\ud[89a-f][0-9a-f]{2}/;
var HEADER_END = Buffer.from("\r\n\r\n");
var Connection = class {
  constructor(input, output) {
    this.output = output;
    input.on("data", (chunk) => this.receive(typeof chunk === "string" ? Buffer.from(chunk) : chunk));
    input.on("end", () => this.end("the sidecar closed its output"));
    input.on("close", () => this.end("the sidecar closed its output"));
    input.on("error", (error) => this.end(`reading from the sidecar failed: ${error.message}`));
    output.on("error", (error) => this.end(`writing to the sidecar failed: ${error.message}`));
    output.on("close", () => this.end("the sidecar's input closed"));
  }
  nextId = 1;
  pending = /* @__PURE__ */ new Map();
  notificationHandlers = /* @__PURE__ */ new Map();
  requestHandlers = /* @__PURE__ */ new Map();
  progressHandlers = /* @__PURE__ */ new Map();
  serving = /* @__PURE__ */ new Map();
  unhandledProgressEmitter = new Emitter();
  protocolErrorEmitter = new Emitter();
  closeEmitter = new Emitter();
  buffered = [];
  bufferedBytes = 0;
  closedWith;
  /** Makes the error that fails calls once the connection has ended. */
  closedError = (method) => new ConnectionEnded(`${method}: the connection is closed`);
  get closed() {
    return this.closedWith !== void 0;
  }
  /** Calls sent and not yet settled. */
  get pendingCount() {
    return this.pending.size;
  }
  // -- sending ------------------------------------------------------------------------
  /**
   * Encode `message` as one frame. Throws the encoder's own error (a BigInt,
   * a cycle) or a payload-too-large `ResponseError`; nothing is written then.
   */
  encode(message) {
    const body = JSON.stringify(message);
    const bytes = Buffer.byteLength(body, "utf8");
    if (bytes > MAX_MESSAGE_BYTES) {
      const method = message.method ?? "the message";
      throw new ResponseError(
        -33011,
        `${method}: the message is ${bytes} bytes, over the sidecar's ${MAX_MESSAGE_BYTES}-byte frame limit; send smaller batches (it was not sent)`,
        { kind: "payloadTooLarge", bytes, limit: MAX_MESSAGE_BYTES }
      );
    }
    const frame = Buffer.allocUnsafe(bytes + 32);
    const headerLength = frame.write(`Content-Length: ${bytes}\r
\r
`, 0, "ascii");
    frame.write(body, headerLength, "utf8");
    return { frame: frame.subarray(0, headerLength + bytes), body };
  }
  write(frame) {
    this.output.write(frame);
  }
  /**
   * Send a request; the promise settles exactly once. `signal` aborting sends
   * `$/cancelRequest` and calls `onAbort` (the client decides how long to wait
   * for the sidecar's answer before settling it itself, via `settle`).
   */
  sendRequest(method, params, hooks = {}) {
    if (this.closedWith) return Promise.reject(this.closedError(method));
    const id = this.nextId++;
    const message = params === void 0 ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params };
    let encoded;
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
  settle(id, error) {
    const call = this.pending.get(id);
    if (!call) return false;
    this.pending.delete(id);
    call.reject(error);
    return true;
  }
  /** Send a notification. Throws the encoder's error, payload-too-large, or the closed error. */
  sendNotification(method, params) {
    if (this.closedWith) throw this.closedError(method);
    const message = params === void 0 ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params };
    this.write(this.encode(message).frame);
  }
  /** Send `$/cancelRequest` for a call of ours (quietly: the connection may be gone). */
  cancel(id) {
    if (this.closedWith) return;
    try {
      this.sendNotification("$/cancelRequest", { id });
    } catch {
    }
  }
  // -- receiving -----------------------------------------------------------------------
  onNotification(method, listener) {
    let emitter = this.notificationHandlers.get(method);
    if (!emitter) this.notificationHandlers.set(method, emitter = new Emitter());
    return emitter.event(listener);
  }
  onRequest(method, handler) {
    this.requestHandlers.set(method, handler);
    return { dispose: () => this.requestHandlers.delete(method) };
  }
  onProgress(token, listener) {
    this.progressHandlers.set(token, listener);
    return { dispose: () => this.progressHandlers.delete(token) };
  }
  /** `$/progress` for a token nobody listens to. */
  get onUnhandledProgress() {
    return this.unhandledProgressEmitter.event;
  }
  /** An error answer no pending call could be given (see `settleUnaddressed`). */
  get onProtocolError() {
    return this.protocolErrorEmitter.event;
  }
  get onClose() {
    return this.closeEmitter.event;
  }
  receive(chunk) {
    this.buffered.push(chunk);
    this.bufferedBytes += chunk.length;
    for (; ; ) {
      if (this.closedWith) return;
      let data = this.buffered.length === 1 ? this.buffered[0] : Buffer.concat(this.buffered, this.bufferedBytes);
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
      let message;
      try {
        message = JSON.parse(body);
      } catch (error) {
        this.end(`the sidecar sent a frame that is not JSON (${error.message})`);
        return;
      }
      this.dispatch(message);
    }
  }
  dispatch(message) {
    if (message === null || typeof message !== "object" || Array.isArray(message)) return;
    if (typeof message.method === "string") {
      if (message.id !== void 0 && message.id !== null) this.serve(message.id, message.method, message.params);
      else this.notify(message.method, message.params);
      return;
    }
    const call = typeof message.id === "number" ? this.pending.get(message.id) : void 0;
    if (call) {
      this.pending.delete(call.id);
      if (message.error !== void 0) call.reject(toResponseError(message.error));
      else call.resolve(message.result ?? null);
      return;
    }
    if (message.error !== void 0 && (message.id === null || message.id === void 0)) {
      this.settleUnaddressed(toResponseError(message.error));
    }
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
  settleUnaddressed(error) {
    let chosen;
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
  notify(method, params) {
    if (method === "$/progress" && params && typeof params === "object") {
      const { token, value } = params;
      const listener = this.progressHandlers.get(token);
      if (listener) listener(value);
      else this.unhandledProgressEmitter.fire({ token, value });
      return;
    }
    if (method === "$/cancelRequest" && params && typeof params === "object") {
      this.serving.get(String(params.id))?.abort(new Error("cancelled by the sidecar"));
      return;
    }
    this.notificationHandlers.get(method)?.fire(params);
  }
  serve(id, method, params) {
    const handler = this.requestHandlers.get(method);
    const answer = (reply) => {
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
    Promise.resolve().then(() => handler(params, controller.signal)).then(
      (result) => {
        if (result instanceof ResponseError) answer({ error: errorObject(result) });
        else answer({ result: result ?? null });
      },
      (error) => {
        if (error instanceof ResponseError) answer({ error: errorObject(error) });
        else answer({ error: { code: -32603, message: error instanceof Error ? error.message : String(error) } });
      }
    );
  }
  // -- ending --------------------------------------------------------------------------
  /**
   * The streams ended: nothing more can be sent or answered. Pending calls and
   * the requests we serve wait for `failPending` (the owner first learns how
   * the process ended, so the error can say it).
   */
  end(reason) {
    if (this.closedWith) return;
    this.closedWith = new ConnectionEnded(reason);
    this.closeEmitter.fire(this.closedWith);
  }
  /** Why the connection ended, once it has. */
  get endReason() {
    return this.closedWith?.message;
  }
  /** Fail every pending call with `closedError(method)`, and abort the requests we serve. */
  failPending() {
    for (const controller of this.serving.values()) controller.abort(this.closedWith);
    this.serving.clear();
    const calls = [...this.pending.values()];
    this.pending.clear();
    for (const call of calls) call.reject(this.closedError(call.method));
  }
  /** Stop writing (ends `output`). */
  endOutput() {
    try {
      this.output.end();
    } catch {
    }
  }
};
function toResponseError(error) {
  const object = error !== null && typeof error === "object" ? error : {};
  const code = typeof object.code === "number" ? object.code : -32603;
  return new ResponseError(code, typeof object.message === "string" ? object.message : "error without a message", object.data);
}
function errorObject(error) {
  return error.data === void 0 ? { code: error.code, message: error.message } : { code: error.code, message: error.message, data: error.data };
}

// src/server.ts
var import_node_net = require("node:net");

// src/protocol.ts
var PROTOCOL_VERSION = "1.0";
var ErrorCodes = {
  /** A request before initialize. */
  serverNotInitialized: -32002,
  /** Not a valid request object, a reused id, or a request after shutdown. */
  invalidRequest: -32600,
  /** No such method; capabilities.methods lists them. */
  methodNotFound: -32601,
  /** Params do not fit the method; data.field names the bad field. */
  invalidParams: -32602,
  /** A bug in the server; the stderr log has the traceback. */
  internalError: -32603,
  /** The frame or its JSON could not be read; answered with id null. */
  parseError: -32700,
  /** The client cancelled the request (`$/cancelRequest`) before it changed anything. */
  requestCancelled: -32800,
  /** No session with that id below the root (or, for close, none open), or no file at that path. */
  sessionNotFound: -33001,
  /** A session id that is not 1-64 letters, digits, '.', '_' or '-' (letters or digits at both ends). */
  invalidSessionId: -33002,
  /** An entry id (leaf, branch target, label target, parent) that is not in the session. */
  entryNotFound: -33003,
  /** Another process holds the session open for writing. */
  sessionLocked: -33004,
  /** The disk refused a read or write (space, permissions); latched until the session is reopened. */
  storageError: -33005,
  /** The file is not a session (no valid header line); it is left unchanged. */
  damagedFile: -33006,
  /** A path outside the sessions root (allowed only with store.allowExternalPaths). */
  pathOutsideRoot: -33007,
  /** The session id, or the file a move would create, exists already. */
  sessionExists: -33008,
  /** An appended entry is malformed; data.index names it and nothing of the batch was written. */
  invalidEntry: -33009,
  /** The session is not in a state that allows the call (e.g. archiving one that has no file yet). */
  invalidState: -33010,
  /** A frame over the size limit (64 MiB); it is skipped. */
  payloadTooLarge: -33011,
  /** Another program appended to the session's file: its leaf is not the `expectedLeafId` the append named. Nothing was written; `data.leafId` is the leaf now and `data.entries` (or only `data.entryIds` when large) what the client has not seen. */
  sessionChanged: -33012,
  /** Nothing a compaction could replace: the path is empty, its leaf is a compaction already (`data.entryId` names it; asking again never returns it as a new result), or everything since the last compaction is within keepRecentTokens. `data.reason` says which: "empty", "leafIsCompaction", "withinKeepRecentTokens". */
  nothingToCompact: -33020,
  /** The summarizing model failed (after bounded retries); `data` names provider and status. */
  providerError: -33021,
  /** The summarization request itself is larger than the model accepts. */
  contextOverflow: -33022,
  /** The named provider has no key, endpoint or client to ask. */
  providerNotConfigured: -33023,
  /** The session's leaf moved to another branch while compacting; nothing was written. */
  compactionConflict: -33024,
  /** The summary, with the blocks the sidecar adds to it, would not be smaller than the messages it replaces (or the context would not shrink): nothing was written. `data` holds `summaryTokens`, `replacedTokens`, `tokensBefore` and `tokensAfter` (estimates, chars / 4). */
  compactionNotSmaller: -33025,
  /** A rewind would overwrite files changed outside the agent since the last snapshot; `data.paths` names them. Pass `force` to rewind anyway (they are in the snapshot taken just before, so it can be undone). */
  worktreeChanged: -33040,
  /** No snapshot of the files at or before the entry (or the diff's point) to go back to. */
  noSnapshot: -33041,
  /** The snapshot store could not do it (git missing or failing, its objects gone, the folder unreadable). */
  snapshotFailed: -33042,
  /** A snapshot names a path outside the session's folder (or through a symlink); nothing outside is written. */
  pathOutsideCwd: -33043,
  /** session/export could not write the file asked for (folder missing, no permission, disk full). */
  exportWriteFailed: -33050,
  /** A path given to session/import that does not exist or holds no session of that tool. */
  importSourceNotFound: -33060,
  /** A source that exists but cannot be read as that tool's sessions (an opencode file that is not SQLite). */
  importSourceUnreadable: -33061,
  /** Another client of this sidecar controls the session; observe it, or call session/takeControl to write. */
  notController: -33070,
  /** A TCP client's initialize did not carry the token the server was started with; nothing else is served. */
  unauthorized: -33071,
  /** A client of a shared (socket) sidecar asked for its own sessions root or settings; they are the server's. */
  sharedServer: -33072,
  /** The unix socket path asked for (`keepServing`) is served by another sidecar, or is not a socket. */
  socketInUse: -33073,
  /** `--database-url` / `store.databaseUrl` is not a PostgreSQL URL we can use; the message says what to fix. */
  databaseUrlInvalid: -33080,
  /** The database's schema is newer than this sidecar knows, or its tables were not made by session-sidecar. */
  databaseSchemaMismatch: -33081,
  /** The session's on-disk format has no place for what was asked (a branch, a label, a thinking block in the spec format): nothing was written. The message names the format and the part. */
  formatCannotHold: -33090
};
var SessionMethods = class {
  /** `session/create`. */
  create(params, options) {
    return this.request("session/create", params, options);
  }
  /**
   * `session/open`.
   * Name the session by `sessionId` (looked up below the root) or by `path`.
   */
  open(params = {}, options) {
    return this.request("session/open", params, options);
  }
  /** `session/continueRecent`. */
  continueRecent(params, options) {
    return this.request("session/continueRecent", params, options);
  }
  /** `session/close`. */
  close(params, options) {
    return this.request("session/close", params, options);
  }
  /** `session/flush`. */
  flush(params, options) {
    return this.request("session/flush", params, options);
  }
  /** `session/append`. */
  append(params, options) {
    return this.request("session/append", params, options);
  }
  buildContext(params, options) {
    return this.request("session/buildContext", params, options);
  }
  /** `session/branch`. */
  branch(params, options) {
    return this.request("session/branch", params, options);
  }
  /** `session/getTree`. */
  getTree(params, options) {
    return this.request("session/getTree", params, options);
  }
  /** `session/getEntries`. */
  getEntries(params, options) {
    return this.request("session/getEntries", params, options);
  }
  /** `session/setLabel`. */
  setLabel(params, options) {
    return this.request("session/setLabel", params, options);
  }
  /** `session/setName`. */
  setName(params, options) {
    return this.request("session/setName", params, options);
  }
  /** `session/fork`. */
  fork(params, options) {
    return this.request("session/fork", params, options);
  }
  /** `session/list`. */
  list(params = {}, options) {
    return this.request("session/list", params, options);
  }
  /** `session/archive`. */
  archive(params, options) {
    return this.request("session/archive", params, options);
  }
  /** `session/unarchive`. */
  unarchive(params, options) {
    return this.request("session/unarchive", params, options);
  }
  /** `session/delete`. */
  delete(params, options) {
    return this.request("session/delete", params, options);
  }
  /** `session/restore`. */
  restore(params, options) {
    return this.request("session/restore", params, options);
  }
  /** `session/compact`. */
  compact(params, options) {
    return this.request("session/compact", params, options);
  }
  /** `session/move`. */
  move(params, options) {
    return this.request("session/move", params, options);
  }
  /** `session/stats`. */
  stats(params = {}, options) {
    return this.request("session/stats", params, options);
  }
  /**
   * `session/prune`.
   * A retention policy; absent fields come from the settings' `retention` section.
   */
  prune(params = {}, options) {
    return this.request("session/prune", params, options);
  }
  /** `history/add`. */
  historyAdd(params, options) {
    return this.request("history/add", params, options);
  }
  /** `history/search`. */
  historySearch(params, options) {
    return this.request("history/search", params, options);
  }
  /** `history/list`. */
  historyList(params = {}, options) {
    return this.request("history/list", params, options);
  }
  /** `session/snapshot`. */
  snapshot(params, options) {
    return this.request("session/snapshot", params, options);
  }
  /** `session/diff`. */
  diff(params, options) {
    return this.request("session/diff", params, options);
  }
  /** `session/rewind`. */
  rewind(params, options) {
    return this.request("session/rewind", params, options);
  }
  /** `session/import`. */
  import(params, options) {
    return this.request("session/import", params, options);
  }
  /** `session/export`. */
  export(params, options) {
    return this.request("session/export", params, options);
  }
  /**
   * `session/convert`.
   * Copy a session into the other format, as a new session below `targetRoot`.
   *
   * Name the source by `sessionId` (below this sidecar's root) or `path` (a pi
   * `.jsonl` file, or a spec session folder). The source is not changed.
   */
  convert(params, options) {
    return this.request("session/convert", params, options);
  }
  /** `session/appendForeign`. */
  appendForeign(params, options) {
    return this.request("session/appendForeign", params, options);
  }
  /** `session/loadForeign`. */
  loadForeign(params, options) {
    return this.request("session/loadForeign", params, options);
  }
  /** `session/listForeign`. */
  listForeign(params, options) {
    return this.request("session/listForeign", params, options);
  }
  /** `session/deleteForeign`. */
  deleteForeign(params, options) {
    return this.request("session/deleteForeign", params, options);
  }
  /** `session/subscribe`. */
  subscribe(params, options) {
    return this.request("session/subscribe", params, options);
  }
  /** `session/unsubscribe`. */
  unsubscribe(params, options) {
    return this.request("session/unsubscribe", params, options);
  }
  /** `session/takeControl`. */
  takeControl(params, options) {
    return this.request("session/takeControl", params, options);
  }
  /** `session/didCompact` (`DidCompactParams`). */
  onDidCompact(listener) {
    return this.onNotification("session/didCompact", listener);
  }
  /** `session/didAppend` (`DidAppendParams`). */
  onDidAppend(listener) {
    return this.onNotification("session/didAppend", listener);
  }
  /** `session/didReload` (`DidReloadParams`). */
  onDidReload(listener) {
    return this.onNotification("session/didReload", listener);
  }
  /** `session/didChangeLeaf` (`DidChangeLeafParams`). */
  onDidChangeLeaf(listener) {
    return this.onNotification("session/didChangeLeaf", listener);
  }
  /** `session/didSetLabel` (`DidSetLabelParams`). */
  onDidSetLabel(listener) {
    return this.onNotification("session/didSetLabel", listener);
  }
  /** `session/didSetName` (`DidSetNameParams`). */
  onDidSetName(listener) {
    return this.onNotification("session/didSetName", listener);
  }
  /** `session/didClose` (`DidCloseParams`). */
  onDidClose(listener) {
    return this.onNotification("session/didClose", listener);
  }
  /** `session/resync` (`ResyncParams`). */
  onResync(listener) {
    return this.onNotification("session/resync", listener);
  }
  /** `session/didLoseControl` (`DidLoseControlParams`). */
  onDidLoseControl(listener) {
    return this.onNotification("session/didLoseControl", listener);
  }
};

// src/errors.ts
var CONNECTION_CLOSED = -32099;
var SidecarError = class extends Error {
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
    if (typeof this.data.kind === "string") return this.data.kind;
    const entry = Object.entries(ErrorCodes).find(([, code]) => code === this.code);
    return entry?.[0];
  }
  /** The error object as it came over the wire. */
  toJSON() {
    return { code: this.code, message: this.message, data: this.data };
  }
};
var RequestCancelledError = class extends SidecarError {
  name = "AbortError";
  constructor(message, data, method, options) {
    super(ErrorCodes.requestCancelled, message, { kind: "requestCancelled", ...data }, method, options);
  }
};
var ConnectionClosedError = class extends SidecarError {
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
};
function protocolMajor(version) {
  return version.split(".", 1)[0];
}
var ProtocolVersionError = class extends Error {
  constructor(serverVersion, clientVersion) {
    super(
      `session-sidecar speaks protocol ${serverVersion} but this client speaks ${clientVersion}: the major versions must match; run a session-sidecar whose protocol is ${protocolMajor(clientVersion)}.x or use a client for protocol ${serverVersion}`
    );
    this.serverVersion = serverVersion;
    this.clientVersion = clientVersion;
  }
  name = "ProtocolVersionError";
};

// src/server.ts
async function openSocket(path, waitMs = 5e3) {
  const deadline = Date.now() + waitMs;
  for (; ; ) {
    try {
      return await new Promise((resolve, reject) => {
        const socket = (0, import_node_net.connect)(path);
        socket.once("connect", () => {
          socket.off("error", reject);
          resolve(socket);
        });
        socket.once("error", reject);
      });
    } catch (error) {
      const code = error.code;
      if (code !== "ENOENT" && code !== "ECONNREFUSED" || Date.now() >= deadline) {
        throw new ConnectionClosedError(`could not connect to the sidecar's socket ${path}: ${error.message}`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

// src/client.ts
var CLIENT_NAME = "@session-sidecar/client";
var CLIENT_VERSION = "0.1.0";
var WORK_DONE_PROGRESS_CREATE = "window/workDoneProgress/create";
var STDERR_KEEP = 64 * 1024;
var JSONRPC_METHOD_NOT_FOUND = -32601;
var JSONRPC_INTERNAL_ERROR = -32603;
var SidecarClient = class _SidecarClient extends SessionMethods {
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
      this.exited = new Promise((resolve) => {
        child.once("close", (code, signal) => {
          this.exitInfo ??= { code, signal };
          resolve();
        });
      });
      child.stdin?.on("error", () => {
      });
      child.on("error", () => {
      });
      child.once("exit", () => this.markClosed());
    } else {
      this.exited = Promise.resolve();
    }
    this.connection.onClose(() => this.markClosed());
    this.connection.onRequest(
      "session/summarize",
      (params, signal) => this.answerSummarize(params, signal)
    );
    this.connection.onRequest(WORK_DONE_PROGRESS_CREATE, (params) => {
      const token = params.token;
      const subscription = this.connection.onProgress(token, (value) => {
        this.serverProgressEmitter.fire({ token, value });
        if (value.kind === "end") subscription.dispose();
      });
      return null;
    });
  }
  // -- starting --------------------------------------------------------------------
  /** Spawn `session-sidecar`, initialize it and return the ready client. */
  static async spawn(options = {}) {
    const [command, ...leading] = typeof options.command === "string" || options.command === void 0 ? [options.command ?? (process.env.SESSION_SIDECAR_BIN || "session-sidecar")] : options.command;
    if (command === void 0) throw new TypeError("SpawnOptions.command is an empty list");
    const args = [...leading, ...options.args ?? []];
    if (options.root !== void 0) args.push("--root", options.root);
    const stderr = options.stderr ?? "pipe";
    const child = (0, import_node_child_process.spawn)(command, args, {
      stdio: ["pipe", "pipe", stderr],
      env: options.env,
      cwd: options.cwd,
      windowsHide: true
    });
    await new Promise((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", (error) => {
        const hint = error.code === "ENOENT" ? `; install session-sidecar or pass its path as \`command\`` : "";
        reject(
          new ConnectionClosedError(`could not start ${command}: ${error.message}${hint}`, { cause: error })
        );
      });
    });
    const client = new _SidecarClient(child.stdout, child.stdin, options, child);
    try {
      await client.initialize();
    } catch (error) {
      await client.dispose({ timeoutMs: 1e3 });
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
    const client = new _SidecarClient(input, output, options);
    try {
      await client.initialize();
    } catch (error) {
      await client.dispose({ timeoutMs: 1e3 });
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
    return _SidecarClient.connect(socket, socket, options);
  }
  async initialize() {
    const params = {
      clientInfo: this.options.clientInfo ?? { name: CLIENT_NAME, version: CLIENT_VERSION },
      protocolVersion: PROTOCOL_VERSION,
      ...this.options.sessionRoot !== void 0 ? { sessionRoot: this.options.sessionRoot } : {},
      ...this.options.settings !== void 0 ? { settings: this.options.settings } : {},
      ...this.options.token !== void 0 ? { token: this.options.token } : {}
    };
    let result;
    try {
      result = await this.request("initialize", params);
    } catch (error) {
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
    if (!this._initializeResult) throw new Error("the client is not initialized");
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
    return this.closedError !== void 0;
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
      this.connection.sendNotification(method, params ?? void 0);
    } catch (error) {
      throw this.translate(error, method, void 0);
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
    if (this.closedError) throw this.closedFor(method);
    if (signal?.aborted) {
      throw new RequestCancelledError(`${method} was aborted before it was sent`, {}, method, { cause: signal.reason });
    }
    let sent = params;
    let progress;
    if (onProgress) {
      const token = `${this.tokenPrefix}-${++this.tokenCount}`;
      sent = { ...params ?? {}, workDoneToken: token };
      progress = this.connection.onProgress(token, onProgress);
    }
    let id;
    let grace;
    const graceMs = this.options.cancelGraceMs ?? 500;
    const onAbort = () => {
      if (id === void 0) return;
      const callId = id;
      this.connection.cancel(callId);
      grace = setTimeout(() => {
        this.connection.settle(
          callId,
          new RequestCancelledError(
            `${method} was aborted; the sidecar did not confirm within ${graceMs} ms that it stopped (it may still finish)`,
            { confirmed: false },
            method,
            { cause: signal?.reason }
          )
        );
      }, graceMs);
    };
    try {
      const answer = this.connection.sendRequest(method, sent ?? void 0, { onSent: (sentId) => id = sentId });
      signal?.addEventListener("abort", onAbort, { once: true });
      const result = await answer;
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
  translate(error, method, signal) {
    if (error instanceof SidecarError) return error;
    if (error instanceof ResponseError) {
      if (error.code === ErrorCodes.requestCancelled) {
        return new RequestCancelledError(error.message, error.data, method, { cause: signal?.reason });
      }
      return new SidecarError(error.code, error.message, error.data, method);
    }
    return error instanceof Error ? error : new Error(String(error));
  }
  closedFor(method, cause) {
    const base = this.closedError ?? this.makeClosedError();
    return new ConnectionClosedError(`${method}: ${base.message}`, {
      method,
      exitCode: base.exitCode,
      signal: base.signal,
      stderr: base.stderr,
      cause
    });
  }
  makeClosedError() {
    const exit = this.exitInfo;
    let how = "the connection to the sidecar closed";
    if (exit) how = exit.signal ? `the sidecar was killed by ${exit.signal}` : `the sidecar exited with code ${exit.code}`;
    if (this.disposing) how += " (the client was disposed)";
    const tail = this.stderrTail.trim().split("\n").slice(-5).join("\n");
    return new ConnectionClosedError(tail && !this.disposing ? `${how}; its log ends:
${tail}` : how, {
      exitCode: exit?.code ?? null,
      signal: exit?.signal ?? null,
      stderr: this.stderrTail
    });
  }
  /** The process exited or the streams closed: fail everything still waiting. */
  markClosed() {
    if (this.closing) return;
    this.closing = true;
    const exited = this.process ? withTimeout(this.exited, 2e3).catch(() => {
    }) : Promise.resolve();
    void exited.then(() => this.finishClose());
  }
  finishClose() {
    if (this.closedError) return;
    this.closedError = this.makeClosedError();
    this.closeController.abort(this.closedError);
    this.connection.end(this.closedError.message);
    this.connection.failPending();
    this.closeEmitter.fire(this.closedError);
  }
  async answerSummarize(params, cancelled) {
    const handler = this.options.summarize;
    if (!handler) {
      return new ResponseError(
        JSONRPC_METHOD_NOT_FOUND,
        'this client has no summarize handler (pass `summarize` to SidecarClient.spawn/connect to use provider "client")'
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
  dispose(options = {}) {
    this.disposing ??= this.doDispose(options.timeoutMs ?? this.options.shutdownTimeoutMs ?? 5e3);
    return this.disposing;
  }
  async [Symbol.asyncDispose]() {
    await this.dispose();
  }
  async doDispose(timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    if (!this.closedError && !this.connection.closed && this._initializeResult) {
      try {
        if (!this.shutDown) await withTimeout(this.connection.sendRequest("shutdown"), timeoutMs);
        this.connection.sendNotification("exit");
      } catch {
      }
    }
    this.connection.endOutput();
    const child = this.process;
    if (child) {
      child.stdin?.end();
      if (!this.exitInfo) {
        const exitedInTime = await withTimeout(this.exited, Math.max(0, deadline - Date.now())).then(
          () => true,
          () => false
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
};
function withTimeout(promise, ms) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      }
    );
  });
}

// src/adapters/claude-agent-sdk/index.ts
var FORMAT = "claude-code";
var SDK = "@anthropic-ai/claude-agent-sdk";
var SidecarSessionStore = class {
  client;
  spawning;
  ownsClient;
  options;
  fold;
  // The summary of each main transcript as last folded, and each one's appends in order.
  summaries = /* @__PURE__ */ new Map();
  queues = /* @__PURE__ */ new Map();
  constructor(options = {}) {
    if (options.client !== void 0 && options.root !== void 0) {
      throw new TypeError("give root (a sidecar to spawn) or client (one already connected), not both");
    }
    this.options = options;
    this.client = options.client;
    this.ownsClient = options.client === void 0;
    this.fold = options.fold;
  }
  ready() {
    if (this.client !== void 0) return Promise.resolve(this.client);
    this.spawning ??= SidecarClient.spawn({
      ...this.options.spawn,
      ...this.options.root !== void 0 ? { root: this.options.root } : {}
    }).then((client) => this.client = client);
    return this.spawning;
  }
  /** Shut down the sidecar if this store spawned it. */
  async dispose() {
    const client = this.client ?? (this.spawning ? await this.spawning : void 0);
    this.client = void 0;
    this.spawning = void 0;
    if (client !== void 0 && this.ownsClient) await client.dispose();
  }
  async [Symbol.asyncDispose]() {
    await this.dispose();
  }
  async folder() {
    if (this.fold === void 0) {
      try {
        const sdk = await import(SDK);
        this.fold = sdk.foldSessionSummary ?? null;
      } catch {
        this.fold = null;
      }
    }
    return this.fold;
  }
  /** `fn` after the calls queued before it on `name` (the fold reads what the last append left). */
  inTurn(name, fn) {
    const before = this.queues.get(name) ?? Promise.resolve();
    const run = before.then(fn, fn);
    const settled = run.catch(() => void 0);
    this.queues.set(name, settled);
    void settled.then(() => {
      if (this.queues.get(name) === settled) this.queues.delete(name);
    });
    return run;
  }
  // -- the SessionStore contract ------------------------------------------------------------------
  async append(key, entries) {
    if (entries.length === 0) return;
    const client = await this.ready();
    const lines = entries;
    const base = { format: FORMAT, projectKey: key.projectKey, foreignSessionId: key.sessionId };
    if (key.subpath !== void 0) {
      await client.appendForeign({ ...base, lines, subpath: key.subpath });
      return;
    }
    const name = JSON.stringify([key.projectKey, key.sessionId]);
    await this.inTurn(name, async () => {
      const fold = await this.folder();
      let state;
      if (fold !== null) {
        let previous = this.summaries.get(name);
        if (previous === void 0) {
          const loaded = await client.loadForeign(base);
          if (loaded.state) previous = { sessionId: key.sessionId, mtime: 0, data: loaded.state.data ?? {} };
        }
        const folded = fold(previous, key, entries);
        state = { data: folded.data };
        this.summaries.set(name, { sessionId: key.sessionId, mtime: 0, data: folded.data });
      }
      await client.appendForeign({ ...base, lines, ...state ? { state } : {} });
    });
  }
  async load(key) {
    const client = await this.ready();
    const loaded = await client.loadForeign({
      format: FORMAT,
      projectKey: key.projectKey,
      foreignSessionId: key.sessionId,
      ...key.subpath !== void 0 ? { subpath: key.subpath } : {}
    });
    return loaded.lines;
  }
  async listSessions(projectKey) {
    const client = await this.ready();
    const listed = await client.listForeign({ format: FORMAT, projectKey });
    return listed.sessions.map((s) => ({ sessionId: s.foreignSessionId, mtime: s.mtime }));
  }
  async listSessionSummaries(projectKey) {
    const client = await this.ready();
    const listed = await client.listForeign({ format: FORMAT, projectKey });
    return listed.sessions.filter((s) => s.state).map((s) => ({ sessionId: s.foreignSessionId, mtime: s.mtime, data: s.state?.data ?? {} }));
  }
  async delete(key) {
    const client = await this.ready();
    await client.deleteForeign({
      format: FORMAT,
      projectKey: key.projectKey,
      foreignSessionId: key.sessionId,
      ...key.subpath !== void 0 ? { subpath: key.subpath } : {}
    });
    if (key.subpath === void 0) this.summaries.delete(JSON.stringify([key.projectKey, key.sessionId]));
  }
  async listSubkeys(key) {
    const client = await this.ready();
    const loaded = await client.loadForeign({ format: FORMAT, projectKey: key.projectKey, foreignSessionId: key.sessionId });
    return [...loaded.subpaths ?? []];
  }
};
// Annotate the CommonJS export names for ESM import in node:
0 && (module.exports = {
  SidecarSessionStore
});
