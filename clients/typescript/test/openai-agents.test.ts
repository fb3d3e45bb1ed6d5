// The OpenAI Agents SDK's Session kept in a real sidecar (adapters/openai-agents), judged against
// agents-core's own MemorySession: random add/get/pop/clear give the same answers (keys in the
// same order: the runner compares items by their JSON), again read by a fresh object and by
// another sidecar; every kind of item comes back exactly as the pi message it should be; the
// compaction hooks; a session written by the Python adapter reads here and back; a real run()
// with tool calls through agents-core's ScriptedModel persists and resumes in a fresh process.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { Agent, MemorySession, run, setTracingDisabled, tool, type AgentInputItem, type Session } from "@openai/agents-core";
import { ScriptedModel, assistantMessage, functionCall } from "@openai/agents-core/testing";
import type { SidecarClient } from "@session-sidecar/client";
import { ITEM_TYPE, LEAF_TYPE, PATCH, SidecarSession, itemKind } from "@session-sidecar/client/adapters/openai-agents";
import { PACKAGE_DIR, REPO_DIR, SIDECAR_BIN, removeTempRoots, startClient, tempRoot, testEnv } from "./helpers.js";

after(removeTempRoots);

type Item = { [key: string]: any };

/** Equal, keys in the same order included. */
function same(actual: unknown, expected: unknown, message?: string): void {
  assert.deepEqual(actual, expected, message);
  assert.equal(JSON.stringify(actual), JSON.stringify(expected), message);
}

const EXAMPLES: Item[] = [
  { role: "user", content: "What's the weather in Paris?" },
  { type: "message", role: "user", content: [{ type: "input_text", text: "and in Lyon" }] },
  { role: "user", content: [{ type: "input_text", text: "a" }, { type: "input_text", text: "b" }] },
  { role: "user", content: "" },
  { id: "msg_1", type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Sunny." }] },
  { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "x" }] },
  { role: "assistant", status: "incomplete", content: [{ type: "output_text", text: "y", providerData: { annotations: [] } }] },
  { type: "function_call", callId: "call_1", name: "get_weather", arguments: '{"city":"Paris"}', id: "fc_1", status: "completed" },
  { type: "function_call", callId: "call_2", name: "get_weather", arguments: '{"city": "Lyon", "days": [1, 2]}' },
  { type: "function_call", callId: "call_3", name: "noop", arguments: "" },
  { type: "function_call", callId: "call_4", name: "list", arguments: "[1, 2]", providerData: { x: 1 } },
  { type: "function_call_result", name: "get_weather", callId: "call_1", status: "completed", output: { type: "text", text: "sunny, 21 degrees" } },
  { type: "function_call_result", name: "get_weather", callId: "call_2", status: "completed", output: "a plain string" },
  { type: "function_call_result", name: "x", callId: "call_5", status: "incomplete", output: { type: "text", text: "" } },
  { type: "function_call_result", name: "x", callId: "call_6", status: "completed", output: [{ type: "input_text", text: "in parts" }] },
  { type: "reasoning", id: "rs_1", content: [{ type: "input_text", text: "Think about it." }] },
  { type: "reasoning", id: "rs_2", content: [], providerData: { encryptedContent: "gAAAA" } },
  { type: "reasoning", content: [{ type: "input_text", text: "one" }, { type: "input_text", text: "two" }], rawContent: [{ type: "reasoning_text", text: "raw" }] },
  { role: "system", content: "Be brief." },
  { role: "user", content: [{ type: "input_image", image: "data:image/png;base64,iVBORw0KGgo=", detail: "auto" }] },
  { type: "hosted_tool_call", id: "ws_1", name: "web_search_call", status: "completed", providerData: { action: { query: "weather" } } },
  { type: "compaction", id: "cmp_1", encrypted_content: "opaque" },
  { role: "user", content: "unicode: é 漢字 🙂 and a \u2028 line separator" },
  { content: "keys in another order", role: "user" },
  // As the runner writes a streamed call: keys holding undefined (JSON has no such value).
  { providerData: undefined, type: "function_call", callId: "call_7", name: "u", namespace: undefined, arguments: "{}" },
];

