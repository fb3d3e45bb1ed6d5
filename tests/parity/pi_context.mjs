// Reads a JSON request on stdin and answers with what pi's own published code
// makes of each session file: its entries as pi's SessionManager loads them,
// pi's buildSessionContext at the file's leaf and at any extra leaves asked
// for, and pi's convertToLlm of each context. One node process serves a whole
// batch so the parity tests stay fast.
//
// Request:  {"files": [{"path": "...", "leaves": ["id", ...]}]}
// Response: {"version": "...", "results": [{"path", "ok", "error"?, "header",
//            "entries", "lines", "leafId", "labels", "name", "contexts": {"<leaf>": {...}}}]}
// "lines" is each entry as pi would write it (JSON.stringify), to compare bytes.
// The file's own leaf is reported under the key "@leaf".
import { readFileSync } from "node:fs";
import { SessionManager, buildSessionContext, convertToLlm } from "@mariozechner/pi-coding-agent";

const piVersion = JSON.parse(
  readFileSync(new URL("./node_modules/@mariozechner/pi-coding-agent/package.json", import.meta.url), "utf8"),
).version;

function contextOf(entries, leafId) {
  const ctx = buildSessionContext(entries, leafId);
  return {
    messages: ctx.messages,
    thinkingLevel: ctx.thinkingLevel,
    model: ctx.model,
    llm: convertToLlm(ctx.messages),
  };
}

function describe(file) {
  const manager = SessionManager.open(file.path);
  const entries = manager.getEntries();
  const labels = {};
  for (const entry of entries) {
    const label = manager.getLabel(entry.id);
    if (label !== undefined) labels[entry.id] = label;
  }
  const contexts = { "@leaf": { leafId: manager.getLeafId(), ...contextOf(entries, manager.getLeafId()) } };
  for (const leaf of file.leaves ?? []) {
    contexts[leaf] = contextOf(entries, leaf);
  }
  return {
    path: file.path,
    ok: true,
    header: manager.getHeader(),
    entries,
    lines: entries.map((entry) => JSON.stringify(entry)),
    leafId: manager.getLeafId(),
    labels,
    name: manager.getSessionName() ?? null,
    contexts,
  };
}

const request = JSON.parse(readFileSync(0, "utf8"));
const results = request.files.map((file) => {
  try {
    return describe(file);
  } catch (error) {
    return { path: file.path, ok: false, error: String(error && error.stack ? error.stack : error) };
  }
});
process.stdout.write(JSON.stringify({ version: piVersion, results }));
