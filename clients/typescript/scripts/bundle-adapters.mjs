// The CommonJS build of each adapter subpath (dist/adapters/<name>/index.cjs). The adapter's
// imports of the client (../../client.js, ../../protocol.js...) become one require of the main
// entry point's CommonJS build, so an adapter and the client share one SidecarClient class
// (not a copy of the client in every adapter); the frameworks' SDKs stay external.
import { build } from "esbuild";

const ADAPTERS = ["claude-agent-sdk", "openai-agents"];

const clientIsExternal = {
  name: "client-is-external",
  setup(bundle) {
    bundle.onResolve({ filter: /^\.\.\/\.\.\/[a-z]+\.js$/ }, () => ({ path: "../../index.cjs", external: true }));
  },
};

for (const name of ADAPTERS) {
  await build({
    entryPoints: [`src/adapters/${name}/index.ts`],
    outfile: `dist/adapters/${name}/index.cjs`,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    logLevel: "warning",
    external: ["@anthropic-ai/claude-agent-sdk", "@openai/agents-core"],
    plugins: [clientIsExternal],
  });
}
