// pi 1.5.2 meeting a session in a fresh process, for bench/fresh.py:
// SessionManager.open(path) and buildSessionContext() with pi's own code.
//
//   node bench/pi15_open.mjs PI15_DIR SESSION.jsonl
//
// PI15_DIR is tests/parity/pi15 (pi 1.5.2 installed there by the parity tests'
// lock). session-manager.js is loaded directly, with "@earendil-works/pi-ai"
// resolved to the parity tests' pi-ai shim (the registry here lacks packages
// pi-ai's index pulls in). Prints one JSON line: the milliseconds from the
// start of this script to the module loaded, to the file opened and to the
// context built, the context's message count, and the process's peak RSS.
import { registerHooks } from "node:module";
import { pathToFileURL } from "node:url";
import { resourceUsage } from "node:process";

const started = performance.now();
const [piDir, sessionPath] = process.argv.slice(2);
const here = pathToFileURL(piDir.endsWith("/") ? piDir : `${piDir}/`);
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

const { SessionManager } = await import(new URL("core/session-manager.js", agentDist).href);
const loaded = performance.now();
const manager = SessionManager.open(sessionPath);
const opened = performance.now();
const context = manager.buildSessionContext();
const built = performance.now();
process.stdout.write(
  JSON.stringify({
    importMs: loaded - started,
    openMs: opened - loaded,
    contextMs: built - opened,
    messages: context.messages.length,
    maxRssKb: resourceUsage().maxRSS,
  }) + "\n",
);
