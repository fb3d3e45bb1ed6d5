/**
 * session-sidecar for pi: pi's compactions and branch summaries made by the sidecar.
 *
 * pi keeps its own session file (its SessionManager cannot be replaced), but an
 * extension may supply the compaction (`session_before_compact`) and the branch
 * summary (`session_before_tree`). This one writes pi's session as it stands (the
 * header and entries pi holds) to a scratch sessions root, runs the sidecar's
 * `session/compact` (or `session/branch` with `summarize`) there, and hands pi the
 * result; pi then appends its own entry to its own file. The scratch copy is
 * deleted: nothing but pi ever writes pi's file.
 *
 * The model call stays with pi: the sidecar's `client` provider asks us to
 * summarize (`session/summarize`) and we answer with the model pi has selected,
 * through pi's model registry (its keys, its base URL). Set
 * `SESSION_SIDECAR_PI_PROVIDER` to `anthropic`, `openai` or `offline` to let the
 * sidecar call its own provider instead (configured as the sidecar is).
 *
 * What the sidecar adds to pi's own compaction is its carry-over: the user's
 * messages and constraints verbatim, the last request, the open errors and the
 * task list, merged from one compaction to the next through `details` (which is
 * why the details carry our mark: the sidecar reads marked details even though pi
 * records an extension's compaction as `fromHook`).
 */
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { SidecarClient, type SummarizeParams } from "@session-sidecar/client";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";

/** The key the sidecar looks for in `details` (sidecar/compaction/files.py OWN_DETAILS_MARK). */
export const OWN_DETAILS_MARK = "session-sidecar";
const MARK_VERSION = 1;

type Provider = "client" | "anthropic" | "openai" | "offline";

export interface SidecarExtensionOptions {
  /** `client` (default): pi's selected model writes the summary; else the sidecar's own provider. */
  provider?: Provider;
  /** The sidecar to run; default `$SESSION_SIDECAR_BIN`, else `session-sidecar` on PATH. */
  command?: string;
  /** Called when the sidecar could not do it and pi falls back to its own summary. */
  onFallback?: (what: "compaction" | "branch summary", error: unknown, ctx: ExtensionContext) => void;
}

function providerFromEnvironment(): Provider {
  const named = process.env.SESSION_SIDECAR_PI_PROVIDER?.trim();
  if (!named || named === "pi") return "client";
  if (named === "client" || named === "anthropic" || named === "openai" || named === "offline") return named;
  throw new Error(`SESSION_SIDECAR_PI_PROVIDER=${named}: expected pi, anthropic, openai or offline`);
}

/** Scratch roots are named so, in the system's temporary folder, each with an `owner` file holding its pi's pid. */
const SCRATCH_PREFIX = "pi-session-sidecar-";

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"; // alive, another user's
  }
}

/**
 * Remove the scratch roots of pi processes that are gone. A root holds a copy of a pi
 * session while it is compacted, and is removed when pi exits; a pi that was killed
 * could not, and its copy would stay in the temporary folder. A root without an owner
 * file, or whose owner still runs, is left alone.
 */
function removeAbandonedScratch(folder: string = tmpdir()): void {
  let names: string[];
  try {
    names = readdirSync(folder).filter((name) => name.startsWith(SCRATCH_PREFIX));
  } catch {
    return;
  }
  for (const name of names) {
    const root = join(folder, name);
    let owner: number;
    try {
      owner = Number.parseInt(readFileSync(join(root, "owner"), "utf8"), 10);
    } catch {
      continue;
    }
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && !isRunning(owner)) {
      rmSync(root, { recursive: true, force: true });
    }
  }
}

function scratchRoot(): string {
  removeAbandonedScratch();
  const root = mkdtempSync(join(tmpdir(), SCRATCH_PREFIX));
  writeFileSync(join(root, "owner"), `${process.pid}\n`);
  return root;
}

/** One summarize request's model: the pi context and abort signal of the hook that asked. */
interface ActiveHook {
  ctx: ExtensionContext;
  signal: AbortSignal;
}

/**
 * One sidecar for the pi process, spawned at the first compaction and kept (a
 * spawn costs a few hundred milliseconds), with its own scratch sessions root.
 */
