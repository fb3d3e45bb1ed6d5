// No call is ever left waiting, and the documented errors are what comes back
// (issue 37 items 2 and 3), against a real sidecar; the id-null rule also
// against a scripted peer, where which frame went unread is known.

import assert from "node:assert/strict";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { after, describe, it } from "node:test";
import {
  ConnectionClosedError,
  ErrorCodes,
  MAX_MESSAGE_BYTES,
  RequestCancelledError,
  SidecarClient,
  SidecarError,
  SidecarServer,
} from "@session-sidecar/client";
import { removeTempRoots, SIDECAR_BIN, startClient, tempRoot, testEnv, toolConversation } from "./helpers.js";

after(removeTempRoots);

/** Resolves to how long `promise` took to settle (ms), failing past `limitMs`. */
async function settlesWithin<T>(promise: Promise<T>, limitMs: number): Promise<{ ms: number; value?: T; error?: unknown }> {
  const started = Date.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still pending after ${limitMs} ms`)), limitMs);
  });
  try {
    const value = await Promise.race([promise, limit]);
    return { ms: Date.now() - started, value };
  } catch (error) {
    if (error instanceof Error && error.message.startsWith("still pending")) throw error;
    return { ms: Date.now() - started, error };
  } finally {
    clearTimeout(timer);
  }
}

describe("no call is left waiting", () => {
  it("a string cut mid-emoji goes out as JSON.stringify writes it and comes back the same", async () => {
    const client = await startClient();
    try {
      const cut = "tool output cut here: " + "😀".slice(0, 1);
      assert.match(JSON.stringify(cut), /\\ud83d"$/, "Node's encoder writes the lone surrogate as an escape");
      const { sessionId } = await client.create({ cwd: "/work/cut" });
      const outcome = await settlesWithin(
        client.append({ sessionId, entries: [{ type: "message", message: { role: "user", content: [{ type: "text", text: cut }] } }] }),
        5000,
      );
      assert.equal(outcome.error, undefined, `the sidecar accepts a lone surrogate: ${String(outcome.error)}`);
      const context = await client.buildContext({ sessionId, format: "llm" });
      assert.equal(JSON.stringify(context.messages).includes(JSON.stringify(cut).slice(1, -1)), true);
    } finally {
      await client.dispose();
    }
  });

  it("a request over the frame limit fails in the client with payloadTooLarge, before sending", async () => {
    const client = await startClient();
    try {
      const { sessionId } = await client.create({ cwd: "/work/big" });
      const huge = "x".repeat(MAX_MESSAGE_BYTES + 1024);
      const outcome = await settlesWithin(
        client.append({ sessionId, entries: [{ type: "message", message: { role: "user", content: [{ type: "text", text: huge }] } }] }),
        3000,
      );
      assert.ok(outcome.error instanceof SidecarError, String(outcome.error));
      assert.equal(outcome.error.code, ErrorCodes.payloadTooLarge);
      assert.equal(outcome.error.kind, "payloadTooLarge");
      assert.equal(outcome.error.method, "session/append");
      assert.ok((outcome.error.data.bytes as number) > MAX_MESSAGE_BYTES);
      // Nothing was sent: the session has no entry, and the sidecar is serving.
      const tree = await client.getEntries({ sessionId });
      assert.equal(tree.entries.length, 0);
    } finally {
      await client.dispose();
    }
  });

  it("a BigInt in tool arguments fails as the encoder's TypeError, and the connection is fine", async () => {
    const client = await startClient();
    try {
      const { sessionId } = await client.create({ cwd: "/work/bigint" });
      const entry = {
        type: "message",
        message: { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "count", arguments: { n: 10n } }], stopReason: "toolUse" },
      };
      const outcome = await settlesWithin(client.append({ sessionId, entries: [entry as never] }), 1000);
      assert.ok(outcome.error instanceof TypeError, String(outcome.error));
      assert.match(String((outcome.error as Error).message), /BigInt/);
      assert.equal(client.closed, false);
      assert.equal((await client.append({ sessionId, entries: toolConversation("after") })).entries.length > 0, true);
    } finally {
      await client.dispose();
    }
  });

  it("a frame the sidecar cannot read (nested too deep) settles its call within a second", async () => {
    const client = await startClient();
    try {
      const { sessionId } = await client.create({ cwd: "/work/deep" });
      let deep: unknown = "bottom";
      for (let i = 0; i < 3000; i++) deep = [deep]; // past what the sidecar's decoder reads, within Node's
      const outcome = await settlesWithin(
        client.append({ sessionId, entries: [{ type: "custom", customType: "deep", data: deep } as never] }),
        1000,
      );
      assert.ok(outcome.error instanceof SidecarError, String(outcome.error));
      assert.ok([ErrorCodes.parseError, ErrorCodes.invalidParams].includes(outcome.error.code as never), String(outcome.error.code));
      await client.list({ limit: 1 }); // still serving
    } finally {
      await client.dispose();
    }
  });

  it("an aborted call the sidecar never answers settles after the grace, unconfirmed", async () => {
    const client = await startClient({ cancelGraceMs: 200 });
    try {
      const { sessionId } = await client.create({ cwd: "/work/stopped" });
      client.process!.kill("SIGSTOP"); // the sidecar reads and answers nothing from here
      const outcome = await settlesWithin(client.getEntries({ sessionId }, { signal: AbortSignal.timeout(100) }), 1000);
      client.process!.kill("SIGCONT");
      assert.ok(outcome.error instanceof RequestCancelledError, String(outcome.error));
      assert.equal(outcome.error.name, "AbortError");
      assert.equal(outcome.error.data.confirmed, false);
      assert.equal((outcome.error.cause as Error).name, "TimeoutError");
      assert.ok(outcome.ms < 600, `settled in ${outcome.ms} ms`);
      // The late answer is dropped; the connection goes on.
      assert.equal((await client.getEntries({ sessionId })).entries.length, 0);
    } finally {
      await client.dispose();
    }
  });
});

describe("an error answered with id null (scripted peer)", () => {
  /** A client over in-memory streams; `peer` reads its frames and writes answers. */
  async function scripted() {
    const toClient = new PassThrough();
    const fromClient = new PassThrough();
    const frames: any[] = [];
    let buffer = "";
    const waiting: Array<() => void> = [];
    fromClient.setEncoding("utf8");
    fromClient.on("data", (chunk: string) => {
      buffer += chunk;
      for (;;) {
        const m = /^Content-Length: (\d+)\r\n\r\n/.exec(buffer);
        if (!m || buffer.length < m[0].length + Number(m[1])) break;
        frames.push(JSON.parse(buffer.slice(m[0].length, m[0].length + Number(m[1]))));
        buffer = buffer.slice(m[0].length + Number(m[1]));
        waiting.splice(0).forEach((wake) => wake());
      }
    });
    const send = (message: object) => {
      const body = JSON.stringify({ jsonrpc: "2.0", ...message });
      toClient.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    };
    const frame = async (n: number) => {
      while (frames.length <= n) await new Promise<void>((wake) => waiting.push(wake));
      return frames[n];
    };
    const opening = SidecarClient.connect(toClient, fromClient);
    const init = await frame(0);
    send({ id: init.id, result: { protocolVersion: "1.0", serverInfo: { name: "peer" }, capabilities: { methods: [] }, sessionRoot: "/r", settings: {} } });
    const client = await opening;
    return { client, frame, send, frames };
  }
  const parseError = { id: null, error: { code: -32700, message: "could not read the frame", data: { kind: "parseError" } } };

  it("settles the one call in flight", async () => {
    const { client, frame, send } = await scripted();
    const call = client.list({});
    await frame(2);
    send(parseError);
    await assert.rejects(call, (e: unknown) => e instanceof SidecarError && e.code === -32700 && e.method === "session/list");
    await client.dispose({ timeoutMs: 50 });
  });

  it("with several in flight, settles the one whose frame holds a lone surrogate", async () => {
    const { client, frame, send } = await scripted();
    const good = client.list({});
    const cut = client.setName({ sessionId: "s", name: "😀".slice(0, 1) });
    const goodFrame = await frame(2);
    await frame(3);
    send(parseError);
    await assert.rejects(cut, (e: unknown) => e instanceof SidecarError && e.code === -32700 && e.method === "session/setName");
    send({ id: goodFrame.id, result: { sessions: [] } });
    assert.deepEqual(await good, { sessions: [] });
    await client.dispose({ timeoutMs: 50 });
  });

  it("with several in flight and none suspect, reports it and leaves them to their signals", async () => {
    const { client, frame, send } = await scripted();
    const reported: unknown[] = [];
    client.connection.onProtocolError((e) => reported.push(e));
    const keepAlive = setTimeout(() => {}, 5000); // AbortSignal.timeout's timer does not hold the event loop
    const a = client.list({}, { signal: AbortSignal.timeout(50) });
    const b = client.list({});
    await frame(3);
    send(parseError);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(reported.length, 1);
    await assert.rejects(a, RequestCancelledError); // its signal, after the grace (nobody answers the cancel)
    const bFrame = await frame(3);
    send({ id: bFrame.id, result: { sessions: [] } });
    assert.deepEqual(await b, { sessions: [] });
    clearTimeout(keepAlive);
    await client.dispose({ timeoutMs: 50 });
  });
});

describe("the error contract", () => {
  it("after dispose, every call and notify fails with ConnectionClosedError", async () => {
    const client = await startClient();
    const { sessionId } = await client.create({ cwd: "/work/closed" });
    await client.dispose();
    const calls: Array<[string, () => Promise<unknown>]> = [
      ["create", () => client.create({ cwd: "/work/x" })],
      ["append", () => client.append({ sessionId, entries: toolConversation("late") })],
      ["buildContext", () => client.buildContext({ sessionId, format: "llm" })],
      ["list", () => client.list({})],
      ["compact", () => client.compact({ sessionId })],
      ["request", () => client.request("session/getTree", { sessionId })],
    ];
    for (const [name, call] of calls) {
      await assert.rejects(call(), (e: unknown) => {
        assert.ok(e instanceof ConnectionClosedError, `${name}: ${String(e)}`);
        assert.equal(e.code, -32099);
        assert.equal(e.kind, "serverExited");
        return true;
      });
    }
    assert.throws(() => client.notify("$/cancelRequest", { id: 1 }), ConnectionClosedError);
  });

  it("a sidecar killed by SIGKILL is reported by its signal's name", async () => {
    const client = await startClient();
    const pending = client.list({}, { signal: AbortSignal.timeout(30_000) });
    client.process!.kill("SIGKILL");
    await assert.rejects(pending, (e: unknown) => {
      assert.ok(e instanceof ConnectionClosedError, String(e));
      assert.equal(e.signal, "SIGKILL");
      assert.equal(e.exitCode, null);
      assert.match(e.message, /killed by SIGKILL/);
      assert.doesNotMatch(e.message, /code -1|code null/);
      return true;
    });
    await assert.rejects(client.list({}), /killed by SIGKILL/);
    assert.throws(() => client.notify("exit"), /killed by SIGKILL/);
  });
});

describe("a socket server", () => {
  it("SidecarServer.start waits until ready; two clients share it; stop ends it", async () => {
    const dir = tempRoot();
    const socket = join(dir, "sidecar.sock");
    const server = await SidecarServer.start({ socket, command: SIDECAR_BIN, root: join(dir, "sessions"), env: testEnv() });
    try {
      const agent = await SidecarClient.connectSocket(socket);
      const observer = await SidecarClient.connectSocket(socket);
      const { sessionId } = await agent.create({ cwd: "/work/team" });
      await agent.append({ sessionId, entries: toolConversation("shared") });
      const page = await observer.list({ all: true });
      assert.ok(page.sessions.some((s) => s.sessionId === sessionId));
      await agent.dispose();
      assert.equal((await observer.list({ all: true })).sessions.length, 1, "the server outlives one client");
      await observer.dispose();
    } finally {
      assert.equal(await server.stop(), 0);
    }
    await assert.rejects(SidecarClient.connectSocket(socket, { waitMs: 100 }), ConnectionClosedError);
  });

  it("a server that cannot start rejects with its log", async () => {
    const dir = tempRoot();
    await assert.rejects(
      SidecarServer.start({ socket: join(dir, "no", "such", "dir", "s.sock"), command: SIDECAR_BIN, root: dir, env: testEnv() }),
      (e: unknown) => e instanceof ConnectionClosedError && /before it was ready/.test(e.message),
    );
  });
});
