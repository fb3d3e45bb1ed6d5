// Per-call progress, cancellation with AbortSignal, session/summarize answered by
// the client, and session/didCompact.

import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  ErrorCodes,
  RequestCancelledError,
  SidecarError,
  type DidCompactParams,
  type SidecarClient,
  type SummarizeParams,
  type WorkDoneProgress,
} from "@session-sidecar/client";
import { deferred, removeTempRoots, startClient, tempRoot, toolConversation } from "./helpers.js";

after(removeTempRoots);

/** `count` small pi sessions written straight into `<root>/--work-many--/`. */
function writeSessions(root: string, count: number, cwd = "/work/many"): void {
  const dir = join(root, "--work-many--");
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < count; i++) {
    const id = `0190aaaa-0000-7000-8000-${String(i).padStart(12, "0")}`;
    const ts = new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString();
    const lines = [
      { type: "session", version: 3, id, timestamp: ts, cwd },
      { type: "message", id: `u${i}`, parentId: null, timestamp: ts, message: { role: "user", content: [{ type: "text", text: `question ${i}` }] } },
      { type: "message", id: `a${i}`, parentId: `u${i}`, timestamp: ts, message: { role: "assistant", content: [{ type: "text", text: `answer ${i}` }], stopReason: "stop" } },
    ];
    writeFileSync(join(dir, `${ts.replace(/:/g, "-").replace(".", "-")}_${id}.jsonl`), lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  }
}

const SESSIONS = 3000;
let manyRoot: string;
before(() => {
  manyRoot = tempRoot();
  writeSessions(manyRoot, SESSIONS);
});

describe("progress", () => {
  let client: SidecarClient;
  before(async () => {
    client = await startClient({ root: manyRoot });
  });
  after(async () => {
    await client.dispose();
  });

  it("goes to the call's own callback: begin, reports, end, all before the result", async () => {
    const values: WorkDoneProgress[] = [];
    let resolved = false;
    const result = await client.list({ all: true, limit: 10 }, {
      onProgress: (value) => {
        assert.equal(resolved, false, "no progress after the call resolved");
        values.push(value);
      },
    });
    resolved = true;
    assert.equal(result.sessions.length, 10);
    assert.ok(result.nextCursor);
    assert.equal(values[0]!.kind, "begin");
    assert.equal(values.at(-1)!.kind, "end");
    const reports = values.filter((v) => v.kind === "report");
    assert.ok(reports.length >= 1, "a scan of many files reports");
    const percentages = reports.map((r) => (r.kind === "report" ? r.percentage ?? 0 : 0));
    assert.deepEqual(percentages, [...percentages].sort((a, b) => a - b), "percentages never go back");
    assert.match(String(reports.at(-1)!.kind === "report" && reports.at(-1)!.message), /of 3000 sessions read/);
  });

  it("two calls in flight each get only their own", async () => {
    const first: WorkDoneProgress[] = [];
    const second: WorkDoneProgress[] = [];
    const [a, b] = await Promise.all([
      client.list({ all: true, query: "question 7" }, { onProgress: (v) => first.push(v) }),
      client.buildContext({ sessionId: "0190aaaa-0000-7000-8000-000000000003" }, { onProgress: (v) => second.push(v) }),
    ]);
    assert.ok(a.sessions.length >= 1);
    assert.equal(b.messages.length, 2);
    assert.equal(first.filter((v) => v.kind === "begin").length, 1);
    assert.equal(second.filter((v) => v.kind === "begin").length, 1);
    assert.equal(first[0]!.kind === "begin" && first[0]!.title, "session/list");
    assert.equal(second[0]!.kind === "begin" && second[0]!.title, "session/buildContext");
    assert.equal(first.at(-1)!.kind, "end");
    assert.equal(second.at(-1)!.kind, "end");
  });

  it("a call without onProgress sends no token", async () => {
    const stray: unknown[] = [];
    const listener = client.connection.onUnhandledProgress((p) => stray.push(p));
    try {
      await client.list({ all: true, limit: 1 });
      assert.deepEqual(stray, []);
    } finally {
      listener.dispose();
    }
  });
});

