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
var import_client = require("../../index.cjs");
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
    this.spawning ??= import_client.SidecarClient.spawn({
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
