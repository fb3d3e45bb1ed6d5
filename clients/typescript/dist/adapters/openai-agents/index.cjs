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

// src/adapters/openai-agents/index.ts
var index_exports = {};
__export(index_exports, {
  ITEM_TYPE: () => ITEM_TYPE,
  LEAF_TYPE: () => LEAF_TYPE,
  PATCH: () => PATCH,
  PYTHON_ITEM_TYPE: () => PYTHON_ITEM_TYPE,
  PYTHON_PATCH: () => PYTHON_PATCH,
  SidecarSession: () => SidecarSession,
  fromMessage: () => fromMessage,
  itemKind: () => itemKind,
  toEntry: () => toEntry
});
module.exports = __toCommonJS(index_exports);

// src/adapters/openai-agents/session.ts
var import_node_crypto = require("node:crypto");
var import_client = require("../../index.cjs");
var import_protocol = require("../../index.cjs");

// src/adapters/openai-agents/items.ts
var ITEM_TYPE = "openai-agents-js.item";
var PYTHON_ITEM_TYPE = "openai-agents.item";
var LEAF_TYPE = "openai-agents.leaf";
var PATCH = "openaiAgentsJs";
var PYTHON_PATCH = "openaiAgents";
var COMPACTION_SUMMARY_PREFIX = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
var COMPACTION_SUMMARY_SUFFIX = "\n</summary>";
var BRANCH_SUMMARY_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
var BRANCH_SUMMARY_SUFFIX = "</summary>";
var KINDS = ["user", "assistant", "function_call", "function_call_result", "reasoning"];
var PYTHON_KINDS = {
  user: "user",
  assistant: "assistant",
  function_call: "function_call",
  function_call_output: "function_call_result",
  reasoning: "reasoning"
};
var PARTS = { user: "content", assistant: "content", reasoning: "content" };
var PORTABLE = ["id", "status"];
var SHARED_VERBATIM = (item) => item.type === "compaction" || item.role === "system" && typeof item.content === "string" && item.type === void 0;
function toEntry(item) {
  const message = toMessage(item);
  if (message !== void 0) return { type: "message", message };
  return verbatimEntry(item);
}
function verbatimEntry(item) {
  return { type: "custom_message", customType: ITEM_TYPE, content: JSON.stringify(item), display: false };
}
function toMessage(item) {
  const kind = itemKind(item);
  if (kind === void 0) return void 0;
  const message = messageOf(kind, item);
  const patch = diff(natural(kind, message), item, PARTS[kind]);
  if (kind === "reasoning" && message.content.length === 0) patch.kind = kind;
  if (Object.keys(patch).length > 0) message[PATCH] = patch;
  return message;
}
function itemKind(item) {
  const type = item.type;
  if (type === "function_call") {
    return isString(item.callId) && isString(item.name) && isString(item.arguments) ? "function_call" : void 0;
  }
  if (type === "function_call_result") {
    const output = item.output;
    const text2 = isString(output) || isObject(output) && isPart(output, "text");
    return isString(item.callId) && isString(item.name) && text2 ? "function_call_result" : void 0;
  }
  if (type === "reasoning") {
    const content2 = item.content;
    return Array.isArray(content2) && content2.every((part) => isPart(part, "input_text")) ? "reasoning" : void 0;
  }
  if (type !== void 0 && type !== "message") return void 0;
  const content = item.content;
  if (item.role === "user") {
    if (isString(content) || Array.isArray(content) && content.every((part) => isPart(part, "input_text"))) return "user";
  } else if (item.role === "assistant") {
    if (Array.isArray(content) && content.length > 0 && content.every((part) => isPart(part, "output_text"))) {
      return "assistant";
    }
  }
  return void 0;
}
function fromMessage(message) {
  const m = message;
  const patch = m[PATCH];
  if (isObject(patch)) {
    const kind2 = patch.kind ?? inferKind(m);
    if (kind2 !== void 0 && KINDS.includes(kind2)) return [apply(natural(kind2, m), patch, PARTS[kind2])];
  }
  if (m.role === "custom" && (m.customType === ITEM_TYPE || m.customType === PYTHON_ITEM_TYPE)) {
    let kept;
    try {
      kept = JSON.parse(isString(m.content) ? m.content : "null");
    } catch {
      kept = void 0;
    }
    if (!isObject(kept)) return [];
    return m.customType === ITEM_TYPE || SHARED_VERBATIM(kept) ? [kept] : [];
  }
  const python = m[PYTHON_PATCH];
  const kind = (isObject(python) && isString(python.kind) ? PYTHON_KINDS[python.kind] : void 0) ?? inferKind(m);
  if (kind !== void 0) {
    const item = natural(kind, m);
    const sets = isObject(python) && isObject(python.set) ? python.set : {};
    for (const key of PORTABLE) if (isString(sets[key])) item[key] = sets[key];
    return [item];
  }
  return foreign(m);
}
function messageOf(kind, item) {
  if (kind === "user") {
    const content = item.content;
    if (isString(content)) return { role: "user", content };
    return { role: "user", content: content.map((part) => ({ type: "text", text: part.text })) };
  }
  if (kind === "assistant") {
    return { role: "assistant", content: item.content.map((part) => ({ type: "text", text: part.text })) };
  }
  if (kind === "function_call") {
    let args;
    try {
      args = JSON.parse(item.arguments);
    } catch {
      args = void 0;
    }
    const call = { type: "toolCall", id: item.callId, name: item.name, arguments: isObject(args) ? args : {} };
    return { role: "assistant", content: [call] };
  }
  if (kind === "function_call_result") {
    const output = item.output;
    const text2 = isString(output) ? output : output.text;
    return {
      role: "toolResult",
      toolCallId: item.callId,
      toolName: item.name,
      content: [{ type: "text", text: text2 }],
      isError: false
    };
  }
  return { role: "assistant", content: item.content.map((part) => ({ type: "thinking", thinking: part.text })) };
}
function inferKind(message) {
  const content = message.content;
  if (message.role === "user") {
    return isString(content) || Array.isArray(content) && content.every((block) => isPart(block, "text")) ? "user" : void 0;
  }
  if (message.role === "toolResult") {
    return isString(message.toolCallId) && Array.isArray(content) && content.every((block) => isPart(block, "text")) ? "function_call_result" : void 0;
  }
  if (message.role !== "assistant" || !Array.isArray(content) || content.length === 0) return void 0;
  if (content.length === 1 && isObject(content[0]) && content[0].type === "toolCall") return "function_call";
  if (content.every((block) => isPart(block, "text"))) return "assistant";
  if (content.every((block) => isObject(block) && block.type === "thinking" && isString(block.thinking))) return "reasoning";
  return void 0;
}
function natural(kind, message) {
  const content = message.content;
  const blocks = Array.isArray(content) ? content.filter(isObject) : [];
  if (kind === "user") {
    if (isString(content)) return { role: "user", content };
    return { role: "user", content: blocks.map((block) => ({ type: "input_text", text: block.text })) };
  }
  if (kind === "assistant") {
    return {
      type: "message",
      role: "assistant",
      status: "completed",
      content: blocks.map((block) => ({ type: "output_text", text: block.text }))
    };
  }
  if (kind === "function_call") {
    const call = blocks[0] ?? {};
    return { type: "function_call", callId: call.id, name: call.name, arguments: JSON.stringify(call.arguments ?? null) };
  }
  if (kind === "function_call_result") {
    return {
      type: "function_call_result",
      name: isString(message.toolName) ? message.toolName : "",
      callId: message.toolCallId,
      status: "completed",
      output: { type: "text", text: blocks.map((block) => String(block.text)).join("\n") }
    };
  }
  return { type: "reasoning", content: blocks.map((block) => ({ type: "input_text", text: block.thinking })) };
}
function foreign(message) {
  const content = message.content;
  switch (message.role) {
    case "compactionSummary":
      return [{ role: "user", content: COMPACTION_SUMMARY_PREFIX + String(message.summary) + COMPACTION_SUMMARY_SUFFIX }];
    case "branchSummary":
      return [{ role: "user", content: BRANCH_SUMMARY_PREFIX + String(message.summary) + BRANCH_SUMMARY_SUFFIX }];
    case "assistant": {
      const blocks = Array.isArray(content) ? content.filter(isObject) : [];
      return blocks.flatMap((block) => {
        if (block.type === "text") return [natural("assistant", { content: [block] })];
        if (block.type === "thinking") return [natural("reasoning", { content: [block] })];
        if (block.type === "toolCall") return [natural("function_call", { content: [block] })];
        return [];
      });
    }
    case "toolResult":
      return isString(message.toolCallId) ? [natural("function_call_result", { ...message, content: textBlocks(content) })] : [];
    case "system":
      return [{ role: "system", content: text(content) }];
    case "bashExecution":
      return [{ role: "user", content: `Ran \`${String(message.command ?? "")}\`
${String(message.output ?? "")}` }];
    default: {
      const words = text(content);
      return words ? [{ role: "user", content: words }] : [];
    }
  }
}
function textBlocks(content) {
  return Array.isArray(content) ? content.filter((block) => isPart(block, "text")) : [];
}
function text(content) {
  if (isString(content)) return content;
  return textBlocks(content).map((block) => String(block.text)).join("\n");
}
function isString(value) {
  return typeof value === "string";
}
function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
function isPart(part, type) {
  return isObject(part) && part.type === type && isString(part.text);
}
function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}
function diff(base, actual, partsKey) {
  const patch = {};
  const sets = {};
  const absent = [];
  for (const [key, value] of Object.entries(actual)) {
    if (value === void 0) absent.push(key);
    else if (!(key in base) || !same(base[key], value)) sets[key] = value;
  }
  if (partsKey !== void 0 && partsKey in sets) {
    const ours = base[partsKey];
    const theirs = actual[partsKey];
    if (Array.isArray(ours) && Array.isArray(theirs) && ours.length === theirs.length && theirs.every(isObject)) {
      const parts = ours.map((mine, index) => {
        const change = diff(mine, theirs[index], void 0);
        return Object.keys(change).length > 0 ? change : null;
      });
      patch.parts = parts;
      delete sets[partsKey];
    }
  }
  if (Object.keys(sets).length > 0) patch.set = sets;
  const drop = Object.keys(base).filter((key) => !(key in actual) || actual[key] === void 0 && base[key] !== void 0);
  if (drop.length > 0) patch.drop = drop;
  if (absent.length > 0) patch.undefined = absent;
  const made = Object.keys(apply(base, patch, partsKey));
  const order = Object.keys(actual);
  if (!same(made, order)) patch.order = order;
  return patch;
}
function apply(base, patch, partsKey) {
  const drop = Array.isArray(patch.drop) ? patch.drop : [];
  const item = {};
  for (const [key, value] of Object.entries(base)) if (!drop.includes(key)) item[key] = value;
  const parts = patch.parts;
  const list = partsKey !== void 0 ? item[partsKey] : void 0;
  if (partsKey !== void 0 && Array.isArray(parts) && Array.isArray(list)) {
    item[partsKey] = list.map((part, index) => {
      const change = parts[index];
      return isObject(change) ? apply(part, change, void 0) : part;
    });
  }
  if (isObject(patch.set)) Object.assign(item, patch.set);
  if (Array.isArray(patch.undefined)) {
    for (const key of patch.undefined) if (isString(key)) item[key] = void 0;
  }
  if (Array.isArray(patch.order)) {
    const ordered = {};
    for (const key of patch.order) if (isString(key) && key in item) ordered[key] = item[key];
    for (const key of Object.keys(item)) if (!(key in ordered)) ordered[key] = item[key];
    return ordered;
  }
  return item;
}

