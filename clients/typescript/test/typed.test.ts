// Typed messages as an agent author uses them (issue 37 item 1): an llm-format
// context narrowed by role with the generated constants, typed entries, and one
// typed handler per notification on a subscription. This file compiling is half
// the test; test/must-not-compile/ (run by test.sh) is the other half.

import assert from "node:assert/strict";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import {
  AgentMessageRole,
  BuildContextParamsFormat,
  isKnownEntry,
  SessionEntryType,
  SidecarClient,
  SidecarServer,
  type DidSetLabelParams,
  type LlmMessage,
  type StoredEntry,
} from "@session-sidecar/client";
import { deferred, removeTempRoots, SIDECAR_BIN, startClient, tempRoot, testEnv, toolConversation } from "./helpers.js";

after(removeTempRoots);

/** What an agent does with an llm-format context: every field typed, no casts. */
function describeTurn(messages: LlmMessage[]): string[] {
  return messages.map((msg) => {
    switch (msg.role) {
      case AgentMessageRole.user:
        return `user: ${typeof msg.content === "string" ? msg.content : (msg.content ?? []).map((b) => (b.type === "text" ? b.text : `[${b.mimeType}]`)).join("")}`;
      case AgentMessageRole.assistant:
        return `assistant: ${(msg.content ?? []).map((b) => (b.type === "toolCall" ? `${b.name}(${JSON.stringify(b.arguments)})#${b.id}` : b.type === "text" ? b.text : b.type)).join(" ")} [${msg.stopReason}]`;
      case AgentMessageRole.toolResult:
        return `toolResult#${msg.toolCallId} ${msg.toolName}${msg.isError ? " (error)" : ""}`;
      default:
        return msg.role;
    }
  });
}

describe("typed messages", () => {
  it("buildContext in llm format returns messages narrowed by role", async () => {
    const client = await startClient();
    try {
      const { sessionId } = await client.create({ cwd: "/work/typed" });
      await client.append({ sessionId, entries: toolConversation("parser") });
      const context = await client.buildContext({ sessionId, format: BuildContextParamsFormat.llm });
      const lines = describeTurn(context.messages);
      assert.equal(lines.length, 4);
      assert.equal(lines[0], "user: look at parser");
      assert.match(lines[1]!, /^assistant: reading parser read\(\{"path":"parser.ts"\}\)#call-\d+ \[toolUse\]$/);
      assert.match(lines[2]!, /^toolResult#call-\d+ read$/);
      const entries: StoredEntry[] = (await client.getEntries({ sessionId })).entries;
      assert.ok(entries.every(isKnownEntry));
      assert.deepEqual(entries.map((e) => e.type), Array(4).fill(SessionEntryType.message));
    } finally {
      await client.dispose();
    }
  });

  it("isKnownEntry tells an entry type this client does not know (a newer pi's), whose fields stay as read", () => {
    const future = JSON.parse('{"type":"hologram","id":"h1","parentId":null,"beam":3}') as StoredEntry;
    assert.equal(isKnownEntry(future), false);
    assert.equal((future as unknown as { beam: number }).beam, 3);
    assert.equal(isKnownEntry({ type: "custom" }), true);
  });

  it("one typed handler per notification, on a subscription over a socket", async () => {
    const dir = tempRoot();
    const socket = join(dir, "s.sock");
    const server = await SidecarServer.start({ socket, command: SIDECAR_BIN, root: join(dir, "sessions"), env: testEnv() });
    const agent = await SidecarClient.connectSocket(socket);
    const observer = await SidecarClient.connectSocket(socket);
    try {
      const { sessionId } = await agent.create({ cwd: "/work/watched" });
      await agent.append({ sessionId, entries: toolConversation("first") });
      const appended = deferred<StoredEntry[]>();
      const labelled = deferred<DidSetLabelParams>();
      observer.onDidAppend(({ entries }) => appended.resolve(entries));
      observer.onDidSetLabel((params) => labelled.resolve(params));
      await observer.subscribe({ sessionId });
      const { entries } = await agent.append({ sessionId, entries: toolConversation("second") });
      const seen = await appended.promise;
      const first = seen[0]!;
      assert.ok(first.type === "message" && first.message.role === "user");
      assert.equal(seen.length, 4);
      await agent.setLabel({ sessionId, entryId: entries[0]!.id, label: "start" });
      const label = await labelled.promise;
      assert.equal(label.targetId, entries[0]!.id);
      assert.equal(label.label, "start");
    } finally {
      await agent.dispose();
      await observer.dispose();
      await server.stop();
    }
  });
});