class SidecarHandle {
  private client: Promise<SidecarClient> | undefined;
  private readonly root = scratchRoot();
  private scratchCount = 0;
  /** Summaries run one hook at a time (pi compacts or navigates once at a time). */
  active: ActiveHook | undefined;

  constructor(private readonly options: SidecarExtensionOptions) {}

  get(): Promise<SidecarClient> {
    this.client ??= SidecarClient.spawn({
      root: this.root,
      ...(this.options.command ? { command: this.options.command } : {}),
      clientInfo: { name: "@session-sidecar/pi-extension", version: "0.1.0" },
      // The scratch copy is compacted on request only, never on its own.
      settings: { compaction: { autoCompact: false } },
      summarize: (params, { signal }) => this.summarizeWithPi(params, signal),
    });
    // A sidecar that failed to start is tried again at the next hook.
    this.client.catch(() => (this.client = undefined));
    return this.client;
  }

  private async summarizeWithPi(params: SummarizeParams, sidecarSignal: AbortSignal): Promise<string> {
    const hook = this.active;
    if (!hook) throw new Error("no pi hook is waiting for this summary");
    const model = hook.ctx.model;
    if (!model) throw new Error("pi has no model selected to write the summary");
    const limit = typeof model.maxTokens === "number" && model.maxTokens > 0 ? model.maxTokens : params.maxTokens;
    const reply = await hook.ctx.modelRegistry.complete(
      model,
      {
        systemPrompt: params.systemPrompt,
        messages: [{ role: "user", content: [{ type: "text", text: params.prompt }], timestamp: Date.now() }],
      },
      { maxTokens: Math.min(params.maxTokens, limit), signal: AbortSignal.any([sidecarSignal, hook.signal]) },
    );
    if (reply.stopReason === "error" || reply.stopReason === "aborted") {
      throw new Error(reply.errorMessage || `pi's model stopped: ${reply.stopReason}`);
    }
    return reply.content
      .filter((block): block is { type: "text"; text: string } => block.type === "text")
      .map((block) => block.text)
      .join("");
  }

  /**
   * pi's session as pi holds it now, written as pi writes its file, opened in the sidecar.
   * From memory rather than pi's file: pi writes its file only once the first reply is
   * in, and `--no-session` has none.
   */
  async openScratch(ctx: ExtensionContext): Promise<{ client: SidecarClient; sessionId: string; path: string }> {
    const header = ctx.sessionManager.getHeader();
    if (!header) throw new Error("pi's session has no header");
    const lines = [header, ...ctx.sessionManager.getEntries()].map((entry) => JSON.stringify(entry));
    const folder = join(this.root, "pi");
    mkdirSync(folder, { recursive: true });
    this.scratchCount += 1;
    const path = join(folder, `scratch-${this.scratchCount}_${header.id}.jsonl`);
    writeFileSync(path, `${lines.join("\n")}\n`);
    const client = await this.get();
    try {
      const opened = await client.open({ path });
      return { client, sessionId: opened.sessionId, path };
    } catch (error) {
      rmSync(path, { force: true });
      throw error;
    }
  }

  async closeScratch(client: SidecarClient, sessionId: string, path: string): Promise<void> {
    try {
      await client.close({ sessionId });
    } finally {
      rmSync(path, { force: true });
    }
  }

  async dispose(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    try {
      if (client) await (await client).dispose();
    } catch {
      // It never started: nothing to stop.
    } finally {
      rmSync(this.root, { recursive: true, force: true });
    }
  }
}

/** The sidecar's details as pi will store them, with the mark that has the next compaction read them. */
function marked(details: unknown, provider: string, model: string | null): Record<string, unknown> {
  const base = details && typeof details === "object" ? (details as Record<string, unknown>) : {};
  return { ...base, [OWN_DETAILS_MARK]: { version: MARK_VERSION, provider, model } };
}

/** pi's leaf after a navigation to `targetId` (a user or custom message: its parent, its text back in the editor). */
function leafAfterNavigation(ctx: ExtensionContext, targetId: string): string | null {
  const target = ctx.sessionManager.getEntry(targetId);
  if (!target) return targetId;
  const rewrites = (target.type === "message" && target.message.role === "user") || target.type === "custom_message";
  return rewrites ? target.parentId : targetId;
}

