/**
 * `SidecarSession`: the OpenAI Agents SDK's (`@openai/agents-core`) `Session` kept in a sidecar.
 *
 * How it is kept is the Python adapter's way (its session.py says it at length), so either
 * language resumes a session the other wrote:
 *
 * - `addItems`: one `session/append` of one entry per item (items.ts), below the leaf;
 * - `getItems`: the session's context at its leaf (`session/buildContext`), read whole once and
 *   kept with the leaf it was read at, grown by this object's own appends; each later read asks
 *   the sidecar for the leaf (`session/open` of the open session) and reads the context again
 *   only when the leaf moved (another writer, a compaction);
 * - `popItem`: the leaf moves back to the parent of the last item's entry, by an appended
 *   `custom` entry (customType `openai-agents.leaf`) below that parent: the popped item stays
 *   on a branch of the tree. An item the last compaction kept (before the compaction entry) is
 *   left out of the context by a `context_edit` instead;
 * - `clearSession`: the same marker as a new root: an empty branch;
 * - `runCompaction`: `session/compact` (its `$/progress` to `onCompactionProgress`); the history
 *   is then the summary (a user message, as pi words it for a model) and the items it kept;
 * - `replaceHistoryWithCompaction(items)` (the SDK's own compaction hands over a `compaction`
 *   item and the items it keeps): a new branch from the root holding exactly those items.
 *
 * Types only are imported from `@openai/agents-core`: the adapter runs without it installed.
 */
import { createHash } from "node:crypto";
import { SidecarClient } from "../../client.js";
import { ErrorCodes, } from "../../protocol.js";
import { fromMessage, LEAF_TYPE, toEntry } from "./items.js";
/**
 * A conversation of the OpenAI Agents SDK kept as a session of a sidecar:
 * `run(agent, input, { session: new SidecarSession("conversation-1") })`.
 */
export class SidecarSession {
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
    compacted = false; // the history starts with a compaction's summary
    parents = new Map(); // entry id -> parent id, from appends
    lastAppend;
    constructor(sessionId, options = {}) {
        if (options.client !== undefined && options.root !== undefined) {
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
            const chosen = limit === undefined ? this.items : limit <= 0 ? [] : this.items.slice(-limit);
            return chosen.map((item) => structuredClone(item));
        });
    }
    /** Append the items (one entry each, one `session/append`). */
    addItems(items) {
        if (items.length === 0)
            return Promise.resolve();
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
            if (item === undefined || entryId === undefined)
                return undefined;
            const [client, sessionId] = await this.ready();
            if (this.compacted && entryId === this.entryIds[0]) {
                await this.markLeaf(null); // only the summary was left
            }
            else if (this.compacted && !(await this.afterCompaction(entryId))) {
                const edit = { type: "context_edit", targetId: entryId, replacement: null };
                if (!this.grew(await client.append({ sessionId, entries: [edit] })))
                    return item;
            }
            else {
                await this.markLeaf(await this.parentOf(entryId));
            }
            // The entry's items leave the history (one, unless another agent's message stood for several).
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
            this.known = true; // whatever the session held, the history at a new root is empty
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
        const automatic = args?.force !== true && (runContext !== undefined || args?.responseId !== undefined);
        return this.locked(async () => {
            const [client, sessionId] = await this.ready();
            if (automatic) {
                const appended = this.lastAppend;
                if (appended === undefined)
                    return null;
                const decide = this.options.shouldCompact;
                if (!(decide ? decide(appended) : appended.shouldCompact))
                    return null;
            }
            try {
                const onProgress = this.options.onCompactionProgress;
                this.lastCompaction = await client.compact({ ...this.options.compact, sessionId }, onProgress ? { onProgress } : {});
            }
            catch (error) {
                if (!automatic)
                    throw error;
            }
            finally {
                this.known = false; // the history is now the summary and what it kept
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
            this.sidecarId = undefined;
            this.known = false;
            if (client === undefined)
                return;
            if (sessionId !== undefined && !client.closed)
                await client.close({ sessionId });
            if (this.ownsClient) {
                this.client = undefined;
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
        this.queue = run.catch(() => undefined);
        return run;
    }
    /** The client (spawned on first use) and the session's id in it (opened, or created empty). */
    async ready() {
        if (this.client === undefined) {
            const spawn = this.options.spawn ?? {};
            this.client = await SidecarClient.spawn({ ...spawn, root: this.options.root ?? spawn.root });
            this.ownsClient = true;
        }
        if (this.sidecarId === undefined)
            this.sidecarId = await this.open(this.client, this.sessionId);
        return [this.client, this.sidecarId];
    }
    async open(client, sessionId) {
        try {
            await client.open({ sessionId });
            return sessionId;
        }
        catch (error) {
            const code = error.code;
            if (code === ErrorCodes.invalidSessionId) {
                // The same id the Python adapter derives, so both languages find the session.
                const derived = "oa-" + createHash("sha256").update(sessionId, "utf8").digest("hex").slice(0, 40);
                return this.open(client, derived);
            }
            if (code !== ErrorCodes.sessionNotFound)
                throw error;
        }
        await client.create({ cwd: this.cwd, sessionId });
        return sessionId;
    }
    // -- reading and moving the leaf -------------------------------------------------------
    /** Make the history kept here the session's at its leaf: read it again only when the leaf moved. */
    async current() {
        const [client, sessionId] = await this.ready();
        const { leafId } = await client.open({ sessionId });
        if (this.known && leafId === this.leaf)
            return;
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
        for (const entry of result.entries)
            this.parents.set(entry.id, entry.parentId);
        const first = result.entries[0];
        this.known =
            this.known &&
                first !== undefined &&
                first.parentId === this.leaf &&
                !result.clearedToolResults &&
                !result.external;
        this.leaf = result.leafId;
        return this.known;
    }
    /** Move the leaf to `parentId` (null: before the first entry) so that a reopen finds it there too. */
    async markLeaf(parentId) {
        const [client, sessionId] = await this.ready();
        const marker = { type: "custom", customType: LEAF_TYPE, data: { leafId: parentId } };
        const entries = [marker];
        const result = await client.append({ sessionId, entries, parentId });
        this.leaf = parentId; // the history at the marker is the one at its parent (a marker is in no context)
        this.grew(result);
    }
    async parentOf(entryId) {
        const known = this.parents.get(entryId);
        if (known !== undefined)
            return known;
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
}
