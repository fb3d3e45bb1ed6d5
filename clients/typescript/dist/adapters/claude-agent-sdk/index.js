// The Claude Agent SDK's `SessionStore` kept in a sidecar (`@anthropic-ai/claude-agent-sdk`, an
// optional peer dependency: nothing here imports it statically).
//
//   import { query } from "@anthropic-ai/claude-agent-sdk";
//   import { SidecarSessionStore } from "@session-sidecar/client/adapters/claude-agent-sdk";
//
//   for await (const message of query({ prompt, options: { sessionStore: new SidecarSessionStore() } })) ...
//
// Each key ({projectKey, sessionId, subpath?}) is a transcript of one sidecar session, through the
// sidecar's foreign methods (PROTOCOL.md, Foreign sessions): `append` is `session/appendForeign` (each
// line kept verbatim, a line whose uuid is there skipped, the lines mapped as `session/import` maps a
// Claude Code transcript, so the session lists, builds its context, exports and forks as any other);
// `load` is `session/loadForeign` (the lines deep-equal, or null); `listSessions` and
// `listSessionSummaries` are `session/listForeign`; `delete` is `session/deleteForeign` (the session to
// the trash; a subpath's lines marked gone, nothing erased); `listSubkeys` reads the subpaths
// `session/loadForeign` names. The SDK's session summary is folded with the SDK's own
// `foldSessionSummary` (or the `fold` option) and kept as the session's `state`.
import { SidecarClient } from "../../client.js";
const FORMAT = "claude-code";
const SDK = "@anthropic-ai/claude-agent-sdk";
/** The Claude Agent SDK's sessions kept as sessions of a sidecar. */
export class SidecarSessionStore {
    client;
    spawning;
    ownsClient;
    options;
    fold;
    // The summary of each main transcript as last folded, and each one's appends in order.
    summaries = new Map();
    queues = new Map();
    constructor(options = {}) {
        if (options.client !== undefined && options.root !== undefined) {
            throw new TypeError("give root (a sidecar to spawn) or client (one already connected), not both");
        }
        this.options = options;
        this.client = options.client;
        this.ownsClient = options.client === undefined;
        this.fold = options.fold;
    }
    ready() {
        if (this.client !== undefined)
            return Promise.resolve(this.client);
        this.spawning ??= SidecarClient.spawn({
            ...this.options.spawn,
            ...(this.options.root !== undefined ? { root: this.options.root } : {}),
        }).then((client) => (this.client = client));
        return this.spawning;
    }
    /** Shut down the sidecar if this store spawned it. */
    async dispose() {
        const client = this.client ?? (this.spawning ? await this.spawning : undefined);
        this.client = undefined;
        this.spawning = undefined;
        if (client !== undefined && this.ownsClient)
            await client.dispose();
    }
    async [Symbol.asyncDispose]() {
        await this.dispose();
    }
    async folder() {
        if (this.fold === undefined) {
            try {
                const sdk = (await import(SDK));
                this.fold = sdk.foldSessionSummary ?? null;
            }
            catch {
                this.fold = null; // the SDK is not installed: no summaries
            }
        }
        return this.fold;
    }
    /** `fn` after the calls queued before it on `name` (the fold reads what the last append left). */
    inTurn(name, fn) {
        const before = this.queues.get(name) ?? Promise.resolve();
        const run = before.then(fn, fn);
        const settled = run.catch(() => undefined);
        this.queues.set(name, settled);
        void settled.then(() => {
            if (this.queues.get(name) === settled)
                this.queues.delete(name);
        });
        return run;
    }
    // -- the SessionStore contract ------------------------------------------------------------------
    async append(key, entries) {
        if (entries.length === 0)
            return;
        const client = await this.ready();
        const lines = entries;
        const base = { format: FORMAT, projectKey: key.projectKey, foreignSessionId: key.sessionId };
        if (key.subpath !== undefined) {
            await client.appendForeign({ ...base, lines, subpath: key.subpath });
            return;
        }
        const name = JSON.stringify([key.projectKey, key.sessionId]);
        await this.inTurn(name, async () => {
            const fold = await this.folder();
            let state;
            if (fold !== null) {
                let previous = this.summaries.get(name);
                if (previous === undefined) {
                    const loaded = await client.loadForeign(base);
                    if (loaded.state)
                        previous = { sessionId: key.sessionId, mtime: 0, data: loaded.state.data ?? {} };
                }
                const folded = fold(previous, key, entries);
                state = { data: folded.data };
                this.summaries.set(name, { sessionId: key.sessionId, mtime: 0, data: folded.data });
            }
            await client.appendForeign({ ...base, lines, ...(state ? { state } : {}) });
        });
    }
    async load(key) {
        const client = await this.ready();
        const loaded = await client.loadForeign({
            format: FORMAT,
            projectKey: key.projectKey,
            foreignSessionId: key.sessionId,
            ...(key.subpath !== undefined ? { subpath: key.subpath } : {}),
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
        return listed.sessions
            .filter((s) => s.state)
            .map((s) => ({ sessionId: s.foreignSessionId, mtime: s.mtime, data: s.state?.data ?? {} }));
    }
    async delete(key) {
        const client = await this.ready();
        await client.deleteForeign({
            format: FORMAT,
            projectKey: key.projectKey,
            foreignSessionId: key.sessionId,
            ...(key.subpath !== undefined ? { subpath: key.subpath } : {}),
        });
        if (key.subpath === undefined)
            this.summaries.delete(JSON.stringify([key.projectKey, key.sessionId]));
    }
    async listSubkeys(key) {
        const client = await this.ready();
        const loaded = await client.loadForeign({ format: FORMAT, projectKey: key.projectKey, foreignSessionId: key.sessionId });
        return [...(loaded.subpaths ?? [])];
    }
}
