// The Claude Agent SDK's SessionStore kept in a real sidecar (adapters/claude-agent-sdk): the SDK's
// TypeScript store contracts (the 14 of its examples' shared suite, each on a fresh store), and a real
// Claude Code transcript round-tripped deep-equal a turn at a time, its subagent's too.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { SidecarClient } from "@session-sidecar/client";
import {
  SidecarSessionStore,
  type FoldSessionSummary,
  type SessionKey,
  type SessionStoreEntry,
} from "@session-sidecar/client/adapters/claude-agent-sdk";
import { REPO_DIR, removeTempRoots, startClient, tempRoot } from "./helpers.js";

const clients: SidecarClient[] = [];
after(async () => {
  for (const client of clients.splice(0)) await client.dispose();
  removeTempRoots();
});

// The SDK's own fold when it is installed (an optional peer dependency), else a stand-in: the store
// keeps whatever the fold gives verbatim, which is what the summary contract checks.
async function sdkFold(): Promise<FoldSessionSummary> {
  try {
    const sdk = (await import("@anthropic-ai/claude-agent-sdk" as string)) as { foldSessionSummary: FoldSessionSummary };
    return sdk.foldSessionSummary;
  } catch {
    return (prev, key, entries) => ({
      sessionId: key.sessionId,
      mtime: prev?.mtime ?? 0,
      data: { count: Number(prev?.data.count ?? 0) + entries.length, last: entries.at(-1)?.timestamp ?? null },
    });
  }
}

async function fresh(fold?: FoldSessionSummary): Promise<SidecarSessionStore> {
  const client = await startClient();
  clients.push(client);
  return new SidecarSessionStore({ client, ...(fold ? { fold } : {}) });
}

const e = (fields: Record<string, unknown>): SessionStoreEntry => ({ type: "x", ...fields });
const KEY: SessionKey = { projectKey: "proj", sessionId: "sess" };

describe("the SessionStore contracts", () => {
  it("append then load gives the entries in order", async () => {
    const store = await fresh();
    await store.append(KEY, [e({ uuid: "b", n: 1 }), e({ uuid: "a", n: 2 })]);
    assert.deepEqual(await store.load(KEY), [e({ uuid: "b", n: 1 }), e({ uuid: "a", n: 2 })]);
  });

  it("an unknown key loads as null", async () => {
    const store = await fresh();
    assert.equal(await store.load({ projectKey: "proj", sessionId: "nope" }), null);
    await store.append(KEY, [e({ uuid: "x", n: 1 })]);
    assert.equal(await store.load({ ...KEY, subpath: "nope" }), null);
  });

  it("several appends keep their call order; an empty append changes nothing", async () => {
    const store = await fresh();
    await store.append(KEY, [e({ uuid: "z", n: 1 })]);
    await store.append(KEY, [e({ uuid: "a", n: 2 }), e({ uuid: "m", n: 3 })]);
    await store.append(KEY, []);
    await store.append(KEY, [e({ uuid: "b", n: 4 })]);
    assert.deepEqual(
      (await store.load(KEY))?.map((x) => x.uuid),
      ["z", "a", "m", "b"],
    );
  });

  it("a subpath is stored apart from the main transcript; project keys are isolated", async () => {
    const store = await fresh();
    const sub = { ...KEY, subpath: "subagents/agent-1" };
    await store.append(KEY, [e({ uuid: "m" })]);
    await store.append(sub, [e({ uuid: "s" })]);
    assert.deepEqual(await store.load(KEY), [e({ uuid: "m" })]);
    assert.deepEqual(await store.load(sub), [e({ uuid: "s" })]);
    await store.append({ projectKey: "A", sessionId: "s1" }, [e({ from: "A" })]);
    await store.append({ projectKey: "B", sessionId: "s1" }, [e({ from: "B" })]);
    assert.deepEqual(await store.load({ projectKey: "A", sessionId: "s1" }), [e({ from: "A" })]);
    assert.deepEqual(await store.load({ projectKey: "B", sessionId: "s1" }), [e({ from: "B" })]);
    assert.equal((await store.listSessions("A")).length, 1);
  });

  it("listSessions: the project's main transcripts, with epoch-ms mtimes", async () => {
    const store = await fresh();
    await store.append({ projectKey: "proj", sessionId: "a" }, [e({ n: 1 })]);
    await store.append({ projectKey: "proj", sessionId: "b" }, [e({ n: 1 })]);
    await store.append({ projectKey: "other", sessionId: "c" }, [e({ n: 1 })]);
    await store.append({ projectKey: "proj", sessionId: "a", subpath: "subagents/agent-1" }, [e({ n: 1 })]);
    const listed = await store.listSessions("proj");
    assert.deepEqual(listed.map((s) => s.sessionId).sort(), ["a", "b"]);
    assert.ok(listed.every((s) => Number.isInteger(s.mtime) && s.mtime > 1e12));
    assert.deepEqual(await store.listSessions("never-appended-project"), []);
  });

  it("listSessionSummaries: the fold's output kept verbatim, subagents left out, on listSessions' clock", async () => {
    const fold = await sdkFold();
    const store = await fresh(fold);
    const key = { projectKey: "proj", sessionId: "summ-sess" };
    await store.append(key, [
      e({ timestamp: "2024-01-01T00:00:00.000Z", customTitle: "first" }),
      e({ timestamp: "2024-01-01T00:00:01.000Z" }),
    ]);
    await store.append(key, [e({ timestamp: "2024-01-01T00:00:02.000Z", customTitle: "second" })]);
    await store.append({ projectKey: "other", sessionId: "elsewhere" }, [e({ timestamp: "2024-01-01T00:00:00.000Z" })]);
    const [summary, ...rest] = await store.listSessionSummaries("proj");
    assert.deepEqual(rest, []);
    assert.equal(summary?.sessionId, "summ-sess");
    let expected = fold(undefined, key, [
      e({ timestamp: "2024-01-01T00:00:00.000Z", customTitle: "first" }),
      e({ timestamp: "2024-01-01T00:00:01.000Z" }),
    ]);
    expected = fold(expected, key, [e({ timestamp: "2024-01-01T00:00:02.000Z", customTitle: "second" })]);
    assert.deepEqual(summary?.data, expected.data);
    const listed = await store.listSessions("proj");
    assert.ok(summary!.mtime > 1e12 && summary!.mtime >= listed[0]!.mtime);
    await store.append({ ...key, subpath: "subagents/agent-1" }, [e({ customTitle: "subagent" })]);
    assert.deepEqual((await store.listSessionSummaries("proj"))[0]?.data, summary?.data);
    assert.deepEqual(await store.listSessionSummaries("never-appended-project"), []);
    await store.delete(key);
    assert.deepEqual(await store.listSessionSummaries("proj"), []);
  });

  it("delete: the main key cascades to its subkeys and nothing else; a subpath goes alone", async () => {
    const store = await fresh();
    const sub1 = { ...KEY, subpath: "subagents/agent-1" };
    const sub2 = { ...KEY, subpath: "subagents/agent-2" };
    await store.delete({ projectKey: "proj", sessionId: "never-written" });
    for (const key of [KEY, sub1, sub2, { projectKey: "proj", sessionId: "sess2" }, { ...KEY, projectKey: "other" }]) {
      await store.append(key, [e({ n: 1 })]);
    }
    await store.delete(sub1);
    assert.equal(await store.load(sub1), null);
    assert.deepEqual(await store.listSubkeys(KEY), ["subagents/agent-2"]);
    await store.delete(KEY);
    assert.equal(await store.load(KEY), null);
    assert.equal(await store.load(sub2), null);
    assert.deepEqual(await store.listSubkeys(KEY), []);
    assert.equal((await store.load({ projectKey: "proj", sessionId: "sess2" }))?.length, 1);
    assert.equal((await store.load({ ...KEY, projectKey: "other" }))?.length, 1);
    assert.ok(!(await store.listSessions("proj")).some((s) => s.sessionId === KEY.sessionId));
  });

  it("listSubkeys: the session's subpaths, never the main transcript or another session's", async () => {
    const store = await fresh();
    await store.append(KEY, [e({ n: 1 })]);
    assert.deepEqual(await store.listSubkeys(KEY), []);
    await store.append({ ...KEY, subpath: "subagents/agent-1" }, [e({ n: 1 })]);
    await store.append({ ...KEY, subpath: "subagents/agent-2" }, [e({ n: 1 })]);
    await store.append({ ...KEY, sessionId: "other-sess", subpath: "subagents/agent-x" }, [e({ n: 1 })]);
    assert.deepEqual((await store.listSubkeys(KEY)).sort(), ["subagents/agent-1", "subagents/agent-2"]);
    assert.deepEqual(await store.listSubkeys({ projectKey: "proj", sessionId: "never-appended" }), []);
  });
});

