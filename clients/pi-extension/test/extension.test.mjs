// pi's own agent loop (its CLI in RPC mode), offline against the scripted model
// server, with the extension loaded: pi compacts and navigates its tree, the sidecar
// makes the summaries, and pi's own file is checked afterwards, then reopened by pi.
// Each pi version of PI_VERSIONS (default: pi16 pi15, the folders holding them).
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { EXTENSION, PiRpc, installPackage, piHome, piInstall, readLines, sessionFiles, startModelServer } from "./harness.mjs";

const CONSTRAINT = "Never touch the files under vendor/, they are generated.";
const MARK = "session-sidecar";
// The sidecar's summarization system prompt (sidecar/compaction/prompts.py): how its requests are told apart.
const SIDECAR_PROMPT = "You write handoff notes for a coding agent";
// The scripted server quotes the last [[MARKER]] of a prompt; these prompts carry none but [[NOTE]].
const filler = (n) => `Step ${n} [[NOTE]]: ${"tidy the module and describe what you would change. ".repeat(30)}`;
const versions = (process.env.PI_VERSIONS || "pi16 pi15").split(/\s+/).filter(Boolean);

let server;
before(async () => {
  server = await startModelServer(mkdtempSync(join(tmpdir(), "pi-ext-model-")));
});
after(() => server?.stop());

function onlyFile(home) {
  const files = sessionFiles(home);
  assert.equal(files.length, 1, `one session file in ${home.sessions}: ${files}`);
  return files[0];
}

/** The context pi built, less its system messages (pi 1.6 keeps the system prompt among them). */
async function conversation(pi) {
  const { messages } = await pi.command({ type: "get_messages" });
  return messages.filter((m) => m.role !== "system");
}

/** The model server's requests from now on, when `run` is done. */
async function requestsDuring(run) {
  const before = server.requests().length;
  await run();
  return server.requests().slice(before);
}