describe("SidecarSession (OpenAI Agents SDK) in a real sidecar", () => {
  let client: SidecarClient;
  before(async () => {
    client = await startClient();
  });
  after(async () => {
    assert.equal(await client.dispose(), 0);
  });

  it("gives every kind of item back exactly, each the pi message it should be", async () => {
    const session = new SidecarSession("kinds", { client });
    await session.addItems(EXAMPLES as AgentInputItem[]);
    same(await session.getItems(), EXAMPLES);
    same(await new SidecarSession("kinds", { client }).getItems(), EXAMPLES); // read from the sidecar whole
    const { entries } = await client.getEntries({ sessionId: "kinds" });
    assert.equal(entries.length, EXAMPLES.length);
    const shapes = entries.map((e: Item) =>
      e.type === "message"
        ? `${e.message.role}:${Array.isArray(e.message.content) ? e.message.content.map((b: Item) => b.type).join(",") : ""}`
        : e.customType,
    );
    assert.deepEqual(shapes.slice(0, 4), ["user:", "user:text", "user:text,text", "user:"]);
    assert.deepEqual(shapes.slice(4, 7), ["assistant:text", "assistant:text", "assistant:text"]);
    assert.deepEqual(shapes.slice(7, 11), Array(4).fill("assistant:toolCall"));
    assert.deepEqual(shapes.slice(11, 14), Array(3).fill("toolResult:text"));
    assert.equal(shapes[14], ITEM_TYPE); // an output in parts: kept verbatim
    assert.deepEqual(shapes.slice(15, 18), ["assistant:thinking", "assistant:", "assistant:thinking,thinking"]);
    assert.deepEqual(shapes.slice(18, 22), Array(4).fill(ITEM_TYPE));
    assert.deepEqual(shapes.slice(22), ["user:", "user:", "assistant:toolCall"]);
    const call = (entries[7] as Item).message.content[0];
    assert.deepEqual(call, { type: "toolCall", id: "call_1", name: "get_weather", arguments: { city: "Paris" } });
    const result = (entries[11] as Item).message;
    assert.equal(result.toolCallId, "call_1");
    assert.equal(result.toolName, "get_weather");
    assert.equal(PATCH in result, false); // the runner's own shape needs no patch
    assert.equal(PATCH in (entries[0] as Item).message, false);
    assert.deepEqual((entries[23] as Item).message[PATCH], { order: ["content", "role"] });
    // The context a model would get from the sidecar holds them as pi does.
    const llm = await client.buildContext({ sessionId: "kinds", format: "llm" });
    assert.deepEqual(llm.messages.slice(0, 3).map((m) => m.role), ["user", "user", "user"]);
  });

  it("answers with copies: the caller's items and answers are its own", async () => {
    const session = new SidecarSession("copies", { client });
    const item: Item = { role: "user", content: [{ type: "input_text", text: "one" }] };
    await session.addItems([item as AgentInputItem]);
    item.content[0].text = "changed";
    const first = (await session.getItems()) as Item[];
    first[0]!.content[0].text = "mutated";
    same(await session.getItems(), [{ role: "user", content: [{ type: "input_text", text: "one" }] }]);
  });

  for (let seed = 0; seed < 10; seed++) {
    it(`answers random add/get/pop/clear as MemorySession does, and again reopened (seed ${seed})`, async () => {
      const root = tempRoot();
      const own = await startClient({ root });
      const rng = random(seed);
      const theirs = new MemorySession({ sessionId: `s${seed}` });
      const ours = new SidecarSession(`s${seed}`, { client: own });
      let written = false;
      try {
        written = await runSequence(rng, ours, theirs, 40, own);
      } finally {
        await ours.close();
        assert.equal(await own.dispose(), 0);
      }
      // Another sidecar, the same root: the history (leaf included) is what the file says.
      const again = new SidecarSession(`s${seed}`, { root, spawn: { command: SIDECAR_BIN, env: testEnv() } });
      try {
        if (written) {
          same(await again.getItems(), await theirs.getItems());
          await runSequence(rng, again, theirs, 15);
        }
      } finally {
        await again.close();
      }
    });
  }

  it("erases nothing on pop and clear: the tree keeps every item", async () => {
    const session = new SidecarSession("kept", { client });
    const items = [0, 1, 2, 3].map((i) => ({ role: "user", content: `u${i}` }) as AgentInputItem);
    await session.addItems(items);
    same(await session.popItem(), items[3]);
    same(await session.popItem(), items[2]);
    await session.addItems([{ role: "user", content: "after" }]);
    await session.clearSession();
    same(await session.getItems(), []);
    assert.equal(await session.popItem(), undefined);
    const { entries } = await client.getEntries({ sessionId: "kept" });
    const texts = entries.filter((e: Item) => e.type === "message").map((e: Item) => e.message.content);
    assert.deepEqual(texts, ["u0", "u1", "u2", "u3", "after"]);
    const markers = entries.filter((e: Item) => e.type === "custom" && e.customType === LEAF_TYPE) as Item[];
    assert.equal(markers.length, 3);
    assert.equal(markers.at(-1)!.parentId, null);
    await session.addItems([{ role: "user", content: "fresh" }]);
    await session.close();
    same(await new SidecarSession("kept", { client }).getItems(), [{ role: "user", content: "fresh" }]);
  });

  it("keeps a session id the sidecar refuses under the id the Python adapter derives", async () => {
    const session = new SidecarSession("user 42 / conversation", { client });
    await session.addItems([{ role: "user", content: "hi" }]);
    // sha256("user 42 / conversation")[:40], as the Python adapter computes it.
    assert.equal(session.sidecarSessionId, "oa-" + sha256Hex("user 42 / conversation").slice(0, 40));
    await session.close();
    same(await new SidecarSession("user 42 / conversation", { client }).getItems(), [{ role: "user", content: "hi" }]);
  });

  it("runCompaction runs the sidecar's compaction, with progress; the history becomes its summary", async () => {
    const progress: Item[] = [];
    const session = new SidecarSession("compacted", {
      client,
      compact: { provider: "offline", keepRecentTokens: 2000 },
      onCompactionProgress: (value) => progress.push(value),
    });
    const items = conversation(8);
    await session.addItems(items);
    assert.equal(await session.runCompaction(), null);
    const compaction = session.lastCompaction;
    assert.ok(compaction);
    assert.equal(progress[0]!.kind, "begin");
    assert.equal(progress.at(-1)!.kind, "end");
    const history = (await session.getItems()) as Item[];
    assert.equal(history[0]!.role, "user");
    assert.ok(history[0]!.content.startsWith("The conversation history before this point was compacted"));
    assert.ok(history[0]!.content.includes(compaction.summary));
    const kept = history.slice(1);
    assert.ok(kept.length > 0 && kept.length < items.length);
    same(kept, items.slice(-kept.length));
    // It goes on from the compaction; pop takes the newest off, kept items included.
    await session.addItems([{ role: "user", content: "next" }]);
    same(await session.popItem(), { role: "user", content: "next" });
    same(await session.popItem(), kept.at(-1));
    same(await session.getItems(), history.slice(0, -1));
    await session.close();
    same(await new SidecarSession("compacted", { client }).getItems(), history.slice(0, -1));
    const { entries } = await client.getEntries({ sessionId: "compacted" });
    assert.equal(entries.filter((e: Item) => e.type === "message").length, items.length + 1); // nothing erased
  });

  it("compacts from the runner's hook only when shouldCompact says so, and skips a refusal", async () => {
    const asked: unknown[] = [];
    const session = new SidecarSession("hooked", {
      client,
      compact: { provider: "offline", keepRecentTokens: 2000 },
      shouldCompact: (appended) => asked.push(appended) > 1,
    });
    await session.addItems(conversation(8));
    const runContext = {}; // the runner passes its RunContext (acceptsRunContext)
    await session.runCompaction({ responseId: "resp_1" }, runContext);
    assert.equal(session.lastCompaction, undefined);
    assert.equal(asked.length, 1);
    await session.addItems([{ role: "user", content: "more" }]);
    await session.runCompaction(undefined, runContext);
    assert.ok(session.lastCompaction);
    const empty = new SidecarSession("empty", { client, compact: { provider: "offline" }, shouldCompact: () => true });
    await empty.addItems([{ role: "user", content: "hi" }]);
    await empty.runCompaction({ responseId: "resp_3" }, runContext); // refused (nothing to compact): not thrown
    await assert.rejects(empty.runCompaction({ force: true }));
  });

  it("compacts through the sidecar from a real run()'s hook, with progress, when shouldCompact says so", async () => {
    setTracingDisabled(true);
    const progress: Item[] = [];
    const decided: boolean[] = [];
    const session = new SidecarSession("run-compacted", {
      client,
      compact: { provider: "offline", keepRecentTokens: 2000 },
      shouldCompact: (appended) => (decided.push(appended.contextTokens > 4000), appended.contextTokens > 4000),
      onCompactionProgress: (value) => progress.push(value),
    });
    const agent = new Agent({ name: "a", model: new ScriptedModel([[assistantMessage("short")], [assistantMessage("done")]]) });
    await run(agent, "hello", { session }); // a short history: the hook asks, and nothing is compacted
    assert.equal(session.lastCompaction, undefined);
    assert.deepEqual(decided, [false]);
    await session.addItems(conversation(8));
    await run(agent, "and now?", { session });
    assert.deepEqual(decided, [false, true]);
    assert.ok(session.lastCompaction);
    assert.deepEqual([progress[0]!.kind, progress.at(-1)!.kind], ["begin", "end"]);
    const history = (await session.getItems()) as Item[];
    assert.ok(history[0]!.content.startsWith("The conversation history before this point was compacted"));
    same(history.at(-1), (await new SidecarSession("run-compacted", { client }).getItems()).at(-1));
    assert.equal(history.at(-1)!.content[0].text, "done");
  });

  it("holds what a streamed run() with a tool call writes, as MemorySession does", async () => {
    setTracingDisabled(true);
    const echo = tool({
      name: "echo",
      description: "Echo the text.",
      parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
      strict: true,
      execute: async (input: unknown) => `echo: ${(input as { text: string }).text}`,
    });
    const streamed = async (session: Session): Promise<{ final: unknown; inputs: unknown[] }> => {
      const model = new ScriptedModel([
        [functionCall("echo", { text: "hi" }, { callId: "call_e", id: "fc_e" })],
        [assistantMessage("It said hi.", { id: "msg_e" })],
      ]);
      const agent = new Agent({ name: "echoer", model, tools: [echo] });
      const result = await run(agent, "say hi", { session, stream: true });
      for await (const _event of result) {
        // drain the stream: the session is written as the run goes
      }
      await result.completed;
      model.assertComplete();
      return { final: result.finalOutput, inputs: model.calls.map((call) => call.request.input) };
    };
    const ours = new SidecarSession("streamed", { client });
    const theirs = new MemorySession();
    const [mine, other] = [await streamed(ours), await streamed(theirs)];
    assert.equal(mine.final, "It said hi.");
    same(mine, other);
    same(await ours.getItems(), await theirs.getItems());
    same(await new SidecarSession("streamed", { client }).getItems(), await theirs.getItems());
    assert.equal((await theirs.getItems()).length, 4);
  });

  it("replaceHistoryWithCompaction makes the history the items given, on a new branch", async () => {
    const session = new SidecarSession("replaced", { client });
    const items = conversation(3);
    await session.addItems(items);
    const replacement = [{ type: "compaction", id: "cmp_1", encrypted_content: "opaque" } as AgentInputItem, ...items.slice(-2)];
    await session.replaceHistoryWithCompaction(replacement);
    same(await session.getItems(), replacement);
    same(await new SidecarSession("replaced", { client }).getItems(), replacement);
    const { entries } = await client.getEntries({ sessionId: "replaced" });
    assert.equal(entries.length, items.length + replacement.length); // the old history stays on its branch
  });
});

