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

import { SidecarClient, type SpawnOptions } from "../../client.js";
import type { JsonObject } from "../../protocol.js";

/** The SDK's `SessionKey` (structurally). */
export interface SessionKey {
  projectKey: string;
  sessionId: string;
  subpath?: string;
}

/** The SDK's `SessionStoreEntry`: one transcript line, passed through as it is. */
export type SessionStoreEntry = { type: string; uuid?: string; timestamp?: string; [k: string]: unknown };

/** The SDK's `SessionSummaryEntry`. */
export interface SessionSummaryEntry {
  sessionId: string;
  mtime: number;
  data: Record<string, unknown>;
}

/** The SDK's `foldSessionSummary`. */
export type FoldSessionSummary = (
  prev: SessionSummaryEntry | undefined,
  key: SessionKey,
  entries: SessionStoreEntry[],
  options?: { mtime?: number },
) => SessionSummaryEntry;

export interface SidecarSessionStoreOptions {
  /** A sessions root to spawn a sidecar on (first use); absent: the sidecar's default root. */
  root?: string;
  /** An already connected client to use instead (not disposed with the store). */
  client?: SidecarClient;
  /** How to spawn the sidecar (`SidecarClient.spawn`'s options; `root` above wins). */
  spawn?: SpawnOptions;
  /**
   * Folds a batch into the session's summary; default: the SDK's `foldSessionSummary` (imported when
   * first needed). Without either, no summaries are kept and `listSessionSummaries` answers none
   * (the SDK then lists through `listSessions` and `load`).
   */
  fold?: FoldSessionSummary;
}

const FORMAT = "claude-code";
const SDK = "@anthropic-ai/claude-agent-sdk";

/** The Claude Agent SDK's sessions kept as sessions of a sidecar. */
export class SidecarSessionStore {
  private client: SidecarClient | undefined;
  private spawning: Promise<SidecarClient> | undefined;
  private readonly ownsClient: boolean;
  private readonly options: SidecarSessionStoreOptions;
  private fold: FoldSessionSummary | null | undefined;
  // The summary of each main transcript as last folded, and each one's appends in order.
  private readonly summaries = new Map<string, SessionSummaryEntry>();
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(options: SidecarSessionStoreOptions = {}) {
    if (options.client !== undefined && options.root !== undefined) {
      throw new TypeError("give root (a sidecar to spawn) or client (one already connected), not both");
    }
    this.options = options;
    this.client = options.client;
    this.ownsClient = options.client === undefined;
    this.fold = options.fold;
  }

  private ready(): Promise<SidecarClient> {
    if (this.client !== undefined) return Promise.resolve(this.client);
    this.spawning ??= SidecarClient.spawn({
      ...this.options.spawn,
      ...(this.options.root !== undefined ? { root: this.options.root } : {}),
    }).then((client) => (this.client = client));
    return this.spawning;
  }

  /** Shut down the sidecar if this store spawned it. */
  async dispose(): Promise<void> {
    const client = this.client ?? (this.spawning ? await this.spawning : undefined);
    this.client = undefined;
    this.spawning = undefined;
    if (client !== undefined && this.ownsClient) await client.dispose();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }

  private async folder(): Promise<FoldSessionSummary | null> {
    if (this.fold === undefined) {
      try {
        const sdk = (await import(SDK as string)) as { foldSessionSummary?: FoldSessionSummary };
        this.fold = sdk.foldSessionSummary ?? null;
      } catch {
        this.fold = null; // the SDK is not installed: no summaries
      }
    }
    return this.fold;
  }

  /** `fn` after the calls queued before it on `name` (the fold reads what the last append left). */
  private inTurn<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const before = this.queues.get(name) ?? Promise.resolve();
    const run = before.then(fn, fn);
    const settled = run.catch(() => undefined);
    this.queues.set(name, settled);
    void settled.then(() => {
      if (this.queues.get(name) === settled) this.queues.delete(name);
    });
    return run;
  }

  // -- the SessionStore contract ------------------------------------------------------------------

  async append(key: SessionKey, entries: SessionStoreEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const client = await this.ready();
    const lines = entries as JsonObject[];
    const base = { format: FORMAT, projectKey: key.projectKey, foreignSessionId: key.sessionId } as const;
    if (key.subpath !== undefined) {
      await client.appendForeign({ ...base, lines, subpath: key.subpath });
      return;
    }
    const name = JSON.stringify([key.projectKey, key.sessionId]);
    await this.inTurn(name, async () => {
      const fold = await this.folder();
      let state: JsonObject | undefined;
      if (fold !== null) {
        let previous = this.summaries.get(name);
        if (previous === undefined) {
          const loaded = await client.loadForeign(base);
          if (loaded.state) previous = { sessionId: key.sessionId, mtime: 0, data: loaded.state.data ?? {} };
        }
        const folded = fold(previous, key, entries);
        state = { data: folded.data };
        this.summaries.set(name, { sessionId: key.sessionId, mtime: 0, data: folded.data });
      }
      await client.appendForeign({ ...base, lines, ...(state ? { state } : {}) });
    });
  }

  async load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    const client = await this.ready();
    const loaded = await client.loadForeign({
      format: FORMAT,
      projectKey: key.projectKey,
      foreignSessionId: key.sessionId,
      ...(key.subpath !== undefined ? { subpath: key.subpath } : {}),
    });
    return loaded.lines as SessionStoreEntry[] | null;
  }

  async listSessions(projectKey: string): Promise<Array<{ sessionId: string; mtime: number }>> {
    const client = await this.ready();
    const listed = await client.listForeign({ format: FORMAT, projectKey });
    return listed.sessions.map((s) => ({ sessionId: s.foreignSessionId, mtime: s.mtime }));
  }

  async listSessionSummaries(projectKey: string): Promise<SessionSummaryEntry[]> {
    const client = await this.ready();
    const listed = await client.listForeign({ format: FORMAT, projectKey });
    return listed.sessions
      .filter((s) => s.state)
      .map((s) => ({ sessionId: s.foreignSessionId, mtime: s.mtime, data: s.state?.data ?? {} }));
  }

  async delete(key: SessionKey): Promise<void> {
    const client = await this.ready();
    await client.deleteForeign({
      format: FORMAT,
      projectKey: key.projectKey,
      foreignSessionId: key.sessionId,
      ...(key.subpath !== undefined ? { subpath: key.subpath } : {}),
    });
    if (key.subpath === undefined) this.summaries.delete(JSON.stringify([key.projectKey, key.sessionId]));
  }

  async listSubkeys(key: { projectKey: string; sessionId: string }): Promise<string[]> {
    const client = await this.ready();
    const loaded = await client.loadForeign({ format: FORMAT, projectKey: key.projectKey, foreignSessionId: key.sessionId });
    return [...(loaded.subpaths ?? [])];
  }
}
