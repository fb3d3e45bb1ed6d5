// expect: Property 'onDidApend' does not exist
// A misspelt notification handler must not compile.
import { SidecarClient } from "@session-sidecar/client";

export function watch(client: SidecarClient): void {
  client.onDidApend(({ entries }) => console.log(entries.length));
}
