// Every transcript in protocol/vectors/ against a real sidecar, twice:
//
// - on the wire: each message framed by vscode-jsonrpc's own StreamMessageWriter
//   and read back with its StreamMessageReader (the transport this client uses),
//   ids and all, in LSP framing (the only framing this client speaks);
// - through SidecarClient: each request made with `client.request`, its result or
//   SidecarError matched against the expected answer, so the typed client returns
//   exactly what the transcript says.

import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { StreamMessageReader, StreamMessageWriter, type Message } from "vscode-jsonrpc/node";
import { METHOD_NAMES, SidecarClient, SidecarError, type MethodName, type WorkDoneProgress } from "@session-sidecar/client";
import { assertResultFits, removeTempRoots, schema, SIDECAR_BIN, tempRoot, testEnv, VECTORS_DIR } from "./helpers.js";
import { match, Mismatch, substitute, type Names, type Step } from "./vectors.js";

after(removeTempRoots);

const FRAMING = "lsp";
const RECEIVE_TIMEOUT = 10_000;

const vectorFiles = readdirSync(VECTORS_DIR)
  .filter((name) => name.endsWith(".json"))
  .sort();

function load(name: string): Step[] {
  return JSON.parse(readFileSync(join(VECTORS_DIR, name), "utf8"));
}

function where(name: string, index: number, step: Step): string {
  return `${name} step ${index}${step.comment ? ` (${step.comment})` : ""}`;
}

function endsWithExit(steps: Step[]): boolean {
  return steps.at(-1)?.send?.method === "exit";
}

/** Messages from the sidecar, in order, read by vscode-jsonrpc's reader. */
class Inbox {
  private readonly queue: Message[] = [];
  private waiter: (() => void) | undefined;
  constructor(reader: StreamMessageReader) {
    reader.listen((message) => {
      this.queue.push(message);
      this.waiter?.();
    });
  }
  async next(): Promise<Message> {
    const deadline = Date.now() + RECEIVE_TIMEOUT;
    while (this.queue.length === 0) {
      if (Date.now() > deadline) throw new Error(`no message from the sidecar within ${RECEIVE_TIMEOUT} ms`);
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
        setTimeout(resolve, 100);
      });
    }
    return this.queue.shift()!;
  }
  get pending(): Message[] {
    return this.queue;
  }
}

