// Run under Bun (the npm package @oven/bun-linux-x64-baseline) with oh-my-pi's
// published sources: what oh-my-pi's own SessionManager makes of session files,
// and session files written by that SessionManager. One process serves a batch.
//
// Request on stdin:
//   {"write": [{"cwd": "...", "dir": "...", "ops": [...]}],      // sessions oh-my-pi writes
//    "describe": [{"path": "...", "leaves": ["id", ...]}]}        // files oh-my-pi reads
//    "list": [{"cwd": "...", "dir": "..."}],                        // SessionManager.list of a folder
//    "out": "/path/answer.json"}                                     // where the answer goes
// Answer: {"version", "written": [{"path", "ids", "name"} | {"error"}],
//          "results": [{"path", "ok", "error"?, "header", "entries", "leafId", "labels", "name",
//                       "contexts": {"@leaf" | id: {messages, llm, thinkingLevel, models, ...}}}],
//          "listed": [[{"path", "id", "title"}, ...] | {"error"}]}
// Writes run before reads, so a batch can write a session and read it back.
import { readFileSync, writeFileSync } from "node:fs";
import { SessionManager } from "./node_modules/@oh-my-pi/pi-coding-agent/src/session/session-manager.ts";
import { buildSessionContext } from "./node_modules/@oh-my-pi/pi-coding-agent/src/session/session-context.ts";
import { convertToLlm } from "./node_modules/@oh-my-pi/pi-coding-agent/src/session/messages.ts";

const version = JSON.parse(
	readFileSync(new URL("./node_modules/@oh-my-pi/pi-coding-agent/package.json", import.meta.url), "utf8"),
).version;

function contextOf(entries: any[], leafId: string | null) {
	const ctx = buildSessionContext(entries, leafId);
	return {
		messages: ctx.messages,
		thinkingLevel: ctx.thinkingLevel,
		models: ctx.models,
		mode: ctx.mode,
		modeData: ctx.modeData ?? null,
		injectedTtsrRules: ctx.injectedTtsrRules,
		llm: convertToLlm(ctx.messages),
	};
}

async function describe(file: { path: string; leaves?: string[] }) {
	const manager = await SessionManager.open(file.path, undefined, undefined, { suppressBreadcrumb: true, throwIfMissing: true });
	const entries = manager.getEntries();
	const labels: Record<string, string> = {};
	for (const entry of entries) {
		const label = manager.getLabel(entry.id);
		if (label !== undefined) labels[entry.id] = label;
	}
	const leafId = manager.getLeafId();
	const contexts: Record<string, unknown> = { "@leaf": { leafId, ...contextOf(entries, leafId) } };
	for (const leaf of file.leaves ?? []) contexts[leaf] = contextOf(entries, leaf);
	const result = {
		path: file.path,
		ok: true,
		header: manager.getHeader(),
		entries,
		leafId,
		labels,
		name: manager.getSessionName() ?? null,
		contexts,
	};
	await manager.close();
	return result;
}

const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15,
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

function imageBlock(data: string | undefined) {
	return data ? [{ type: "image", data, mimeType: "image/png" }] : [];
}

async function write(spec: { cwd: string; dir: string; ops: any[] }) {
	let manager = SessionManager.create(spec.cwd, spec.dir);
	const ids: string[] = [];
	let clock = 1_700_000_000_000;
	const at = (index: number) => ids[index % ids.length];
	for (const op of spec.ops) {
		clock += 1000;
		switch (op.op) {
			case "user":
				ids.push(manager.appendMessage({ role: "user", content: [{ type: "text", text: op.text }, ...imageBlock(op.image)], timestamp: clock } as any));
				break;
			case "assistant": {
				const calls = (op.calls ?? []).map((id: string) => ({ type: "toolCall", id, name: "read", arguments: { path: id } }));
				ids.push(manager.appendMessage({ role: "assistant", content: [{ type: "text", text: op.text }, ...calls],
					api: "anthropic-messages", provider: "anthropic", model: op.model ?? "claude-x", usage,
					stopReason: calls.length ? "toolUse" : "stop", timestamp: clock } as any));
				break;
			}
			case "toolResult":
				ids.push(manager.appendMessage({ role: "toolResult", toolCallId: op.callId, toolName: "read",
					content: [{ type: "text", text: op.text }, ...imageBlock(op.image)], isError: false, timestamp: clock } as any));
				break;
			case "custom":
				ids.push(manager.appendCustomMessageEntry("ext", [{ type: "text", text: op.text }, ...imageBlock(op.image)] as any, true,
					op.details, op.attribution));
				break;
			case "label":
				ids.push(manager.appendLabelChange(at(op.target), op.label));
				break;
			case "name":
				await manager.setSessionName(op.name, "user");
				break;
			case "branch":
				manager.branch(at(op.target));
				break;
			case "branchSummary":
				ids.push(manager.branchWithSummary(at(op.target), op.summary));
				break;
			case "compaction":
				ids.push(manager.appendCompaction(op.summary, undefined, at(op.firstKept), op.tokensBefore ?? 1000));
				break;
			case "thinking":
				ids.push(manager.appendThinkingLevelChange(op.level));
				break;
			case "model":
				ids.push(manager.appendModelChange(op.model));
				break;
			case "reopen": {
				const path = manager.getSessionFile()!;
				await manager.flush();
				await manager.close();
				manager = await SessionManager.open(path, undefined, undefined, { suppressBreadcrumb: true });
				break;
			}
			default:
				throw new Error(`unknown op ${op.op}`);
		}
	}
	const path = manager.getSessionFile();
	await manager.flush();
	await manager.close();
	return { path, ids, name: manager.getSessionName() ?? null };
}

const request = JSON.parse(readFileSync(0, "utf8"));
const written = [];
for (const spec of request.write ?? []) {
	try {
		written.push(await write(spec));
	} catch (error: any) {
		written.push({ error: String(error?.stack ?? error) });
	}
}
const results = [];
for (const file of request.describe ?? []) {
	try {
		results.push(await describe(file));
	} catch (error: any) {
		results.push({ path: file.path, ok: false, error: String(error?.stack ?? error) });
	}
}
const listed = [];
for (const folder of request.list ?? []) {
	try {
		const sessions = await SessionManager.list(folder.cwd, folder.dir);
		listed.push(sessions.map(s => ({ path: s.path, id: s.id, title: s.title ?? null })));
	} catch (error: any) {
		listed.push({ error: String(error?.stack ?? error) });
	}
}
// The answer goes to the file the request names: a large answer written to a pipe was
// cut short by the exit (process.stdout.write) or stalled (Bun.write).
writeFileSync(request.out, JSON.stringify({ version, written, results, listed }));
process.exit(0);
