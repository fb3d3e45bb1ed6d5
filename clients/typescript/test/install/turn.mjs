// One tool-using turn through the installed package (ESM); test.sh runs it from
// a clean folder after each way of installing, and bundled by esbuild.
import { SidecarClient } from "@session-sidecar/client";

const sidecar = await SidecarClient.spawn({ root: process.argv[2] });
try {
  const { sessionId } = await sidecar.create({ cwd: "/work/install-check" });
  await sidecar.append({
    sessionId,
    entries: [
      { type: "message", message: { role: "user", content: [{ type: "text", text: "list the files" }] } },
      { type: "message", message: { role: "assistant", content: [{ type: "toolCall", id: "call-1", name: "bash", arguments: { command: "ls" } }], stopReason: "toolUse" } },
      { type: "message", message: { role: "toolResult", toolCallId: "call-1", toolName: "bash", content: [{ type: "text", text: "main.py" }], isError: false } },
      { type: "message", message: { role: "assistant", content: [{ type: "text", text: "There is main.py." }], stopReason: "stop" } },
    ],
  });
  const context = await sidecar.buildContext({ sessionId, format: "llm" });
  console.log(`esm ok: ${context.messages.length} messages`);
} finally {
  await sidecar.dispose();
}
