// Live sessions over a shared sidecar's unix socket: an observer follows a controller.

import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { createConnection } from "node:net";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, it } from "node:test";
import { ErrorCodes, SidecarClient, SidecarError } from "@session-sidecar/client";
import { SIDECAR_BIN, removeTempRoots, tempRoot, testEnv, toolConversation } from "./helpers.js";

after(removeTempRoots);

async function attach(path: string): Promise<SidecarClient> {
  const socket = createConnection(path);
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  return SidecarClient.connect(socket, socket);
}

describe("a shared sidecar (serve --socket)", () => {
  let server: ChildProcess;
  let path: string;

  before(async () => {
    const dir = tempRoot("sidecar-ts-live-");
    path = join(dir, "live.sock");
    server = spawn(SIDECAR_BIN, ["serve", "--root", join(dir, "sessions"), "--socket", path], {
      env: testEnv(),
      stdio: ["ignore", "pipe", "inherit"],
    });
    for await (const line of createInterface({ input: server.stdout! })) {
      if (line.includes("ready")) break;
    }
  });
  after(async () => {
    const exited = new Promise<number | null>((resolve) => server.once("exit", (code) => resolve(code)));
    server.kill("SIGTERM");
    assert.equal(await exited, 0);
  });

  it("an observer hears the controller's appends and branch; it may not write until it takes control", async () => {
    const controller = await attach(path);
    const observer = await attach(path);
    const heard: string[] = [];
    observer.onDidAppend((p) => heard.push(`append ${p.entries.map((e) => e.id).join(",")}`));
    observer.onNotification("session/didChangeLeaf", (p) => heard.push(`leaf ${(p as { leafId: string }).leafId}`));
    const lost: string[] = [];
    controller.onNotification("session/didLoseControl", (p) => lost.push((p as { sessionId: string }).sessionId));

    const { sessionId } = await controller.create({ cwd: "/work/app" });
    await controller.append({ sessionId, entries: toolConversation("a", 1).slice(0, 2) });
    await observer.subscribe({ sessionId });
    const one = await controller.append({ sessionId, entries: toolConversation("b", 1).slice(0, 1) });
    const first = one.entries[0]!.id;
    await controller.branch({ sessionId, entryId: first });
    await controller.getTree({ sessionId });
    await observer.getTree({ sessionId }); // the observer's round trip: its notifications are in
    assert.deepEqual(heard, [`append ${first}`, `leaf ${first}`]);

    await assert.rejects(observer.append({ sessionId, entries: toolConversation("c", 1).slice(0, 1) }), (error: unknown) => {
      assert.ok(error instanceof SidecarError);
      assert.equal(error.code, ErrorCodes.notController);
      return true;
    });
    const taken = await observer.takeControl({ sessionId });
    assert.equal(taken.tookOver, true);
    await controller.getTree({ sessionId });
    assert.deepEqual(lost, [sessionId]);
    await observer.append({ sessionId, entries: toolConversation("d", 1).slice(0, 1) });

    await observer.dispose();
    await controller.dispose();
  });
});

describe("a sidecar serving TCP (serve --listen) with a token", () => {
  let server: ChildProcess;
  let port = 0;
  let token = "";

  before(async () => {
    const dir = tempRoot("sidecar-ts-tcp-");
    const tokenFile = join(dir, "token");
    server = spawn(SIDECAR_BIN, ["serve", "--root", join(dir, "sessions"), "--listen", "127.0.0.1:0", "--token-file", tokenFile], {
      env: testEnv(),
      stdio: ["ignore", "pipe", "inherit"],
    });
    for await (const line of createInterface({ input: server.stdout! })) {
      if (line.includes("listening on")) port = Number(line.slice(line.lastIndexOf(":") + 1));
      if (line.includes("ready")) break;
    }
    token = readFileSync(tokenFile, "utf8").trim();
  });
  after(async () => {
    const exited = new Promise<number | null>((resolve) => server.once("exit", (code) => resolve(code)));
    server.kill("SIGTERM");
    assert.equal(await exited, 0);
  });

  async function tcp(options: { token?: string }): Promise<SidecarClient> {
    const socket = createConnection(port, "127.0.0.1");
    await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
    return SidecarClient.connect(socket, socket, options);
  }

  it("the right token is served; a wrong or missing one is refused with unauthorized", async () => {
    assert.ok(port > 0);
    for (const offered of [undefined, "a-wrong-token-of-enough-length"]) {
      await assert.rejects(tcp(offered === undefined ? {} : { token: offered }), (error: unknown) => {
        assert.ok(error instanceof SidecarError);
        assert.equal(error.code, ErrorCodes.unauthorized);
        assert.match(error.message, /token/);
        return true;
      });
    }
    const client = await tcp({ token });
    const { sessionId } = await client.create({ cwd: "/work/tcp" });
    assert.ok(sessionId);
    await client.dispose();
  });
});