describe("cancellation", () => {
  it("aborting a long session/list sends $/cancelRequest and rejects with RequestCancelledError", async () => {
    // A fresh sidecar has read none of the files yet: the scan takes a while.
    const client = await startClient({ root: manyRoot });
    try {
      const controller = new AbortController();
      const seen: WorkDoneProgress[] = [];
      const call = client.list({ all: true }, {
        signal: controller.signal,
        onProgress: (value) => {
          seen.push(value);
          if (value.kind === "begin") controller.abort(new Error("user pressed escape"));
        },
      });
      await assert.rejects(call, (e: unknown) => {
        assert.ok(e instanceof RequestCancelledError);
        assert.ok(e instanceof SidecarError);
        assert.equal(e.name, "AbortError");
        assert.equal(e.code, ErrorCodes.requestCancelled);
        assert.equal(e.code, -32800);
        assert.equal(e.kind, "requestCancelled");
        assert.equal(e.method, "session/list");
        assert.match(String((e.cause as Error).message), /escape/);
        return true;
      });
      // It stopped part-way: no report reached the end of the scan, and the work ended.
      const reports = seen.filter((v) => v.kind === "report");
      assert.ok(reports.every((r) => r.kind === "report" && (r.percentage ?? 0) < 99), JSON.stringify(reports.at(-1)));
      assert.equal(seen.at(-1)!.kind, "end");
      // The sidecar is still serving, and the same call runs to the end without a signal.
      const full = await client.list({ all: true, limit: 5 });
      assert.equal(full.sessions.length, 5);
    } finally {
      await client.dispose();
    }
  });

  it("a call waiting for its session's turn is dropped at once when aborted", async () => {
    const summarizing = deferred();
    const release = deferred<string>();
    const client = await startClient({
      summarize: () => {
        summarizing.resolve();
        return release.promise;
      },
    });
    try {
      const { sessionId } = await client.create({ cwd: "/work/queued" });
      for (const t of ["a", "b", "c"]) await client.append({ sessionId, entries: toolConversation(t, 30) });
      // The compaction holds the session until the client answers session/summarize...
      const compaction = client.compact({ sessionId, provider: "client", keepRecentTokens: 60 });
      await summarizing.promise;
      // ...so this append waits its turn behind it; aborting drops it before it runs.
      const controller = new AbortController();
      const queued = client.append({ sessionId, entries: toolConversation("queued") }, { signal: controller.signal });
      controller.abort();
      await assert.rejects(queued, (e: unknown) => e instanceof RequestCancelledError && e.method === "session/append");
      release.resolve("summary of a, b and c");
      const compacted = await compaction;
      assert.match(compacted.summary, /summary of a, b and c/);
      const tree = await client.getTree({ sessionId });
      assert.equal(tree.leafId, compacted.entryId, "the cancelled append never ran");
      assert.ok(!JSON.stringify(await client.getEntries({ sessionId })).includes("look at queued"));
    } finally {
      await client.dispose();
    }
  });

  it("an already aborted signal rejects at once and sends nothing", async () => {
    const client = await startClient();
    try {
      const { sessionId } = await client.create({ cwd: "/work/aborted" });
      const controller = new AbortController();
      controller.abort();
      await assert.rejects(client.append({ sessionId, entries: toolConversation("never") }, { signal: controller.signal }), {
        name: "AbortError",
        code: -32800,
      });
      assert.deepEqual((await client.getTree({ sessionId })).nodes, [], "nothing was appended");
    } finally {
      await client.dispose();
    }
  });

  it("aborting after the answer changes nothing", async () => {
    const client = await startClient();
    try {
      const controller = new AbortController();
      const created = await client.create({ cwd: "/work/late" }, { signal: controller.signal });
      controller.abort();
      assert.ok(created.sessionId);
      assert.equal((await client.getTree({ sessionId: created.sessionId })).leafId, null);
    } finally {
      await client.dispose();
    }
  });
});

