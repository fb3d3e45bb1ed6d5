// expect: 'tool_calls' does not exist
// OpenAI's tool_calls beside the content is not pi's shape (a toolCall block is): must not compile.
import { SidecarClient } from "@session-sidecar/client";

export async function send(client: SidecarClient, sessionId: string): Promise<void> {
  await client.append({
    sessionId,
    entries: [{ type: "message", message: { role: "assistant", content: [], tool_calls: [{ id: "c", function: { name: "ls" } }] } }],
  });
}
