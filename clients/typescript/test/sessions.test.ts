// End to end through a real sidecar: a whole conversation, every method, typed errors.

import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  CLIENT_METHOD_NAMES,
  ErrorCodes,
  METHOD_NAMES,
  SidecarClient,
  SidecarError,
  type MethodName,
} from "@session-sidecar/client";
import { assertResultFits, removeTempRoots, startClient, tempRoot, toolConversation } from "./helpers.js";

after(removeTempRoots);

describe("a conversation with tool calls", () => {
  let client: SidecarClient;
  const called = new Set<string>();

  // Every call of this suite goes through here: its result must fit the schema.
  async function call<T>(method: MethodName, result: Promise<T>): Promise<T> {
    const value = await result;
    assertResultFits(method, value);
    called.add(method);
    return value;
  }

  before(async () => {
    client = await startClient();
  });
  after(async () => {
    assert.equal(await client.dispose(), 0);
  });

  it("create -> append -> buildContext -> fork -> list", async () => {
    const cwd = "/work/app";
    const created = await call("session/create", client.create({ cwd, name: "first" }));
    assert.match(created.sessionId, /^[0-9a-f-]{36}$/);
    assert.equal(created.header.cwd, cwd);
    assert.equal(created.header.type, "session");
    assert.equal(existsSync(created.path), false, "nothing is written before the first assistant message");

    const conversation = toolConversation("parser");
    const appended = await call("session/append", client.append({ sessionId: created.sessionId, entries: conversation }));
    assert.equal(appended.entries.length, 4);
    const tree = await client.getTree({ sessionId: created.sessionId });
    assert.deepEqual(tree.nodes.map((n) => n.type), ["session_info", "message", "message", "message", "message"]);
    assert.equal(appended.entries[0]!.parentId, tree.nodes[0]!.id, "the name is an entry: the conversation hangs below it");
    for (let i = 1; i < 4; i++) assert.equal(appended.entries[i]!.parentId, appended.entries[i - 1]!.id);
    assert.equal(appended.leafId, appended.entries[3]!.id);
    assert.ok(appended.contextTokens > 0);
    assert.equal(appended.shouldCompact, false);
    assert.equal(existsSync(created.path), true, "the assistant message made the session persistent");

    const context = await call("session/buildContext", client.buildContext({ sessionId: created.sessionId, format: "llm" }));
    assert.deepEqual(
      context.messages.map((m) => m.role),
      ["user", "assistant", "toolResult", "assistant"],
    );
    const [, toolCallMessage, result] = context.messages;
    assert.ok(toolCallMessage?.role === "assistant" && result?.role === "toolResult"); // narrows: typed fields below
    const callId = (conversation[1] as any).message.content[1].id;
    assert.deepEqual(toolCallMessage.content?.[1], { type: "toolCall", id: callId, name: "read", arguments: { path: "parser.ts" } });
    assert.equal(result.toolCallId, callId);
    assert.deepEqual(context.entryIds, appended.entries.map((e) => e.id));
    assert.equal(context.leafId, appended.leafId);
    assert.ok(context.estimatedTokens > 0);

    // Fork at the assistant's answer: the new session holds the path up to it.
    const forked = await call("session/fork", client.fork({ sessionId: created.sessionId, entryId: appended.entries[3]!.id }));
    assert.notEqual(forked.sessionId, created.sessionId);
    const forkContext = await client.buildContext({ sessionId: forked.sessionId });
    assert.deepEqual(
      forkContext.messages.map((m) => m.role),
      ["user", "assistant", "toolResult", "assistant"],
    );
    assert.deepEqual(forkContext.entryIds, context.entryIds, "a fork copies the entries verbatim, ids included");
    await assert.rejects(client.fork({ sessionId: created.sessionId, entryId: appended.entries[2]!.id }), {
      code: ErrorCodes.invalidParams,
      message: /toolResult/,
    });

    const listed = await call("session/list", client.list({ cwd }));
    const ids = listed.sessions.map((s) => s.sessionId).sort();
    assert.deepEqual(ids, [created.sessionId, forked.sessionId].sort());
    const original = listed.sessions.find((s) => s.sessionId === created.sessionId)!;
    assert.equal(original.name, "first");
    assert.equal(original.messageCount, 4);
    assert.match(original.firstMessage, /look at parser/);
    assert.equal(original.cwd, cwd);
    const fork = listed.sessions.find((s) => s.sessionId === forked.sessionId)!;
    assert.ok(fork.parentSession, "the fork names its parent session");
    assert.equal(listed.nextCursor, null);
  });

  it("branches, labels, names and reads the tree", async () => {
    const { sessionId } = await call("session/create", client.create({ cwd: "/work/tree" }));
    const first = await client.append({ sessionId, entries: toolConversation("a") });
    const [u, a] = first.entries;

    const branched = await call("session/branch", client.branch({ sessionId, entryId: a!.id }));
    assert.equal(branched.leafId, a!.id);
    assert.equal(branched.summaryEntryId ?? null, null);
    const second = await client.append({ sessionId, entries: toolConversation("b").slice(2) });
    assert.equal(second.entries[0]!.parentId, a!.id, "after branching, appends go below the branch point");

    const labelled = await call("session/setLabel", client.setLabel({ sessionId, entryId: u!.id, label: "start" }));
    assert.equal(labelled.leafId, labelled.entryId, "a label entry becomes the leaf");
    const named = await call("session/setName", client.setName({ sessionId, name: "tree walk" }));
    assert.equal(named.name, "tree walk");

    const tree = await call("session/getTree", client.getTree({ sessionId }));
    assert.equal(tree.leafId, named.entryId);
    const byId = new Map(tree.nodes.map((n) => [n.id, n]));
    assert.equal(byId.get(u!.id)!.label, "start");
    assert.equal(byId.get(u!.id)!.role, "user");
    const children = tree.nodes.filter((n) => n.parentId === a!.id).map((n) => n.id);
    assert.equal(children.length, 2, "two branches below the assistant's tool call");

    const entries = await call("session/getEntries", client.getEntries({ sessionId, ids: [u!.id] }));
    assert.equal(entries.entries.length, 1);
    assert.equal(entries.entries[0]!.id, u!.id);
    const got = entries.entries[0]!;
    assert.ok(got.type === "message" && got.message.role === "user" && typeof got.message.content !== "string");
    assert.deepEqual(got.message.content?.[0], { type: "text", text: "look at a" });

    const all = await client.getEntries({ sessionId });
    assert.equal(all.entries.length, tree.nodes.length);

    // Appending below an explicit parent, and as a new root.
    const below = await client.append({ sessionId, parentId: u!.id, entries: toolConversation("c").slice(1, 2) });
    assert.equal(below.entries[0]!.parentId, u!.id);
    const root = await client.append({ sessionId, parentId: null, entries: toolConversation("d").slice(0, 1) });
    assert.equal(root.entries[0]!.parentId, null);

    // buildContext at an older leaf, and before the first entry.
    const old = await client.buildContext({ sessionId, leafId: a!.id });
    assert.deepEqual(old.entryIds, [u!.id, a!.id]);
    const empty = await client.buildContext({ sessionId, leafId: null });
    assert.deepEqual(empty.messages, []);
  });

  it("flushes, closes, reopens and continues the most recent session", async () => {
    const cwd = "/work/reopen";
    const { sessionId, path } = await client.create({ cwd });
    const appended = await client.append({ sessionId, entries: toolConversation("io") });
    const flushed = await call("session/flush", client.flush({ sessionId }));
    assert.equal(flushed.persisted, true);
    assert.equal(await call("session/close", client.close({ sessionId })), null);

    const opened = await call("session/open", client.open({ sessionId }));
    assert.equal(opened.path, path);
    assert.equal(opened.leafId, appended.leafId);
    assert.equal(opened.entryCount, 4);
    assert.equal(opened.parseErrors, 0);
    const byPath = await client.open({ path });
    assert.equal(byPath.sessionId, sessionId);

    const recent = await call("session/continueRecent", client.continueRecent({ cwd }));
    assert.equal(recent?.sessionId, sessionId);
    const none = await call("session/continueRecent", client.continueRecent({ cwd: "/nowhere/at/all" }));
    assert.equal(none, null);
  });

  it("archives, unarchives, deletes and restores", async () => {
    const cwd = "/work/lifecycle";
    const { sessionId } = await client.create({ cwd });
    await client.append({ sessionId, entries: toolConversation("keep") });

    const archived = await call("session/archive", client.archive({ sessionId }));
    assert.equal(archived.archived, true);
    assert.ok(existsSync(archived.path));
    assert.deepEqual((await client.list({ cwd })).sessions, []);
    const withArchived = await client.list({ cwd, includeArchived: true });
    assert.equal(withArchived.sessions[0]!.archived, true);

    const unarchived = await call("session/unarchive", client.unarchive({ sessionId }));
    assert.equal(unarchived.archived, false);
    assert.equal((await client.list({ cwd })).sessions.length, 1);

    const deleted = await call("session/delete", client.delete({ sessionId }));
    assert.ok(deleted.trashPath && existsSync(deleted.trashPath));
    assert.deepEqual((await client.list({ cwd, includeArchived: true })).sessions, []);
    const restored = await call("session/restore", client.restore({ sessionId }));
    assert.ok(existsSync(restored.path));
    assert.equal((await client.list({ cwd })).sessions[0]!.sessionId, sessionId);
  });

  it("compacts on the offline summarizer", async () => {
    const { sessionId } = await client.create({ cwd: "/work/compact" });
    for (const topic of ["alpha", "beta", "gamma", "delta"]) await client.append({ sessionId, entries: toolConversation(topic, 40) });
    const before = await client.buildContext({ sessionId });
    const compacted = await call("session/compact", client.compact({ sessionId, provider: "offline", keepRecentTokens: 50 }));
    assert.equal(compacted.provider, "offline");
    assert.ok(compacted.summary.length > 0);
    assert.ok(compacted.tokensAfter < compacted.tokensBefore);
    const afterCompact = await client.buildContext({ sessionId });
    assert.ok(afterCompact.messages.length < before.messages.length);
    assert.equal(afterCompact.messages[0]!.role, "compactionSummary");
  });

  it("many calls in flight at once: answers matched by id, each session's appends in order", async () => {
    const sessions = await Promise.all([0, 1, 2, 3, 4].map((i) => client.create({ cwd: `/work/parallel${i}` })));
    const calls = [];
    for (let round = 0; round < 10; round++) {
      for (const { sessionId } of sessions) {
        calls.push(
          client.append({
            sessionId,
            entries: [{ type: "message", message: { role: "user", content: [{ type: "text", text: `${sessionId} ${round}` }] } }],
          }),
        );
      }
    }
    const results = await Promise.all(calls);
    assert.equal(results.length, 50);
    for (const { sessionId } of sessions) {
      const context = await client.buildContext({ sessionId });
      assert.deepEqual(
        context.messages.map((m) => (m as any).content[0].text),
        Array.from({ length: 10 }, (_, round) => `${sessionId} ${round}`),
      );
    }
  });

  it("moves a session to another cwd, keeps an in-memory one off the disk", async () => {
    const { sessionId } = await client.create({ cwd: "/work/before" });
    await client.append({ sessionId, entries: toolConversation("move", 10) });
    const moved = await call("session/move", client.move({ sessionId, cwd: "/work/after" }));
    assert.match(moved.path, /--work-after--/);
    assert.ok(existsSync(moved.path));
    assert.equal((await client.list({ cwd: "/work/after" })).sessions[0]!.sessionId, sessionId);

    const memory = await client.create({ cwd: "/work/memory", persist: false });
    assert.equal(memory.path, "");
    await client.append({ sessionId: memory.sessionId, entries: toolConversation("memory", 10) });
    const listed = (await client.list({ cwd: "/work/memory" })).sessions;
    assert.deepEqual(listed.map((s) => [s.sessionId, s.inMemory]), [[memory.sessionId, true]]);
  });

  it("measures the store and prunes it by a policy", async () => {
    const stats = await call("session/stats", client.stats({ largest: 3 }));
    assert.ok(stats.sessionCount > 0 && stats.totalBytes >= stats.liveBytes);
    assert.ok(stats.largest.length <= 3);
    const dry = await call("session/prune", client.prune({ olderThan: "3650d", dryRun: true }));
    assert.deepEqual(dry.selected, []);
  });

  it("keeps prompt history: add, search, list", async () => {
    await call("history/add", client.historyAdd({ prompt: "use pnpm, not npm", cwd: "/work/app" }));
    await call("history/add", client.historyAdd({ prompt: "run the tests", cwd: "/work/app" }));
    const found = await call("history/search", client.historySearch({ query: "PNPM" }));
    assert.deepEqual(found.entries.map((e) => e.prompt), ["use pnpm, not npm"]);
    const listed = await call("history/list", client.historyList({ cwd: "/work/app" }));
    assert.deepEqual(listed.entries.map((e) => e.prompt), ["run the tests", "use pnpm, not npm"]);
  });

  it("snapshots a folder, diffs it and rewinds the files with the conversation", async () => {
    const cwd = tempRoot("sidecar-ts-project-");
    writeFileSync(join(cwd, "a.txt"), "one\n");
    const { sessionId } = await client.create({ cwd });
    const first = (await client.append({ sessionId, entries: toolConversation("snap", 1).slice(0, 1) })).leafId!;
    const taken = await call("session/snapshot", client.snapshot({ sessionId }));
    writeFileSync(join(cwd, "a.txt"), "two\n");
    const diff = await call("session/diff", client.diff({ sessionId, from: first, to: "worktree", patch: true }));
    assert.equal(diff.fromTree, taken.tree);
    assert.deepEqual(diff.files.map((f) => [f.path, f.change]), [["a.txt", "modified"]]);
    const rewound = await call("session/rewind", client.rewind({ sessionId, entryId: first, files: true, force: true }));
    assert.deepEqual(rewound.restored, ["a.txt"]);
    assert.equal(readFileSync(join(cwd, "a.txt"), "utf8"), "one\n");
  });

  it("imports a Claude Code transcript, and finds it when imported again", async () => {
    const folder = tempRoot("sidecar-ts-import-");
    const source = join(folder, "cc-ts.jsonl");
    const line = (o: object) => JSON.stringify(o) + "\n";
    writeFileSync(source, line({ type: "user", uuid: "u1", parentUuid: null, sessionId: "cc-ts", cwd: "/work/ts",
      timestamp: "2026-01-02T03:04:05.000Z", message: { role: "user", content: "hello" } }) +
      line({ type: "assistant", uuid: "a1", parentUuid: "u1", sessionId: "cc-ts", cwd: "/work/ts",
        timestamp: "2026-01-02T03:04:06.000Z", message: { id: "m1", role: "assistant", model: "claude-x",
          content: [{ type: "text", text: "hi" }] } }));
    const first = (await call("session/import", client.import({ tool: "claude-code", paths: [source] }))).sessions[0];
    assert.equal(first.created, true);
    assert.equal(first.originalId, "cc-ts");
    const again = (await client.import({ tool: "claude-code", paths: [source] })).sessions[0];
    assert.deepEqual([again.created, again.sessionId], [false, first.sessionId]);
  });

  it("exports a session with its secrets redacted", async () => {
    const { sessionId } = await client.create({ cwd: "/work/app" });
    await client.append({ sessionId, entries: [
      { type: "message", message: { role: "user", content: "my key is AKIAQ3EGRTWX5ZKLM7PB" } },
      { type: "message", message: { role: "assistant", content: [{ type: "text", text: "noted" }], stopReason: "stop" } },
    ] });
    const exported = await call("session/export", client.export({ sessionId, format: "json" }));
    assert.equal(exported.entries, 2);
    assert.deepEqual(exported.redaction.kinds, [{ kind: "aws-access-key", count: 1 }]);
    assert.ok(exported.text!.includes("[REDACTED:aws-access-key:1]") && !exported.text!.includes("AKIAQ3EGRTWX5ZKLM7PB"));
  });

  it("converts a session to the spec format, listing what it left out", async () => {
    const { sessionId } = await client.create({ cwd: "/work/app" });
    await client.append({ sessionId, entries: toolConversation("spec", 1) });
    // A relative targetRoot is below the sidecar's root (outside it needs store.allowExternalPaths).
    const converted = await call("session/convert", client.convert({ sessionId, to: "spec", targetRoot: "converted-spec" }));
    assert.equal(converted.format, "spec");
    assert.match(converted.sessionId, /^[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.ok(converted.written > 0 && existsSync(join(converted.path, "session.jsonl")));
    assert.ok(converted.leftOut.some((loss) => loss.kind === "session" && loss.what.includes("/work/app")));
  });

  it("subscribes to a session, hears its appends with cursors, resumes from one, takes control", async () => {
    const { sessionId } = await client.create({ cwd: "/work/live" });
    await client.append({ sessionId, entries: toolConversation("live", 1).slice(0, 2) });
    const heard: { entries: string[]; cursor: string }[] = [];
    const listening = client.onDidAppend((p) => heard.push({ entries: p.entries.map((e) => String(e.id)), cursor: p.cursor ?? "" }));
    try {
      const subscribed = await call("session/subscribe", client.subscribe({ sessionId }));
      assert.equal(subscribed.entryCount, 2);
      const one = await client.append({ sessionId, entries: toolConversation("live-1", 1).slice(0, 1) });
      const two = await client.append({ sessionId, entries: toolConversation("live-2", 1).slice(0, 1) });
      await client.getTree({ sessionId }); // a round trip: what was sent before its answer has arrived
      assert.deepEqual(heard.map((h) => h.entries), [[one.entries[0]!.id], [two.entries[0]!.id]]);
      // From the first event's cursor: the second comes again, once.
      const again = await client.subscribe({ sessionId, since: heard[0]!.cursor });
      assert.equal(again.missed, 1);
      await client.getTree({ sessionId });
      assert.deepEqual(heard.map((h) => h.entries), [[one.entries[0]!.id], [two.entries[0]!.id], [two.entries[0]!.id]]);
      const gone = await call("session/unsubscribe", client.unsubscribe({ sessionId }));
      assert.equal(gone.unsubscribed, true);
      const taken = await call("session/takeControl", client.takeControl({ sessionId }));
      assert.equal(taken.tookOver, false); // the only client: nobody to take it from
    } finally {
      listening.dispose();
    }
  });

  it("keeps another tool's transcript lines verbatim (the foreign methods)", async () => {
    const key = { format: "claude-code", projectKey: "ts-project", foreignSessionId: "ts-session" } as const;
    const lines = [
      { type: "user", uuid: "u1", parentUuid: null, message: { role: "user", content: "hello from claude" } },
      { type: "x", n: 1 },
    ];
    const added = await call("session/appendForeign", client.appendForeign({ ...key, lines }));
    assert.deepEqual([added.appended, added.skipped, added.created], [2, 0, true]);
    const again = await call("session/appendForeign", client.appendForeign({ ...key, lines: lines.slice(0, 1) }));
    assert.deepEqual([again.appended, again.skipped], [0, 1]);
    const loaded = await call("session/loadForeign", client.loadForeign(key));
    assert.deepEqual(loaded.lines, lines);
    const listed = await call("session/listForeign", client.listForeign({ format: "claude-code", projectKey: "ts-project" }));
    assert.deepEqual(
      listed.sessions.map((s) => [s.foreignSessionId, s.sessionId]),
      [["ts-session", added.sessionId]],
    );
    const context = await client.buildContext({ sessionId: added.sessionId });
    assert.deepEqual(
      context.messages.map((m) => m.role),
      ["user"],
    );
    const deleted = await call("session/deleteForeign", client.deleteForeign(key));
    assert.equal(deleted.sessionId, added.sessionId);
    assert.equal((await client.loadForeign(key)).lines, null);
  });

  it("called every session method of the schema", () => {
    const expected = METHOD_NAMES.filter((m) => m in CLIENT_METHOD_NAMES);
    assert.deepEqual([...called].sort(), [...expected].sort());
  });
});

describe("errors", () => {
  let client: SidecarClient;
  before(async () => {
    client = await startClient();
  });
  after(async () => {
    await client.dispose();
  });

  it("an unknown session is a SidecarError with code, kind and data", async () => {
    const error = await client.getTree({ sessionId: "ghost" }).then(
      () => assert.fail("expected an error"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof SidecarError);
    assert.equal(error.code, ErrorCodes.sessionNotFound);
    assert.equal(error.code, -33001);
    assert.equal(error.kind, "sessionNotFound");
    assert.equal(error.data.sessionId, "ghost");
    assert.equal(error.method, "session/getTree");
    assert.match(error.message, /ghost/);
    assert.deepEqual(error.toJSON().data, error.data);
  });

  it("bad params name the field", async () => {
    await assert.rejects(client.create({ cwd: 42 as unknown as string }), (e: unknown) => {
      assert.ok(e instanceof SidecarError);
      assert.equal(e.code, ErrorCodes.invalidParams);
      assert.equal(e.kind, "invalidParams");
      assert.equal(e.data.field, "cwd");
      return true;
    });
    await assert.rejects(client.create({ cwd: "/w", sesionId: "typo" } as never), (e: unknown) => {
      assert.ok(e instanceof SidecarError);
      assert.equal(e.data.field, "sesionId");
      return true;
    });
  });

  it("an unknown entry, an unknown method, nothing to compact", async () => {
    const { sessionId } = await client.create({ cwd: "/work/errors" });
    await assert.rejects(client.branch({ sessionId, entryId: "nope" }), { code: ErrorCodes.entryNotFound, name: "SidecarError" });
    await assert.rejects(client.request("session/nope" as MethodName, {} as never), { code: ErrorCodes.methodNotFound });
    await client.append({ sessionId, entries: toolConversation("tiny") });
    await assert.rejects(client.compact({ sessionId, provider: "offline" }), (e: unknown) => {
      assert.ok(e instanceof SidecarError);
      assert.equal(e.kind, "nothingToCompact");
      return true;
    });
    // The server is still serving.
    assert.equal((await client.getTree({ sessionId })).nodes.length, 4);
  });

  it("initialize's errors reject spawn", async () => {
    await assert.rejects(
      startClient({ settings: { compaction: { reserveTokens: "many" as unknown as number } } }),
      (e: unknown) => {
        assert.ok(e instanceof SidecarError);
        assert.equal(e.code, ErrorCodes.invalidParams);
        assert.match(String(e.data.field ?? e.message), /reserveTokens/);
        return true;
      },
    );
  });
});

describe("initialize", () => {
  it("reports the server, its methods and the sessions root", async () => {
    const root = tempRoot();
    const other = tempRoot();
    const client = await startClient({ root, sessionRoot: other, clientInfo: { name: "test-agent", version: "9" } });
    try {
      assert.equal(client.serverInfo.name, "session-sidecar");
      assert.equal(client.initializeResult.protocolVersion.split(".")[0], "1");
      assert.equal(client.sessionRoot, other, "initialize's sessionRoot wins over --root");
      assert.ok(client.capabilities.methods.includes("session/create"));
      assert.equal(client.initializeResult.settings.providers.default, "offline", "settings overrides were applied");
      const { path } = await client.create({ cwd: "/work/x" });
      assert.ok(path.startsWith(other));
    } finally {
      await client.dispose();
    }
  });
});
