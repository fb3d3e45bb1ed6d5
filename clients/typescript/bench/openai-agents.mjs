// The TypeScript OpenAI Agents SDK adapter against agents-core's MemorySession (the reference
// store agents-core ships; it has no SQLite one), side by side in one run:
//
//     SESSION_SIDECAR_BIN=.venv/bin/session-sidecar node clients/typescript/bench/openai-agents.mjs [ITEMS] [ROUNDS]
//
// The rows of bench/openai_agents.py (the Python adapter against SQLiteSession), on the built
// package (dist/; `npm ci` first for agents-core): each round on a fresh session of each store,
// `add N` (one addItems of a conversation's mix), `get all (reopened)` (a new SidecarSession on
// the same sidecar: nothing read yet; MemorySession cannot be reopened, so its same object),
// `get all`, `get 10`, and a turn (addItems of 3, getItems(10)): the first after reopening, then
// the median of 10. Medians over the rounds, milliseconds, and the ratio ours / theirs.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemorySession } from "@openai/agents-core";
import { SidecarClient } from "@session-sidecar/client";
import { SidecarSession } from "@session-sidecar/client/adapters/openai-agents";

const count = Number(process.argv[2] ?? 1000);
const rounds = Number(process.argv[3] ?? 7);

function conversation(total) {
  const items = [];
  for (let n = 1; items.length < total; n++) {
    const callId = `call_${n}`;
    items.push(
      { role: "user", content: `Question ${n}: why does the parser fail on empty input? `.repeat(3) },
      { type: "reasoning", id: `rs_${n}`, content: [{ type: "input_text", text: "Look at the parser." }] },
      { type: "function_call", id: `fc_${n}`, callId, name: "read_file", status: "completed", arguments: JSON.stringify({ path: `src/parser_${n}.py` }) },
      { type: "function_call_result", name: "read_file", callId, status: "completed", output: { type: "text", text: "def parse(text):\n    return text.split(',')[0]\n".repeat(4) } },
      { id: `msg_${n}`, type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: `Answer ${n}: it indexes an empty list. `.repeat(4) }] },
    );
  }
  return items.slice(0, total);
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

async function timed(call) {
  const start = performance.now();
  await call();
  return performance.now() - start;
}

async function oneRound(index, items, client) {
  const figures = new Map();
  const sessionId = `bench-${index}`;
  const theirs = new MemorySession({ sessionId });
  let ours = new SidecarSession(sessionId, { client });
  const turn = items.slice(0, 3);
  // Alternate which goes first, so neither always runs on a warmer machine.
  const both = async (name, mine, other) => {
    if (index % 2) figures.set(name, [await timed(mine), await timed(other)]);
    else {
      const otherMs = await timed(other);
      figures.set(name, [await timed(mine), otherMs]);
    }
  };
  await both(`add ${items.length}`, () => ours.addItems(items), () => theirs.addItems(items));
  await ours.close();
  ours = new SidecarSession(sessionId, { client });
  await both("get all (reopened)", () => ours.getItems(), () => theirs.getItems());
  await both("get all", () => ours.getItems(), () => theirs.getItems());
  await both("get 10", () => ours.getItems(10), () => theirs.getItems(10));
  const ourTurn = async () => (await ours.addItems(turn), await ours.getItems(10));
  const theirTurn = async () => (await theirs.addItems(turn), await theirs.getItems(10));
  await both("first turn (add 3, get 10)", ourTurn, theirTurn);
  const turns = [];
  for (let i = 0; i < 10; i++) {
    await both("turn", ourTurn, theirTurn);
    turns.push(figures.get("turn"));
    figures.delete("turn");
  }
  figures.set("turn (add 3, get 10)", [median(turns.map((t) => t[0])), median(turns.map((t) => t[1]))]);
  if (JSON.stringify(await ours.getItems()) !== JSON.stringify(await theirs.getItems())) throw new Error("the stores disagree");
  await ours.close();
  return figures;
}

const temp = mkdtempSync(join(tmpdir(), "oa-bench-"));
const client = await SidecarClient.spawn({ root: join(temp, "sessions") });
const rows = new Map();
try {
  const items = conversation(count);
  await oneRound(-1, items, client); // JIT, imports, caches
  for (let index = 0; index < rounds; index++) {
    for (const [name, pair] of await oneRound(index, items, client)) rows.set(name, [...(rows.get(name) ?? []), pair]);
  }
} finally {
  await client.dispose();
  rmSync(temp, { recursive: true, force: true });
}
console.log(`${"".padEnd(28)} ${"SidecarSession".padStart(15)} ${"MemorySession".padStart(14)} ${"ratio".padStart(8)}   (median ms of ${rounds})`);
for (const [name, pairs] of rows) {
  const mine = median(pairs.map((p) => p[0]));
  const other = median(pairs.map((p) => p[1]));
  console.log(`${name.padEnd(28)} ${mine.toFixed(2).padStart(15)} ${other.toFixed(2).padStart(14)} ${(mine / other).toFixed(1).padStart(7)}x`);
}