function exitCode(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

describe("protocol vectors", () => {
  it("there are vectors to replay", () => {
    assert.ok(vectorFiles.length >= 3, `only ${vectorFiles.length} vectors in ${VECTORS_DIR}`);
  });

  it("the matcher rejects what it should", () => {
    const names: Names = { root: "/r" };
    match({ a: "<capture:x>", b: "${x}", p: "${root}/<*>_s.jsonl" }, { a: 5, b: 5, p: "/r/2025_s.jsonl" }, names);
    assert.equal(names.x, 5);
    const wrong: [unknown, unknown][] = [
      [{ a: 1 }, { a: 1, b: 2 }],
      [{ a: 1, b: 2 }, { a: 1 }],
      ["<integer>", true],
      ["<integer>", 1.5],
      ["<string>", 1],
      ["<timestamp>", "yesterday"],
      ["${root}/<*>_s.jsonl", "/other/x_s.jsonl"],
      [[1, 2], [1]],
      [null, {}],
      ["<any>", undefined].reverse() as [unknown, unknown],
    ];
    for (const [expected, actual] of wrong) {
      assert.throws(() => match(expected, actual, { ...names }), Mismatch, JSON.stringify([expected, actual]));
    }
  });

  for (const name of vectorFiles) {
    it(`${name}: on the wire`, async () => {
      const steps = load(name);
      const root = tempRoot();
      const names: Names = { root };
      const child = spawn(SIDECAR_BIN, ["--root", root], { stdio: ["pipe", "pipe", "pipe"], env: testEnv() });
      let log = "";
      child.stderr!.on("data", (chunk) => (log += chunk));
      const writer = new StreamMessageWriter(child.stdin!);
      const inbox = new Inbox(new StreamMessageReader(child.stdout!));
      try {
        for (const [index, step] of steps.entries()) {
          if ((step.framing ?? FRAMING) !== FRAMING) continue;
          if (step.send) await writer.write(substitute(step.send, names));
          if (step.sendRaw !== undefined) child.stdin!.write(Buffer.from(step.sendRaw, "utf8"));
          for (const expected of step.expect ?? []) {
            const actual = await inbox.next();
            try {
              match(expected, actual, names);
            } catch (error) {
              throw new Error(`${where(name, index, step)}: ${(error as Error).message}`);
            }
          }
        }
        if (endsWithExit(steps)) {
          assert.equal(await exitCode(child), 0, `the sidecar exits 0 after exit; its log:\n${log}`);
          assert.deepEqual(inbox.pending, [], "nothing sent beyond the transcript");
        }
      } finally {
        if (child.exitCode === null) child.kill("SIGKILL");
      }
    });

    it(`${name}: through SidecarClient`, async (t) => {
      const all = load(name);
      // A client initializes itself: requests before initialize cannot go through it, so
      // the transcript is replayed from its initialize on (the wire replay covers the rest).
      const start = all.findIndex((s) => s.send?.method === "initialize" && "id" in s.send);
      assert.ok(start >= 0, `${name} never initializes`);
      if (start > 0) t.diagnostic(`${start} step(s) before initialize replayed on the wire only`);
      const steps = all.slice(start);
      const root = tempRoot();
      const names: Names = { root };
      let client: SidecarClient | undefined;
      const notifications: { method: string; params: unknown }[] = [];
      let replayed = 0;
      try {
        for (const [index, step] of steps.entries()) {
          if ((step.framing ?? FRAMING) !== FRAMING) continue;
          const at = where(name, index, step);
          if (step.sendRaw !== undefined) {
            // Malformed bytes are the wire replay's business; the client only ever sends
            // well-formed frames. Read nothing here: their answers (id null) go unclaimed.
            continue;
          }
          const message = substitute(step.send, names) as Record<string, any>;
          const expected = step.expect ?? [];
          const isRequest = "id" in message;
          if (!isRequest) {
            if (message.method === "initialized") assert.ok(client, `${at}: initialized before initialize`);
            else if (message.method === "exit") {
              assert.ok(client, `${at}: exit before initialize`);
              const code = await client.dispose();
              if (index === steps.length - 1) assert.equal(code, 0, `${at}: the sidecar exits 0`);
            } else await client!.connection.sendNotification(message.method, message.params);
            assert.deepEqual(expected, [], `${at}: the replayer expects no answer to a notification`);
            continue;
          }
          const response = expected.find((m) => !("method" in m));
          assert.ok(response, `${at}: a request's step expects its response`);
          const progressExpected = expected.filter((m) => m.method === "$/progress");
          const otherExpected = expected.filter((m) => "method" in m && m.method !== "$/progress");

          let outcome: { result?: unknown; error?: unknown };
          const progress: WorkDoneProgress[] = [];
          if (!client) {
            assert.equal(message.method, "initialize");
            const params = message.params ?? {};
            try {
              client = await SidecarClient.spawn({
                command: SIDECAR_BIN,
                root,
                env: testEnv(),
                clientInfo: params.clientInfo,
                sessionRoot: params.sessionRoot,
                settings: params.settings,
              });
              // Every notification a transcript may expect (subscriptions' events among them).
              for (const method of Object.keys(schema.notifications.serverToClient).filter((m) => m !== "$/progress")) {
                client.onNotification(method, (p) => notifications.push({ method, params: p }));
              }
              outcome = { result: client.initializeResult };
            } catch (error) {
              if (!(error instanceof SidecarError)) throw error;
              outcome = { error: error.toJSON() };
            }
          } else {
            const { workDoneToken, ...params } = message.params ?? {};
            const hasParams = message.params !== undefined && message.params !== null;
            const options = workDoneToken !== undefined ? { onProgress: (v: WorkDoneProgress) => progress.push(v) } : {};
            try {
              const result = await client.request(message.method as MethodName, (hasParams ? params : null) as never, options);
              if ((METHOD_NAMES as readonly string[]).includes(message.method)) assertResultFits(message.method, result);
              outcome = { result };
            } catch (error) {
              if (!(error instanceof SidecarError)) throw error;
              outcome = { error: error.toJSON() };
            }
          }
          try {
            const { jsonrpc: _jsonrpc, id: _id, ...answer } = response;
            match(answer, outcome, names);
            match(
              progressExpected.map((m) => m.params.value),
              progress,
              names,
            );
            for (const note of otherExpected) {
              const deadline = Date.now() + RECEIVE_TIMEOUT;
              while (notifications.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
              const got = notifications.shift();
              match({ method: note.method, params: note.params }, got, names);
            }
          } catch (error) {
            throw new Error(`${at}: ${(error as Error).message}`);
          }
          replayed++;
        }
        assert.ok(replayed > 0);
        assert.deepEqual(notifications, [], "no notifications beyond the transcript");
      } finally {
        await client?.dispose({ timeoutMs: 2000 });
      }
    });
  }
});
