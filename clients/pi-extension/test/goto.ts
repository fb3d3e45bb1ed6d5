/**
 * Test-only: `/goto <entryId>` moves pi's leaf there with a branch summary, as
 * `/tree` does in the terminal UI (RPC mode has no tree navigation command of its own).
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI): void {
  pi.registerCommand("goto", {
    description: "Navigate the session tree to an entry, summarizing the branch left",
    handler: async (args, ctx) => {
      const result = await ctx.navigateTree(args.trim(), { summarize: true });
      ctx.ui.notify(`goto: ${result.cancelled ? "cancelled" : "done"}`, "info");
    },
  });
}