describe("a real Claude Code transcript", () => {
  it("round-trips deep-equal a turn at a time and is a real sidecar session", async () => {
    const unpacked = tempRoot("claude-fixture-");
    execFileSync("tar", ["xJf", join(REPO_DIR, "tests/importers/fixtures/claude-code.tar.xz"), "-C", unpacked]);
    const projects = join(unpacked, ".claude/projects");
    const project = join(projects, readdirSync(projects)[0]!);
    const file = readdirSync(project).find((name) => name.endsWith(".jsonl"))!;
    const read = (path: string) =>
      readFileSync(path, "utf8")
        .split("\n")
        .filter((line) => line.trim())
        .map((line) => JSON.parse(line) as SessionStoreEntry);
    const lines = read(join(project, file));
    const sessionId = file.replace(/\.jsonl$/, "");
    const agents = join(project, sessionId, "subagents");
    const agent = readdirSync(agents).find((name) => name.endsWith(".jsonl"))!;
    const meta = JSON.parse(readFileSync(join(agents, agent.replace(/\.jsonl$/, ".meta.json")), "utf8"));
    const subLines = [{ ...meta, type: "agent_metadata" }, ...read(join(agents, agent))];
    const subpath = `subagents/${agent.replace(/\.jsonl$/, "")}`;

    const client = await startClient();
    clients.push(client);
    const store = new SidecarSessionStore({ client });
    const key = { projectKey: "proj", sessionId };
    let batch: SessionStoreEntry[] = [];
    for (const line of lines) {
      const content = line.type === "user" ? (line.message as { content?: unknown } | undefined)?.content : undefined;
      if (typeof content === "string" && batch.length && !line.isCompactSummary) {
        await store.append(key, batch);
        batch = [];
      }
      batch.push(line);
    }
    await store.append(key, batch);
    await store.append({ ...key, subpath }, subLines);
    await store.append(key, lines.filter((line) => line.uuid)); // again: every one skipped
    assert.deepEqual(await store.load(key), lines);
    assert.deepEqual(await store.load({ ...key, subpath }), subLines);
    assert.deepEqual(await store.listSubkeys(key), [subpath]);

    const { sessions } = await client.list({ all: true });
    assert.equal(sessions.length, 1);
    const info = sessions[0]!;
    assert.ok(lines.some((line) => (line.message as { content?: unknown } | undefined)?.content === info.firstMessage));
    const context = await client.buildContext({ sessionId: info.sessionId });
    assert.equal(context.messages[0]?.role, "compactionSummary");
    assert.ok(context.messages.some((m) => m.role === "assistant"));
  });
});
