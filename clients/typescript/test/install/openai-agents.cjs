// The OpenAI Agents SDK adapter's subpath through require(), without @openai/agents-core installed.
const { SidecarSession } = require("@session-sidecar/client/adapters/openai-agents");
const { SidecarClient } = require("@session-sidecar/client");

(async () => {
  const client = await SidecarClient.spawn({ root: process.argv[2] });
  const session = new SidecarSession(`install-check-cjs-${process.pid}-${Date.now()}`, { client }); // the main entry's client: one class
  try {
    await session.addItems([{ role: "user", content: "hi" }]);
    const items = await session.getItems();
    if (items.length !== 1 || items[0].content !== "hi") throw new Error(`unexpected: ${JSON.stringify(items)}`);
    console.log("cjs ok: openai-agents SidecarSession without the SDK");
  } finally {
    await session.close();
    await client.dispose();
  }
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
