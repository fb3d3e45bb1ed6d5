// pi's own SessionManager writing a session file the sidecar holds open (issue 28).
//
// One long-lived process; one JSON request per stdin line, one JSON answer per
// stdout line. Usage: node pi_writer.mjs 0.73   (@mariozechner/pi-coding-agent,
// this folder's node_modules) or node pi_writer.mjs 1.5 (pi 1.5.2 from pi15/,
// run on its Node 22; its session code is loaded as pi15/pi_session.mjs does).
//
// Requests:
//   {"op": "append", "path", "messages": [message, ...], "reopen": true}
//       SessionManager.open(path) (a new one unless reopen is false and this
//       path was opened before), then appendMessage of each message in turn.
//       -> {"ids": [...], "leafId"}
//   {"op": "read", "path"}
//       -> {"entries", "leafId", "messages": buildSessionContext at the leaf}
import { readFileSync } from "node:fs";

const flavour = process.argv[2] ?? "0.73";
let SessionManager, buildSessionContext, version;
if (flavour === "1.5") {
  const { registerHooks } = await import("node:module");
  const here = new URL("./pi15/", import.meta.url);
  const shim = new URL("pi-ai-session.mjs", here).href;
  const agentDist = new URL("node_modules/@earendil-works/pi-coding-agent/dist/", here).href;
  registerHooks({
    resolve(specifier, context, nextResolve) {
      if (specifier === "@earendil-works/pi-ai" && context.parentURL?.startsWith(agentDist)) {
        return { url: shim, shortCircuit: true };
      }
      return nextResolve(specifier, context);
    },
  });
  ({ SessionManager, buildSessionContext } = await import(new URL("core/session-manager.js", agentDist).href));
  version = JSON.parse(readFileSync(new URL("node_modules/@earendil-works/pi-coding-agent/package.json", here), "utf8")).version;
} else {
  ({ SessionManager, buildSessionContext } = await import("@mariozechner/pi-coding-agent"));
  version = JSON.parse(
    readFileSync(new URL("./node_modules/@mariozechner/pi-coding-agent/package.json", import.meta.url), "utf8"),
  ).version;
}

const managers = new Map();

function handle(request) {
  if (request.op === "append") {
    let manager = request.reopen === false ? managers.get(request.path) : undefined;
    if (manager === undefined) {
      manager = SessionManager.open(request.path);
      managers.set(request.path, manager);
    }
    const ids = request.messages.map((message) => manager.appendMessage(message));
    return { ids, leafId: manager.getLeafId() };
  }
  if (request.op === "read") {
    const manager = SessionManager.open(request.path);
    const entries = manager.getEntries();
    const leafId = manager.getLeafId();
    return { entries, leafId, messages: buildSessionContext(entries, leafId).messages };
  }
  throw new Error(`unknown op ${request.op}`);
}

process.stdout.write(`${JSON.stringify({ ready: true, version })}\n`);
let buffered = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  buffered += chunk;
  let newline;
  while ((newline = buffered.indexOf("\n")) !== -1) {
    const line = buffered.slice(0, newline);
    buffered = buffered.slice(newline + 1);
    let answer;
    try {
      answer = { ok: true, ...handle(JSON.parse(line)) };
    } catch (error) {
      answer = { ok: false, error: String(error && error.stack ? error.stack : error) };
    }
    process.stdout.write(`${JSON.stringify(answer)}\n`);
  }
});
