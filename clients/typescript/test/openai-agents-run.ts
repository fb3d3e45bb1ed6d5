// A real run() of agents-core with its ScriptedModel and a function tool, in its own process:
//
//     node build/test/openai-agents-run.js (sidecar|memory) ROOT SESSION_ID OUT.json PROMPT...
//
// One run() per prompt on one session: a SidecarSession spawning a sidecar on the sessions root
// ROOT, or agents-core's MemorySession. The model answers a user message with a tool call and a
// tool's output with text; what it was given on each call, each run's final output and the
// session's history at the end go to OUT.json.

import { writeFileSync } from "node:fs";
import { Agent, MemorySession, run, tool, type Session } from "@openai/agents-core";
import { ScriptedModel, assistantMessage, functionCall, modelResponder } from "@openai/agents-core/testing";
import { SidecarSession } from "@session-sidecar/client/adapters/openai-agents";

type Item = { [key: string]: any };

const getWeather = tool({
  name: "get_weather",
  description: "The weather in a city.",
  parameters: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false,
  },
  strict: true,
  execute: async (input: unknown) => `sunny in ${(input as { city: string }).city}, 21 degrees`,
});

const respond = modelResponder(({ request }) => {
  const items = (typeof request.input === "string" ? [{ role: "user", content: request.input }] : request.input) as Item[];
  const last = items.at(-1)!;
  const n = items.length; // ids unique over the whole history, across processes
  if (last.type === "function_call_result") {
    return [assistantMessage(`It is ${last.output.text}.`, { id: `msg_${n}` })];
  }
  const city = JSON.stringify(last.content).includes("Lyon") ? "Lyon" : "Paris";
  return [functionCall("get_weather", { city }, { callId: `call_${n}`, id: `fc_${n}` })];
});

async function main(): Promise<void> {
  const [kind, root, sessionId, out, ...prompts] = process.argv.slice(2);
  const model = new ScriptedModel(prompts.flatMap(() => [respond, respond]));
  const agent = new Agent({ name: "weather", instructions: "Answer about the weather.", model, tools: [getWeather] });
  const session: Session & { close?: () => Promise<void> } =
    kind === "sidecar" ? new SidecarSession(sessionId!, { root: root! }) : new MemorySession({ sessionId: sessionId! });
  const finals: unknown[] = [];
  try {
    for (const prompt of prompts) finals.push((await run(agent, prompt, { session })).finalOutput);
    model.assertComplete();
    const history = await session.getItems();
    const inputs = model.calls.map((call) => call.request.input);
    writeFileSync(out!, JSON.stringify({ finals, inputs, history }));
  } finally {
    await session.close?.();
  }
}

await main();