describe("session/summarize answered by the client", () => {
  let client: SidecarClient;
  let answer: (params: SummarizeParams, signal: AbortSignal) => Promise<string>;
  const asked: SummarizeParams[] = [];

  before(async () => {
    client = await startClient({
      settings: { providers: { clientModel: "agent-model" } },
      summarize: async (params, { signal }) => {
        asked.push(params);
        return { text: await answer(params, signal) };
      },
    });
  });
  after(async () => {
    await client.dispose();
  });

  async function longSession(cwd: string): Promise<string> {
    const { sessionId } = await client.create({ cwd });
    for (const topic of ["lexer", "parser", "checker", "emitter"]) {
      await client.append({ sessionId, entries: toolConversation(topic, 30) });
    }
    return sessionId;
  }

  it("compaction with provider client asks the client and writes its summary", async () => {
    const sessionId = await longSession("/work/summarize");
    asked.length = 0;
    answer = async (params) => `SUMMARY(${params.maxTokens}): the agent read the lexer and the parser.`;
    const progress: WorkDoneProgress[] = [];
    const result = await client.compact({ sessionId, provider: "client", keepRecentTokens: 60 }, { onProgress: (v) => progress.push(v) });
    // One request for the history, and one more when the cut splits a turn.
    assert.ok(asked.length >= 1 && asked.length <= 2, `asked ${asked.length} times`);
    for (const params of asked) {
      assert.ok(params.systemPrompt.length > 0);
      assert.ok(Number.isInteger(params.maxTokens) && params.maxTokens > 0);
      assert.equal(params.model, "agent-model");
    }
    const history = asked[0]!;
    assert.match(history.prompt, /look at lexer/, "the prompt carries the conversation being summarized");
    assert.equal(result.provider, "client");
    assert.equal(result.model, "agent-model");
    assert.ok(result.summary.includes(`SUMMARY(${history.maxTokens}): the agent read the lexer and the parser.`), result.summary);
    assert.equal(progress[0]!.kind, "begin");
    assert.equal(progress.at(-1)!.kind, "end");

    const context = await client.buildContext({ sessionId });
    assert.equal(context.messages[0]!.role, "compactionSummary");
    assert.match(JSON.stringify(context.messages[0]), /the agent read the lexer and the parser/);
  });

  it("branch with summarize asks the client for a summary of the branch it leaves", async () => {
    const { sessionId } = await client.create({ cwd: "/work/branch-summary" });
    const first = await client.append({ sessionId, entries: toolConversation("main") });
    await client.append({ sessionId, entries: toolConversation("detour") });
    asked.length = 0;
    answer = async (params) => (/look at detour/.test(params.prompt) ? "the detour read detour.ts" : "wrong branch");
    const branched = await client.branch({ sessionId, entryId: first.leafId, summarize: true, provider: "client" });
    assert.equal(asked.length, 1);
    assert.ok(branched.summaryEntryId, "a branch_summary entry was written");
    assert.equal(branched.leafId, branched.summaryEntryId);
    const [entry] = (await client.getEntries({ sessionId, ids: [branched.summaryEntryId!] })).entries;
    assert.equal(entry!.type, "branch_summary");
    assert.match(JSON.stringify(entry), /the detour read detour.ts/);
  });

  it("a summarize function that throws fails the compaction with providerError and writes nothing", async () => {
    const sessionId = await longSession("/work/summarize-fails");
    const before = await client.getTree({ sessionId });
    answer = async () => {
      throw new Error("model quota exhausted");
    };
    await assert.rejects(client.compact({ sessionId, provider: "client", keepRecentTokens: 60 }), (e: unknown) => {
      assert.ok(e instanceof SidecarError);
      assert.equal(e.kind, "providerError");
      assert.equal(e.code, ErrorCodes.providerError);
      assert.match(e.message, /model quota exhausted/);
      return true;
    });
    assert.deepEqual(await client.getTree({ sessionId }), before);
  });

  it("aborting a compaction while the client is summarizing cancels it and writes nothing", async () => {
    const sessionId = await longSession("/work/summarize-cancel");
    const before = await client.getTree({ sessionId });
    const started = deferred();
    const release = deferred<string>();
    answer = async () => {
      started.resolve();
      return release.promise;
    };
    const controller = new AbortController();
    const call = client.compact({ sessionId, provider: "client", keepRecentTokens: 60 }, { signal: controller.signal });
    await started.promise;
    controller.abort();
    await assert.rejects(call, { name: "AbortError", code: ErrorCodes.requestCancelled });
    release.resolve("too late");
    assert.deepEqual(await client.getTree({ sessionId }), before, "a cancelled compaction writes nothing");
  });

  it("without a summarize function, provider client fails with a clear error", async () => {
    const bare = await startClient();
    try {
      const { sessionId } = await bare.create({ cwd: "/work/nosummarize" });
      for (const topic of ["one", "two", "three"]) await bare.append({ sessionId, entries: toolConversation(topic, 30) });
      await assert.rejects(bare.compact({ sessionId, provider: "client", keepRecentTokens: 60 }), (e: unknown) => {
        assert.ok(e instanceof SidecarError);
        assert.equal(e.kind, "providerError");
        assert.match(e.message, /no summarize handler/);
        return true;
      });
    } finally {
      await bare.dispose();
    }
  });
});

describe("session/didCompact", () => {
  it("autoCompact compacts on its own and the client hears of it", async () => {
    const client = await startClient({
      settings: { compaction: { autoCompact: true, contextWindow: 3000, reserveTokens: 1000, keepRecentTokens: 200 } },
    });
    try {
      const heard = deferred<DidCompactParams>();
      const events: string[] = [];
      const progress: WorkDoneProgress[] = [];
      const listener = client.onDidCompact((params) => {
        events.push("didCompact");
        heard.resolve(params);
      });
      const progressListener = client.onServerProgress(({ token, value }) => {
        assert.match(String(token), /auto-compact/);
        events.push(`progress:${value.kind}`);
        progress.push(value);
      });
      const { sessionId } = await client.create({ cwd: "/work/auto" });
      let shouldCompact = false;
      for (let i = 0; i < 12 && !shouldCompact; i++) {
        shouldCompact = (await client.append({ sessionId, entries: toolConversation(`topic${i}`, 60) })).shouldCompact;
      }
      assert.ok(shouldCompact, "the session outgrew contextWindow - reserveTokens");
      const event = await heard.promise;
      listener.dispose();
      progressListener.dispose();
      assert.equal(event.sessionId, sessionId);
      // The run reported on the token the client accepted, all before didCompact.
      assert.equal(progress[0]?.kind, "begin");
      assert.equal(progress.at(-1)?.kind, "end");
      assert.ok(progress.some((v) => v.kind === "report" && /summariz/.test(v.message ?? "")), JSON.stringify(progress));
      assert.equal(events.at(-1), "didCompact", "progress ends before didCompact");
      assert.equal(events.filter((e) => e === "didCompact").length, 1);
      assert.equal(event.result!.provider, "offline");
      const context = await client.buildContext({ sessionId });
      assert.equal(context.messages[0]!.role, "compactionSummary");
      assert.ok(context.entryIds.includes(event.result!.entryId) || context.leafId !== null);
    } finally {
      await client.dispose();
    }
  });
});
