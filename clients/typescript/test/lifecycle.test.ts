// Starting and stopping: spawn, attach to streams, dispose, a wedged or dying sidecar.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, describe, it } from "node:test";
import { ConnectionClosedError, ProtocolVersionError, SidecarClient, SidecarError } from "@session-sidecar/client";
import { deferred, removeTempRoots, SIDECAR_BIN, startClient, tempRoot, testEnv, toolConversation } from "./helpers.js";

after(removeTempRoots);

function exitOf(child: import("node:child_process").ChildProcess): Promise<{ code: number | null; signal: string | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
}

describe("lifecycle", () => {
  it("dispose shuts down, the process exits 0, and later calls fail with ConnectionClosedError", async () => {
    const client = await startClient();
    const closed = deferred<ConnectionClosedError>();
    client.onClose((e) => closed.resolve(e));
    const { sessionId } = await client.create({ cwd: "/work/dispose" });
    await client.append({ sessionId, entries: toolConversation("x") });
    assert.equal(client.closed, false);

    const first = client.dispose();
    const second = client.dispose();
    assert.equal(await first, 0);
    assert.equal(await second, 0, "dispose twice is harmless");
    assert.equal(client.process!.exitCode, 0);
    assert.equal(client.closed, true);
    assert.ok((await closed.promise) instanceof ConnectionClosedError);

    await assert.rejects(client.list({}), (e: unknown) => {
      assert.ok(e instanceof ConnectionClosedError);
      assert.ok(e instanceof SidecarError);
      assert.equal(e.kind, "serverExited");
      assert.equal(e.method, "session/list");
      return true;
    });
  });

  it("shutdown waits for calls in flight, which still get their answers", async () => {
    const client = await startClient();
    const { sessionId } = await client.create({ cwd: "/work/inflight" });
    const pending = client.append({ sessionId, entries: toolConversation("late") });
    const code = client.dispose();
    const appended = await pending;
    assert.equal(appended.entries.length, 4);
    assert.equal(await code, 0);
  });

  it("`await using` disposes the client at the end of the block", async () => {
    let proc: import("node:child_process").ChildProcess | undefined;
    {
      await using client = await startClient();
      proc = client.process;
      assert.equal((await client.list({})).sessions.length, 0);
    }
    assert.deepEqual(await exitOf(proc!), { code: 0, signal: null });
  });

  it("kills a wedged sidecar after the timeout", async () => {
    const client = await startClient();
    const child = client.process!;
    child.kill("SIGSTOP"); // alive, but answers nothing
    try {
      const started = Date.now();
      const code = await client.dispose({ timeoutMs: 400 });
      const elapsed = Date.now() - started;
      assert.equal(code, null);
      assert.equal(child.signalCode, "SIGKILL");
      assert.ok(elapsed >= 400 && elapsed < 5000, `took ${elapsed} ms`);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  });

  it("a sidecar that dies mid-call fails the call with ConnectionClosedError", async () => {
    const summarizing = deferred();
    const handlerAborted = deferred<unknown>();
    const client = await startClient({
      summarize: (_params, { signal }) => {
        signal.addEventListener("abort", () => handlerAborted.resolve(signal.reason));
        summarizing.resolve();
        return new Promise<string>(() => {}); // never answers
      },
    });
    const { sessionId } = await client.create({ cwd: "/work/dies" });
    for (const t of ["a", "b", "c"]) await client.append({ sessionId, entries: toolConversation(t, 30) });
    const closed = deferred<ConnectionClosedError>();
    client.onClose((e) => closed.resolve(e));
    const call = client.compact({ sessionId, provider: "client", keepRecentTokens: 60 });
    await summarizing.promise;
    client.process!.kill("SIGKILL");
    await assert.rejects(call, (e: unknown) => {
      assert.ok(e instanceof ConnectionClosedError);
      assert.equal(e.method, "session/compact");
      assert.equal(e.code, -32099);
      return true;
    });
    const event = await closed.promise;
    assert.equal(client.closed, true);
    assert.ok(event instanceof ConnectionClosedError);
    await assert.rejects(client.list({}), ConnectionClosedError);
    assert.ok((await handlerAborted.promise) instanceof ConnectionClosedError, "the summarize function's signal fired");
    assert.equal(event.signal, "SIGKILL");
    assert.equal(await client.dispose(), null, "killed: no exit code");
  });

  it("a missing executable rejects spawn with a clear error", async () => {
    await assert.rejects(SidecarClient.spawn({ command: "/nonexistent/session-sidecar" }), (e: unknown) => {
      assert.ok(e instanceof ConnectionClosedError);
      assert.match(e.message, /ENOENT/);
      assert.match(e.message, /install session-sidecar or pass its path/);
      return true;
    });
  });

  it("a sidecar that exits at once rejects spawn, with its log in the error", async () => {
    await assert.rejects(startClient({ args: ["--no-such-flag"] }), (e: unknown) => {
      assert.ok(e instanceof ConnectionClosedError);
      assert.equal(e.exitCode, 2, "argparse's usage error");
      assert.match(e.stderr, /no-such-flag/);
      return true;
    });
  });

  it("keeps the sidecar's log", async () => {
    const client = await startClient({ args: ["--log-level", "info"] });
    try {
      await client.list({});
      assert.match(client.stderr, /sessions root/);
    } finally {
      await client.dispose();
    }
  });

  it("attaches to streams it is given", async () => {
    const root = tempRoot();
    const child = spawn(SIDECAR_BIN, ["--root", root], { stdio: ["pipe", "pipe", "ignore"], env: testEnv() });
    const exited = exitOf(child);
    const client = await SidecarClient.connect(child.stdout, child.stdin, { settings: { providers: { default: "offline" } } });
    assert.equal(client.process, undefined);
    assert.equal(client.sessionRoot, root);
    const { sessionId } = await client.create({ cwd: "/work/attached" });
    await client.append({ sessionId, entries: toolConversation("attached") });
    assert.equal((await client.list({ cwd: "/work/attached" })).sessions.length, 1);
    assert.equal(await client.dispose(), null, "not our process: no exit code to give");
    assert.deepEqual(await exited, { code: 0, signal: null }, "shutdown, exit and the end of input stopped it cleanly");
  });

  it("refuses a sidecar that reports another protocol major, naming both versions", async () => {
    // The real sidecar, told (test-only) to report protocol 2.0 in its initialize answer.
    const env = { ...testEnv(), SIDECAR_TEST_REPORT_PROTOCOL_VERSION: "2.0" };
    await assert.rejects(startClient({ env }), (e: unknown) => {
      assert.ok(e instanceof ProtocolVersionError);
      assert.equal(e.serverVersion, "2.0");
      assert.equal(e.clientVersion, "1.0");
      assert.match(e.message, /speaks protocol 2\.0 but this client speaks 1\.0/);
      return true;
    });
  });

  it("accepts a newer minor of the same major; command may be a program and its leading arguments", async () => {
    const env = { ...testEnv(), SIDECAR_TEST_REPORT_PROTOCOL_VERSION: "1.7" };
    const client = await startClient({ env, command: ["env", SIDECAR_BIN] });
    try {
      assert.equal(client.initializeResult.protocolVersion, "1.7");
      const { sessionId } = await client.create({ cwd: "/work/minor" });
      assert.ok(sessionId);
    } finally {
      assert.equal(await client.dispose(), 0);
    }
  });
});