// -- Python writes, TypeScript reads, and back -----------------------------------------------

// A Python with the sidecar's client package: beside the sidecar in its venv, else the checkout's
// .venv (the standalone executable test.sh also runs this suite against has none beside it).
const PYTHON =
  process.env.SESSION_SIDECAR_PYTHON ??
  [join(dirname(SIDECAR_BIN), "python"), join(REPO_DIR, ".venv/bin/python")].find((path) => existsSync(path)) ??
  "python3";

/** Runs the Python adapter on the sessions root: `write` items (Responses API JSON) or `read` them. */
function python(root: string, action: "write" | "read", sessionId: string, items: Item[] = []): Item[] {
  const code = `
import asyncio, json, sys
from session_sidecar_client.adapters.openai_agents import SidecarSession
async def main():
    action, root, sid, command = sys.argv[1:5]
    async with SidecarSession(sid, root=root, command=command) as session:
        if action == "write":
            await session.add_items(json.loads(sys.stdin.read()))
        print(json.dumps(await session.get_items()))
asyncio.run(main())
`;
  const out = execFileSync(PYTHON, ["-c", code, action, root, sessionId, SIDECAR_BIN], {
    input: JSON.stringify(items),
    env: { ...testEnv(), PYTHONPATH: join(REPO_DIR, "clients/python") },
    encoding: "utf8",
  });
  return JSON.parse(out);
}

