// expect: Property 'toolCalId' does not exist
// A misspelt field of a tool result in an llm-format context must not compile.
import { SidecarClient } from "@session-sidecar/client";

export async function turn(client: SidecarClient, sessionId: string): Promise<string | undefined> {
  const context = await client.buildContext({ sessionId, format: "llm" });
  for (const msg of context.messages) {
    if (msg.role === "toolResult") return msg.toolCalId;
  }
  return undefined;
}
