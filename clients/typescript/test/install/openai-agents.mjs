// The OpenAI Agents SDK adapter's subpath, installed without @openai/agents-core (an optional
// peer: the adapter imports only its types); test.sh runs it as ESM and CommonJS (.cjs beside it).
import { SidecarSession } from "@session-sidecar/client/adapters/openai-agents";

const session = new SidecarSession(`install-check-esm-${process.pid}-${Date.now()}`, { root: process.argv[2] });
try {
  await session.addItems([{ role: "user", content: "hi" }, { type: "function_call", callId: "c1", name: "ls", arguments: "{}" }]);
  const popped = await session.popItem();
  const items = await session.getItems();
  if (popped?.type !== "function_call" || items.length !== 1) throw new Error(`unexpected: ${JSON.stringify(items)}`);
  console.log("esm ok: openai-agents SidecarSession without the SDK");
} finally {
  await session.close();
}