describe("one session, both languages", () => {
  // The same conversation in each SDK's vocabulary: the Responses API's (Python) and agents-core's.
  const pythonItems: Item[] = [
    { role: "user", content: "What's the weather in Paris?" },
    { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Use the tool." }] },
    { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}', id: "fc_1", status: "completed" },
    { type: "function_call_output", call_id: "call_1", output: "sunny" },
    { id: "msg_1", type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Sunny.", annotations: [] }] },
    { role: "system", content: "Be brief." },
    { type: "compaction", id: "cmp_1", encrypted_content: "opaque" },
  ];
  const tsItems: Item[] = [
    { role: "user", content: "What's the weather in Paris?" },
    { type: "reasoning", content: [{ type: "input_text", text: "Use the tool." }], id: "rs_1" },
    { type: "function_call", callId: "call_1", name: "get_weather", arguments: '{"city":"Paris"}', id: "fc_1", status: "completed" },
    { type: "function_call_result", name: "get_weather", callId: "call_1", status: "completed", output: { type: "text", text: "sunny" } },
    { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Sunny." }], id: "msg_1" },
    { role: "system", content: "Be brief." },
    { type: "compaction", id: "cmp_1", encrypted_content: "opaque" },
  ];

  it("reads here what the Python adapter wrote, as agents-core's items", async () => {
    const root = tempRoot();
    assert.deepEqual(python(root, "write", "from-python", pythonItems), pythonItems); // Python compares dicts, not their order
    const session = new SidecarSession("from-python", { root, spawn: { command: SIDECAR_BIN, env: testEnv() } });
    try {
      assert.deepEqual(await session.getItems(), tsItems);
      // And goes on from it; Python reads what was added here.
      await session.addItems([{ role: "user", content: "And in Lyon?" }]);
      same(await session.popItem(), { role: "user", content: "And in Lyon?" });
      await session.addItems([{ role: "user", content: "And in Nice?" }]);
    } finally {
      await session.close();
    }
    assert.deepEqual(python(root, "read", "from-python"), [...pythonItems, { role: "user", content: "And in Nice?" }]);
  });

  it("gives the Python adapter what was written here, as Responses API items", async () => {
    const root = tempRoot();
    const session = new SidecarSession("from-ts", { root, spawn: { command: SIDECAR_BIN, env: testEnv() } });
    try {
      await session.addItems(tsItems as AgentInputItem[]);
      await session.addItems([{ role: "user", content: "popped" }]);
      await session.popItem();
    } finally {
      await session.close();
    }
    const read = python(root, "read", "from-ts");
    const expected = pythonItems.map((item) =>
      // agents-core's assistant message carries no annotations: Python's natural item for it has them empty.
      item.role === "assistant" ? { ...item, content: [{ type: "output_text", text: "Sunny.", annotations: [] }] } : item,
    );
    assert.deepEqual(read, expected);
  });
});

// -- a real run() through ScriptedModel, resumed in a fresh process ------------------------------

const RUNNER = join(dirname(fileURLToPath(import.meta.url)), "openai-agents-run.js");

function runTurns(kind: "sidecar" | "memory", root: string, sessionId: string, prompts: string[]): Item {
  const out = join(tempRoot("oa-run-"), "out.json");
  execFileSync(process.execPath, [RUNNER, kind, root, sessionId, out, ...prompts], {
    env: { ...testEnv(), OPENAI_AGENTS_DISABLE_TRACING: "1" },
    cwd: PACKAGE_DIR,
    stdio: ["ignore", "inherit", "inherit"],
  });
  return JSON.parse(readFileSync(out, "utf8"));
}

describe("run() with tool calls through agents-core's ScriptedModel", () => {
  it("persists through the sidecar and resumes in a fresh process with the model inputs MemorySession gives", () => {
    const prompts = ["What's the weather in Paris?", "And in Lyon?"];
    const root = tempRoot();
    const first = runTurns("sidecar", root, "weather-1", prompts.slice(0, 1));
    const second = runTurns("sidecar", root, "weather-1", prompts.slice(1)); // a fresh process, the same root
    const memory = runTurns("memory", "", "weather-1", prompts); // one process: MemorySession cannot resume
    assert.deepEqual(first.finals, ["It is sunny in Paris, 21 degrees."]);
    assert.deepEqual(second.finals, ["It is sunny in Lyon, 21 degrees."]);
    assert.deepEqual([...first.finals, ...second.finals], memory.finals);
    // What the model was given each call (the resumed history included) and what the session holds.
    assert.deepEqual([...first.inputs, ...second.inputs], memory.inputs);
    assert.equal(JSON.stringify([...first.inputs, ...second.inputs]), JSON.stringify(memory.inputs));
    assert.deepEqual(second.history, memory.history);
    assert.equal(second.history.length, 8);
    assert.deepEqual(second.inputs[0].slice(0, 4), first.history);
  });
});

// -- helpers ---------------------------------------------------------------------------------------

function sha256Hex(text: string): string {
  // node:crypto, as the adapter uses; the expected value is Python's hashlib.sha256(...).hexdigest().
  return execFileSync(PYTHON, ["-c", "import hashlib,sys; print(hashlib.sha256(sys.argv[1].encode()).hexdigest())", text], {
    encoding: "utf8",
  }).trim();
}

/** A small seeded generator (mulberry32). */
function random(seed: number) {
  let state = seed + 0x6d2b79f5;
  const next = (): number => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number): number => Math.floor(next() * n);
  return { next, int, choice: <T>(list: readonly T[]): T => list[int(list.length)]! };
}

type Rng = ReturnType<typeof random>;

function randomItem(rng: Rng, n: number): Item {
  const text = rng.choice(["hi", "", "é漢🙂", "line\nbreak", "x".repeat(1 + rng.int(300)), `item ${n}`]);
  switch (rng.int(9)) {
    case 0:
      return { role: "user", content: text };
    case 1:
      return { type: "message", role: "user", content: [{ type: "input_text", text }] };
    case 2:
      return { id: `msg_${n}`, type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text }] };
    case 3: {
      const args = rng.choice(['{"city":"Paris"}', '{"a": 1}', "{}", "not json", JSON.stringify({ t: text })]);
      return { type: "function_call", callId: `call_${n}`, name: "tool", arguments: args, id: `fc_${n}`, status: "completed" };
    }
    case 4:
      return { type: "function_call_result", name: "tool", callId: `call_${n - 1}`, status: "completed", output: { type: "text", text } };
    case 5:
      return { type: "reasoning", id: `rs_${n}`, content: Array(rng.int(3)).fill({ type: "input_text", text }) };
    case 6:
      return { type: "hosted_tool_call", id: `ws_${n}`, name: "web_search_call", status: "completed", providerData: { query: text } };
    case 7:
      return { role: "system", content: text };
    default:
      return rng.choice(EXAMPLES);
  }
}

