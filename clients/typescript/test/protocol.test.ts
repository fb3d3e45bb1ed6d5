// The client against the contract: src/protocol.ts is what the generator makes of
// protocol/schema.json today, the live sidecar serves exactly the schema's methods,
// and the client has a typed method for each.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  CLIENT_METHOD_NAMES,
  ErrorCodes,
  METHOD_NAMES,
  PROTOCOL_VERSION,
  SERVER_NOTIFICATION_NAMES,
  SERVER_REQUEST_NAMES,
  SidecarClient,
  type AppendParams,
  type BuildContextResult,
  type Methods,
  type ServerRequests,
} from "@session-sidecar/client";
import { PACKAGE_DIR, removeTempRoots, SCHEMA_PATH, schema, startClient, validate } from "./helpers.js";

after(removeTempRoots);

describe("the generated protocol types", () => {
  it("src/protocol.ts is up to date with protocol/schema.json", () => {
    const regenerated = execFileSync(process.execPath, [join(PACKAGE_DIR, "scripts/gen-protocol.mjs"), "--stdout", "--schema", SCHEMA_PATH], {
      encoding: "utf8",
    });
    const committed = readFileSync(join(PACKAGE_DIR, "src/protocol.ts"), "utf8");
    assert.ok(
      regenerated === committed,
      "src/protocol.ts is stale: the protocol changed. Run `npm run generate` in clients/typescript, then fix what no longer compiles",
    );
  });

  it("the generator refuses schema it does not understand instead of typing it `any`", () => {
    const broken = structuredClone(schema);
    broken.$defs.CreateParams.properties.cwd = { type: "string", pattern: "^/" };
    const script = join(PACKAGE_DIR, "scripts/gen-protocol.mjs");
    const code = `import(${JSON.stringify(script)}).then(m => m.render(${JSON.stringify(broken)}))`;
    assert.throws(
      () => execFileSync(process.execPath, ["--input-type=module", "-e", code], { stdio: "pipe" }),
      (e: { stderr: Buffer }) => /unsupported schema keyword pattern/.test(String(e.stderr)),
    );
  });

  it("lists the schema's methods, server requests, notifications and error codes", () => {
    assert.equal(PROTOCOL_VERSION, schema.protocolVersion);
    assert.deepEqual([...METHOD_NAMES], Object.keys(schema.methods));
    assert.deepEqual([...SERVER_REQUEST_NAMES], Object.keys(schema.serverRequests ?? {}));
    assert.deepEqual([...SERVER_NOTIFICATION_NAMES], Object.keys(schema.notifications.serverToClient));
    assert.deepEqual(
      Object.entries(ErrorCodes),
      schema.errors.map((e: { kind: string; code: number }) => [e.kind, e.code]),
    );
  });

  it("maps every method to a client method: session/x to x, family/x to familyX", () => {
    const clientMethods = METHOD_NAMES.filter((m) => m.startsWith("session/") || m.startsWith("history/"));
    assert.deepEqual(Object.keys(CLIENT_METHOD_NAMES).sort(), [...clientMethods].sort());
    for (const [method, name] of Object.entries(CLIENT_METHOD_NAMES)) {
      const [family, bare] = method.split("/");
      const expected = family === "session" ? bare : family + bare.charAt(0).toUpperCase() + bare.slice(1);
      assert.equal(name, expected);
      assert.equal(typeof (SidecarClient.prototype as unknown as Record<string, unknown>)[name], "function", `client.${name}()`);
    }
  });

  it("types fields as the schema does (checked by the compiler)", () => {
    // These lines compile only while the generated types keep these shapes.
    const append: AppendParams = { sessionId: "s", entries: [{ type: "message", message: { role: "user", content: "hi" } }], parentId: null };
    const leaf: BuildContextResult["leafId"] = null;
    const summarize: ServerRequests["session/summarize"]["result"] = { text: "t" };
    const listParams: Methods["session/list"]["params"] = {};
    // @ts-expect-error entries is required
    const missing: AppendParams = { sessionId: "s" };
    // @ts-expect-error format is "agent" | "llm"
    const format: Methods["session/buildContext"]["params"]["format"] = "html";
    assert.deepEqual([append.parentId, leaf, summarize.text, listParams, missing.sessionId, format], [null, null, "t", {}, "s", "html"]);
  });

  it("the schema validator of these tests is not vacuous", () => {
    const result = { sessionId: "s", path: "/p", header: {} };
    assert.deepEqual(validate(schema.methods["session/create"].result, result), []);
    assert.notDeepEqual(validate(schema.methods["session/create"].result, { ...result, path: 1 }), []);
    assert.notDeepEqual(validate(schema.methods["session/create"].result, { sessionId: "s", path: "/p" }), []);
    assert.notDeepEqual(validate(schema.methods["session/create"].result, { ...result, extra: true }), []);
    assert.deepEqual(validate(schema.methods["session/continueRecent"].result, null), []);
  });
});

describe("the live sidecar", () => {
  let client: SidecarClient;
  before(async () => {
    client = await startClient();
  });
  after(async () => {
    await client.dispose();
  });

  it("serves exactly the schema's methods", () => {
    assert.deepEqual([...client.capabilities.methods].sort(), [...METHOD_NAMES].sort());
  });

  it("speaks this client's protocol major version", () => {
    assert.equal(client.initializeResult.protocolVersion.split(".")[0], PROTOCOL_VERSION.split(".")[0]);
  });

  it("returns initialize's result and settings as the schema describes them", () => {
    assert.deepEqual(validate(schema.methods.initialize.result, client.initializeResult), []);
    assert.deepEqual(validate(schema.settings, client.initializeResult.settings), []);
  });
});