for (const version of versions) {
  const install = piInstall(version);

  describe(`pi ${install.version}`, () => {
    test("/compact through the extension: pi's file holds the sidecar's summary, the constraint verbatim, twice", async () => {
      const home = piHome(server.port);
      const pi = new PiRpc(install, home);
      try {
        await pi.prompt(`${CONSTRAINT} [[TOOL]] Start by writing the note.`);
        for (let n = 0; n < 4; n++) await pi.prompt(filler(n));
        const requests = await requestsDuring(async () => {
          const result = await pi.command({ type: "compact" });
          assert.ok(result.summary.includes(CONSTRAINT), result.summary);
        });
        // pi's model wrote the prose: the sidecar's summarize request went through pi's provider.
        assert.ok(requests.some((r) => JSON.stringify(r.body ?? {}).includes(SIDECAR_PROMPT)), "no summary request reached pi's model");

        const path = onlyFile(home);
        const [first] = readLines(path).filter((e) => e.type === "compaction");
        assert.ok(first, "pi wrote no compaction entry");
        assert.equal(first.fromHook, true);
        assert.deepEqual(first.details[MARK], { version: 1, provider: "client", model: "scripted-1" });
        assert.ok(first.summary.includes(CONSTRAINT) && first.summary.includes("<carry-over>"), first.summary);
        assert.ok(JSON.stringify(first.details.carryOver).includes(CONSTRAINT));
        assert.ok(readLines(path).some((e) => e.id === first.firstKeptEntryId && e.type === "message"));

        // More work, then a second compaction: the constraint is said only in the first
        // compaction's carry-over now, which pi stored fromHook with our details.
        for (let n = 4; n < 8; n++) await pi.prompt(filler(n));
        await pi.command({ type: "compact" });
        const compactions = readLines(path).filter((e) => e.type === "compaction");
        assert.equal(compactions.length, 2);
        const second = compactions[1];
        assert.equal(second.fromHook, true);
        assert.ok(second.summary.includes(CONSTRAINT), second.summary);
        assert.ok(!second.summary.includes("Step 0 [[NOTE]]"), "the second summary should not quote the first compaction's span");
      } finally {
        await pi.close();
      }

      // pi reopens its file: the context it builds starts with the sidecar's summary, and the model sees the constraint.
      const reopened = new PiRpc(install, home, { args: ["--session", onlyFile(home)] });
      try {
        const messages = await conversation(reopened);
        assert.equal(messages[0].role, "compactionSummary");
        assert.ok(messages[0].summary.includes(CONSTRAINT));
        const requests = await requestsDuring(() => reopened.prompt("What must I not do? [[NOTE]]"));
        assert.ok(requests.some((r) => JSON.stringify(r.body ?? {}).includes(CONSTRAINT)), "the constraint did not reach the model");
      } finally {
        await reopened.close();
        home.remove();
      }
    });

    test("a killed pi's scratch copy is removed by the next pi that loads the extension", async () => {
      const home = piHome(server.port);
      const tmp = join(home.base, "tmp");
      mkdirSync(tmp);
      const env = { TMPDIR: tmp };
      const scratchRoots = () => readdirSync(tmp).filter((name) => name.startsWith("pi-session-sidecar-"));
      const ownerOf = (name) => Number(readFileSync(join(tmp, name, "owner"), "utf8"));
      // Left alone: a root whose owner runs (this test's process), and one with no owner file.
      for (const [name, owner] of [["pi-session-sidecar-live", process.pid], ["pi-session-sidecar-bare", null]]) {
        mkdirSync(join(tmp, name, "pi"), { recursive: true });
        if (owner !== null) writeFileSync(join(tmp, name, "owner"), `${owner}\n`);
      }
      const gone = spawnSync("true").pid; // a pid whose process has exited
      mkdirSync(join(tmp, "pi-session-sidecar-gone", "pi"), { recursive: true });
      writeFileSync(join(tmp, "pi-session-sidecar-gone", "owner"), `${gone}\n`);
      writeFileSync(join(tmp, "pi-session-sidecar-gone", "pi", "scratch-1_x.jsonl"), "{}\n");

      const killed = new PiRpc(install, home, { env });
      await killed.prompt(`${CONSTRAINT} [[TOOL]] Start by writing the note.`);
      const [own] = scratchRoots().filter((name) => existsSync(join(tmp, name, "owner")) && ownerOf(name) === killed.child.pid);
      assert.ok(own, `no scratch root owned by pi: ${scratchRoots()}`);
      assert.ok(!existsSync(join(tmp, "pi-session-sidecar-gone")), "the root of a pi that is gone was kept");
      killed.child.kill("SIGKILL");
      await killed.exited;
      assert.ok(existsSync(join(tmp, own)), "a killed pi cannot remove its root: the next one must");

      const next = new PiRpc(install, home, { env });
      try {
        await next.prompt(filler(0));
        assert.ok(!existsSync(join(tmp, own)), "the killed pi's scratch root was kept");
        assert.ok(existsSync(join(tmp, "pi-session-sidecar-live")) && existsSync(join(tmp, "pi-session-sidecar-bare")));
      } finally {
        await next.close();
      }
      assert.deepEqual(scratchRoots().sort(), ["pi-session-sidecar-bare", "pi-session-sidecar-live"]); // pi removes its own at exit
      home.remove();
    });

    test("auto-compaction past pi's threshold goes through the extension too", async () => {
      // The scripted server reports 90,000 prompt tokens for a [[BIG]] turn: past 100,000 less pi's 16,384 reserve.
      const home = piHome(server.port, { enabled: true }, 100000);
      const pi = new PiRpc(install, home);
      try {
        await pi.prompt(`${CONSTRAINT} [[TOOL]] Start by writing the note.`);
        for (let n = 0; n < 3; n++) await pi.prompt(filler(n));
        const from = pi.records.length;
        await pi.prompt(`${filler(3)} [[BIG]]`);
        const end = await pi.waitFor((r) => r.type === "compaction_end", { from, what: "the automatic compaction" });
        assert.equal(end.reason, "threshold");
        assert.ok(end.result?.summary.includes(CONSTRAINT), JSON.stringify(end));
        const [entry] = readLines(onlyFile(home)).filter((e) => e.type === "compaction");
        assert.equal(entry.fromHook, true);
        assert.equal(entry.details[MARK].provider, "client");
      } finally {
        await pi.close();
        home.remove();
      }
    });

    test("SESSION_SIDECAR_PI_PROVIDER=offline: the sidecar's own provider writes the summary, pi's model is not asked", async () => {
      const home = piHome(server.port);
      const pi = new PiRpc(install, home, { env: { SESSION_SIDECAR_PI_PROVIDER: "offline" } });
      try {
        await pi.prompt(`${CONSTRAINT} [[TOOL]] Start by writing the note.`);
        for (let n = 0; n < 4; n++) await pi.prompt(filler(n));
        const requests = await requestsDuring(() => pi.command({ type: "compact" }));
        assert.deepEqual(requests.filter((r) => r.method === "POST"), []);
        const [entry] = readLines(onlyFile(home)).filter((e) => e.type === "compaction");
        assert.deepEqual(entry.details[MARK], { version: 1, provider: "offline", model: "offline" });
        assert.ok(entry.summary.includes(CONSTRAINT) && entry.summary.includes("## Goal"), entry.summary);
      } finally {
        await pi.close();
        home.remove();
      }
    });

    test("installed as the README says (pi install <folder>), pi loads it from its settings and compacts through it", async () => {
      const home = piHome(server.port);
      const settings = installPackage(install, home, EXTENSION);
      assert.equal(settings.packages.length, 1);
      assert.equal(settings.compaction.keepRecentTokens, 400); // pi kept the other settings
      const pi = new PiRpc(install, home, { extensions: [] });
      try {
        await pi.prompt(`${CONSTRAINT} [[TOOL]] Start by writing the note.`);
        for (let n = 0; n < 4; n++) await pi.prompt(filler(n));
        await pi.command({ type: "compact" });
        const [entry] = readLines(onlyFile(home)).filter((e) => e.type === "compaction");
        assert.equal(entry.fromHook, true);
        assert.equal(entry.details[MARK].provider, "client");
        assert.ok(entry.summary.includes(CONSTRAINT));
      } finally {
        await pi.close();
        home.remove();
      }
    });

    test("pi's own /compact (no extension) against the same model loses the constraint", async () => {
      const home = piHome(server.port);
      const pi = new PiRpc(install, home, { extensions: [] });
      try {
        await pi.prompt(`${CONSTRAINT} [[TOOL]] Start by writing the note.`);
        for (let n = 0; n < 4; n++) await pi.prompt(filler(n));
        const result = await pi.command({ type: "compact" });
        assert.ok(!result.summary.includes(CONSTRAINT), result.summary);
        const [entry] = readLines(onlyFile(home)).filter((e) => e.type === "compaction");
        assert.ok(entry && !entry.fromHook && entry.details?.[MARK] === undefined);
      } finally {
        await pi.close();
        home.remove();
      }
    });

    test("a tree navigation with a summary: pi's branch_summary entry is the sidecar's", async () => {
      const home = piHome(server.port);
      const pi = new PiRpc(install, home);
      let path;
      try {
        await pi.prompt(`${CONSTRAINT} Read the plan first. [[NOTE]]`);
        await pi.prompt("[[TOOL]] Try writing the note another way.");
        await pi.prompt(filler(1));
        path = onlyFile(home);
        const entries = readLines(path).filter((e) => e.type !== "session");
        const firstReply = entries.find((e) => e.type === "message" && e.message.role === "assistant");
        const requests = await requestsDuring(async () => {
          const from = pi.records.length;
          await pi.command({ type: "prompt", message: `/goto ${firstReply.id}` });
          await pi.waitFor((r) => r.type === "extension_ui_request" && /^goto: /.test(r.message ?? ""), { from, what: "/goto" });
          const notes = pi.records.slice(from).filter((r) => r.type === "extension_ui_request").map((r) => r.message);
          assert.deepEqual(notes, ["goto: done"]);
        });
        const asked = requests.map((r) => JSON.stringify(r.body ?? {})).filter((body) => body.includes(SIDECAR_PROMPT));
        assert.equal(asked.length, 1, "one branch summary request should reach pi's model");
        // It summarized the branch left (the two later prompts), not the part kept.
        assert.ok(asked[0].includes("Try writing the note another way") && !asked[0].includes("Read the plan first"));
        const summaries = readLines(path).filter((e) => e.type === "branch_summary");
        assert.equal(summaries.length, 1);
        const [summary] = summaries;
        assert.equal(summary.parentId, firstReply.id);
        assert.equal(summary.fromHook, true);
        assert.equal(summary.details[MARK].version, 1);
        // The sidecar's branch summary, by its preamble (pi's own reads otherwise).
        assert.ok(summary.summary.startsWith("Notes on a branch the user explored"), summary.summary);
      } finally {
        await pi.close();
      }
      const reopened = new PiRpc(install, home, { args: ["--session", path] });
      try {
        const messages = await conversation(reopened);
        assert.deepEqual(
          messages.map((m) => m.role),
          ["user", "assistant", "branchSummary"],
        );
        assert.ok(messages[2].summary.startsWith("Notes on a branch the user explored"));
      } finally {
        await reopened.close();
        home.remove();
      }
    });
  });
}