export function sessionSidecarExtension(options: SidecarExtensionOptions = {}) {
  return (pi: ExtensionAPI): void => {
    const provider = options.provider ?? providerFromEnvironment();
    const sidecar = new SidecarHandle(options);
    const fallback = (what: "compaction" | "branch summary", error: unknown, ctx: ExtensionContext) => {
      if (options.onFallback) return options.onFallback(what, error, ctx);
      const message = error instanceof Error ? error.message : String(error);
      ctx.ui.notify(`session-sidecar: ${what} failed (${message}); pi makes its own`, "warning");
    };
    const modelName = (ctx: ExtensionContext) => (provider === "client" ? ctx.model?.id : undefined);

    pi.on("session_before_compact", async (event, ctx) => {
      const { preparation, signal } = event;
      sidecar.active = { ctx, signal };
      let scratch: Awaited<ReturnType<SidecarHandle["openScratch"]>> | undefined;
      try {
        scratch = await sidecar.openScratch(ctx);
        const model = modelName(ctx);
        const result = await scratch.client.compact(
          {
            sessionId: scratch.sessionId,
            leafId: ctx.sessionManager.getLeafId() ?? undefined,
            provider,
            ...(model ? { model } : {}),
            ...(event.customInstructions ? { customInstructions: event.customInstructions } : {}),
            reserveTokens: preparation.settings.reserveTokens,
            keepRecentTokens: preparation.settings.keepRecentTokens,
          },
          { signal },
        );
        // The entry holds the whole carry-over; the call's result names only the file lists.
        const [entry] = (await scratch.client.getEntries({ sessionId: scratch.sessionId, ids: [result.entryId] }))
          .entries as Array<{ details?: unknown }>;
        return {
          compaction: {
            summary: result.summary,
            firstKeptEntryId: result.firstKeptEntryId,
            tokensBefore: result.tokensBefore,
            details: marked(entry?.details ?? result.details, result.provider, result.model),
          },
        };
      } catch (error) {
        if (signal.aborted) return { cancel: true };
        fallback("compaction", error, ctx);
        return undefined;
      } finally {
        sidecar.active = undefined;
        if (scratch) await sidecar.closeScratch(scratch.client, scratch.sessionId, scratch.path).catch(() => {});
      }
    });

    pi.on("session_before_tree", async (event, ctx) => {
      const { preparation, signal } = event;
      // Without a summary pi only moves its leaf: nothing for the sidecar to do.
      if (!preparation.userWantsSummary || preparation.entriesToSummarize.length === 0) return undefined;
      sidecar.active = { ctx, signal };
      let scratch: Awaited<ReturnType<SidecarHandle["openScratch"]>> | undefined;
      try {
        scratch = await sidecar.openScratch(ctx);
        const { client, sessionId } = scratch;
        // The sidecar's leaf is the file's last entry; pi's may be elsewhere after earlier navigations.
        if (preparation.oldLeafId !== null) await client.branch({ sessionId, entryId: preparation.oldLeafId });
        const model = modelName(ctx);
        const instructions = preparation.customInstructions;
        const branched = await client.branch(
          {
            sessionId,
            entryId: leafAfterNavigation(ctx, preparation.targetId),
            summarize: true,
            provider,
            ...(model ? { model } : {}),
            ...(instructions ? { customInstructions: instructions } : {}),
          },
          { signal },
        );
        if (!branched.summaryEntryId) return undefined;
        const [entry] = (await client.getEntries({ sessionId, ids: [branched.summaryEntryId] })).entries as Array<{
          summary: string;
          details?: unknown;
        }>;
        if (!entry) return undefined;
        return {
          summary: {
            summary: entry.summary,
            details: marked(entry.details, provider, model ?? null),
          },
        };
      } catch (error) {
        if (signal.aborted) return { cancel: true };
        fallback("branch summary", error, ctx);
        return undefined;
      } finally {
        sidecar.active = undefined;
        if (scratch) await sidecar.closeScratch(scratch.client, scratch.sessionId, scratch.path).catch(() => {});
      }
    });

    pi.on("session_shutdown", async () => {
      await sidecar.dispose();
    });
  };
}

/** What pi loads (`pi -e <this folder>`, or the folder in settings' `extensions`). */
export default sessionSidecarExtension();