// src/adapters/openai-agents/session.ts
var SidecarSession = class {
  /** The runner passes its run context to every call: how `runCompaction` tells the runner's call from a caller's. */
  acceptsRunContext = true;
  sessionId;
  /** The last compaction this session ran (`session/compact`'s result). */
  lastCompaction;
  options;
  cwd;
  client;
  ownsClient = false;
  sidecarId;
  queue = Promise.resolve();
  // The history at the leaf `leaf` (when `known`): items, and the entry each came from.
  items = [];
  entryIds = [];
  leaf = null;
  known = false;
  compacted = false;
  // the history starts with a compaction's summary
  parents = /* @__PURE__ */ new Map();
  // entry id -> parent id, from appends
  lastAppend;
  constructor(sessionId, options = {}) {
    if (options.client !== void 0 && options.root !== void 0) {
      throw new TypeError("give root (a sidecar to spawn) or client (one already connected), not both");
    }
    this.sessionId = sessionId;
    this.options = options;
    this.client = options.client;
    this.cwd = options.cwd ?? process.cwd();
  }
  /** The id of the session in the sidecar once opened: `sessionId`, or the one derived from it. */
  get sidecarSessionId() {
    return this.sidecarId;
  }
  // -- the Session interface ---------------------------------------------------------------
  async getSessionId() {
    return this.sessionId;
  }
  /** The history, oldest first; with `limit` the newest `limit` items (none for 0 or less, as MemorySession answers). */
  getItems(limit) {
    return this.locked(async () => {
      await this.current();
      const chosen = limit === void 0 ? this.items : limit <= 0 ? [] : this.items.slice(-limit);
      return chosen.map((item) => structuredClone(item));
    });
  }
  /** Append the items (one entry each, one `session/append`). */
  addItems(items) {
    if (items.length === 0) return Promise.resolve();
    const copies = items.map((item) => structuredClone(item));
    return this.locked(async () => {
      const [client, sessionId] = await this.ready();
      const result = await client.append({ sessionId, entries: copies.map(toEntry) });
      if (this.grew(result)) {
        this.items.push(...copies);
        this.entryIds.push(...result.entries.map((entry) => entry.id));
      }
    });
  }
  /** Take the newest item off the history and return it (undefined when empty); it stays on a branch. */
  popItem() {
    return this.locked(async () => {
      await this.current();
      const item = this.items.at(-1);
      const entryId = this.entryIds.at(-1);
      if (item === void 0 || entryId === void 0) return void 0;
      const [client, sessionId] = await this.ready();
      if (this.compacted && entryId === this.entryIds[0]) {
        await this.markLeaf(null);
      } else if (this.compacted && !await this.afterCompaction(entryId)) {
        const edit = { type: "context_edit", targetId: entryId, replacement: null };
        if (!this.grew(await client.append({ sessionId, entries: [edit] }))) return item;
      } else {
        await this.markLeaf(await this.parentOf(entryId));
      }
      while (this.entryIds.at(-1) === entryId) {
        this.entryIds.pop();
        this.items.pop();
      }
      return item;
    });
  }
  /** Start an empty branch: the history is empty, what was in it stays in the tree. */
  clearSession() {
    return this.locked(async () => {
      await this.ready();
      await this.markLeaf(null);
      this.items = [];
      this.entryIds = [];
      this.known = true;
    });
  }
  // -- the compaction hooks --------------------------------------------------------------
  /**
   * The sidecar's compaction; the history becomes its summary and the items it kept.
   *
   * Called by a caller (no run context), or with `force`, it compacts; called by the runner
   * after a turn (a run context, or a `responseId`), it compacts when `shouldCompact` says so,
   * and a compaction the sidecar refuses (nothing to gain, say) is skipped, not thrown. The
   * result is null: the runner counts the usage of a model request, and the sidecar's
   * summarizer reports none (`lastCompaction` holds what the compaction did).
   */
  runCompaction(args, runContext) {
    const automatic = args?.force !== true && (runContext !== void 0 || args?.responseId !== void 0);
    return this.locked(async () => {
      const [client, sessionId] = await this.ready();
      if (automatic) {
        const appended = this.lastAppend;
        if (appended === void 0) return null;
        const decide = this.options.shouldCompact;
        if (!(decide ? decide(appended) : appended.shouldCompact)) return null;
      }
      try {
        const onProgress = this.options.onCompactionProgress;
        this.lastCompaction = await client.compact({ ...this.options.compact, sessionId }, onProgress ? { onProgress } : {});
      } catch (error) {
        if (!automatic) throw error;
      } finally {
        this.known = false;
      }
      return null;
    });
  }
  /** The history becomes `items` (a `compaction` item and the items it keeps), on a new branch from the root. */
  replaceHistoryWithCompaction(items) {
    const copies = items.map((item) => structuredClone(item));
    return this.locked(async () => {
      const [client, sessionId] = await this.ready();
      if (copies.length === 0) {
        await this.markLeaf(null);
        this.items = [];
        this.entryIds = [];
        this.known = true;
        return;
      }
      const result = await client.append({ sessionId, entries: copies.map(toEntry), parentId: null });
      this.known = true;
      this.leaf = null;
      this.items = [];
      this.entryIds = [];
      if (this.grew(result)) {
        this.items = copies;
        this.entryIds = result.entries.map((entry) => entry.id);
      }
    });
  }
  // -- opening and closing ----------------------------------------------------------------
  /** Close the session in the sidecar, and the sidecar if this session spawned it. */
  close() {
    return this.locked(async () => {
      const client = this.client;
      const sessionId = this.sidecarId;
      this.sidecarId = void 0;
      this.known = false;
      if (client === void 0) return;
      if (sessionId !== void 0 && !client.closed) await client.close({ sessionId });
      if (this.ownsClient) {
        this.client = void 0;
        this.ownsClient = false;
        await client.dispose();
      }
    });
  }
  async [Symbol.asyncDispose]() {
    await this.close();
  }
  /** Run `work` after every call before it (the SDK may call without awaiting the last). */
  locked(work) {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => void 0);
    return run;
  }
  /** The client (spawned on first use) and the session's id in it (opened, or created empty). */
  async ready() {
    if (this.client === void 0) {
      const spawn = this.options.spawn ?? {};
      this.client = await import_client.SidecarClient.spawn({ ...spawn, root: this.options.root ?? spawn.root });
      this.ownsClient = true;
    }
    if (this.sidecarId === void 0) this.sidecarId = await this.open(this.client, this.sessionId);
    return [this.client, this.sidecarId];
  }
  async open(client, sessionId) {
    try {
      await client.open({ sessionId });
      return sessionId;
    } catch (error) {
      const code = error.code;
      if (code === import_protocol.ErrorCodes.invalidSessionId) {
        const derived = "oa-" + (0, import_node_crypto.createHash)("sha256").update(sessionId, "utf8").digest("hex").slice(0, 40);
        return this.open(client, derived);
      }
      if (code !== import_protocol.ErrorCodes.sessionNotFound) throw error;
    }
    await client.create({ cwd: this.cwd, sessionId });
    return sessionId;
  }
  // -- reading and moving the leaf -------------------------------------------------------
  /** Make the history kept here the session's at its leaf: read it again only when the leaf moved. */
  async current() {
    const [client, sessionId] = await this.ready();
    const { leafId } = await client.open({ sessionId });
    if (this.known && leafId === this.leaf) return;
    const context = await client.buildContext({ sessionId });
    this.items = [];
    this.entryIds = [];
    this.compacted = context.messages[0]?.role === "compactionSummary";
    context.messages.forEach((message, index) => {
      const entryId = context.entryIds[index];
      for (const item of fromMessage(message)) {
        this.items.push(item);
        this.entryIds.push(entryId);
      }
    });
    this.leaf = context.leafId;
    this.known = true;
  }
  /**
   * Note an append; whether the history kept here is still the session's (then the caller adds
   * what the append added): it is when the append went below the leaf it was kept at and the
   * sidecar changed nothing else (tool-result clearing, another program's lines).
   */
  grew(result) {
    this.lastAppend = result;
    for (const entry of result.entries) this.parents.set(entry.id, entry.parentId);
    const first = result.entries[0];
    this.known = this.known && first !== void 0 && first.parentId === this.leaf && !result.clearedToolResults && !result.external;
    this.leaf = result.leafId;
    return this.known;
  }
  /** Move the leaf to `parentId` (null: before the first entry) so that a reopen finds it there too. */
  async markLeaf(parentId) {
    const [client, sessionId] = await this.ready();
    const marker = { type: "custom", customType: LEAF_TYPE, data: { leafId: parentId } };
    const entries = [marker];
    const result = await client.append({ sessionId, entries, parentId });
    this.leaf = parentId;
    this.grew(result);
  }
  async parentOf(entryId) {
    const known = this.parents.get(entryId);
    if (known !== void 0) return known;
    const [client, sessionId] = await this.ready();
    const { entries } = await client.getEntries({ sessionId, ids: [entryId] });
    const parent = entries[0]?.parentId;
    return typeof parent === "string" ? parent : null;
  }
  /** Whether the entry came after the compaction entry the history starts from (else the compaction kept it). */
  async afterCompaction(entryId) {
    const [client, sessionId] = await this.ready();
    const { nodes } = await client.getTree({ sessionId });
    const order = new Map(nodes.map((node, index) => [node.id, index]));
    return (order.get(entryId) ?? -1) > (order.get(this.entryIds[0]) ?? -1);
  }
};
// Annotate the CommonJS export names for ESM import in node:
0 && (module.exports = {
  ITEM_TYPE,
  LEAF_TYPE,
  PATCH,
  PYTHON_ITEM_TYPE,
  PYTHON_PATCH,
  SidecarSession,
  fromMessage,
  itemKind,
  toEntry
});