async function runSequence(rng: Rng, ours: SidecarSession, theirs: MemorySession, steps: number, client?: SidecarClient): Promise<boolean> {
  const done: string[] = [];
  let written = false;
  let n = 0;
  for (let step = 0; step < steps; step++) {
    const roll = rng.int(12);
    const op = roll < 5 ? "add" : roll < 9 ? "get" : roll < 11 ? "pop" : "clear";
    if (op === "add") {
      const batch: Item[] = [];
      for (let i = rng.choice([0, 1, 1, 2, 3, 8]); i > 0; i--) batch.push(randomItem(rng, ++n));
      await ours.addItems(batch as AgentInputItem[]);
      await theirs.addItems(batch as AgentInputItem[]);
      // A session's file is written with its first user or assistant message (as pi 1.5 writes it).
      written ||= batch.some((item) => ["user", "assistant", "function_call", "reasoning"].includes(itemKind(item) ?? ""));
    } else if (op === "get") {
      const limit = rng.choice([undefined, undefined, 0, 1, 2, 3, 5, 100, -1]);
      same(await ours.getItems(limit), await theirs.getItems(limit), `${done.join(",")} get(${limit})`);
      if (client !== undefined && rng.next() < 0.3) {
        const fresh = new SidecarSession(ours.sessionId, { client });
        same(await fresh.getItems(limit), await theirs.getItems(limit), `${done.join(",")} fresh get(${limit})`);
      }
    } else if (op === "pop") {
      same(await ours.popItem(), await theirs.popItem(), done.join(","));
    } else {
      await ours.clearSession();
      await theirs.clearSession();
    }
    done.push(op);
  }
  same(await ours.getItems(), await theirs.getItems(), done.join(","));
  return written;
}

function conversation(turns: number): AgentInputItem[] {
  const items: Item[] = [];
  for (let turn = 0; turn < turns; turn++) {
    const callId = `call_${turn}`;
    items.push({ role: "user", content: `Question ${turn}: ` + "tell me about the parser. ".repeat(40) });
    items.push({ type: "function_call", callId, name: "read", arguments: JSON.stringify({ path: `src/f${turn}.py` }), status: "completed" });
    items.push({ type: "function_call_result", name: "read", callId, status: "completed", output: { type: "text", text: "def f():\n    pass\n".repeat(60) } });
    items.push({ id: `msg_${turn}`, type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: `Answer ${turn}. `.repeat(50) }] });
  }
  return items as AgentInputItem[];
}
