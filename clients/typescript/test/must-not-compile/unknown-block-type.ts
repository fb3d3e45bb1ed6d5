// expect: Type '"txt"' is not assignable
// A content block type pi does not define must not compile in an append.
import { SidecarClient } from "@session-sidecar/client";

export async function send(client: SidecarClient, sessionId: string): Promise<void> {
  await client.append({ sessionId, entries: [{ type: "message", message: { role: "user", content: [{ type: "txt", text: "hi" }] } }] });
}
