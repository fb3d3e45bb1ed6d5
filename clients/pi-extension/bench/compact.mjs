// Compaction through the extension beside pi's own, in one run: pi's CLI in RPC
// mode against the scripted model server, the same session built in both, the
// wall time of the `compact` command (send to response). Through the extension the
// first compaction spawns the sidecar (cold), the second reuses it (warm); the
// sidecar's spawn alone is timed too. Whether the summary keeps the constraint is
// printed beside each.
//   node bench/compact.mjs [rounds=5] [pi16|pi15]
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { SidecarClient } from "@session-sidecar/client";

import { PiRpc, piHome, piInstall, startModelServer } from "../test/harness.mjs";

const rounds = Number(process.argv[2] || 5);
const install = piInstall(process.argv[3] || "pi16");
const CONSTRAINT = "Never touch the files under vendor/, they are generated.";
const filler = (n) => `Step ${n} [[NOTE]]: ${"tidy the module and describe what you would change. ".repeat(30)}`;

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const ms = (value) => `${value.toFixed(0).padStart(6)} ms`;

async function timedCompact(pi) {
  const start = performance.now();
  const result = await pi.command({ type: "compact" });
  return { ms: performance.now() - start, kept: result.summary.includes(CONSTRAINT), chars: result.summary.length };
}

async function session(withExtension, server) {
  const home = piHome(server.port);
  const pi = new PiRpc(install, home, withExtension ? {} : { extensions: [] });
  try {
    await pi.prompt(`${CONSTRAINT} [[TOOL]] Start by writing the note.`);
    for (let n = 0; n < 4; n++) await pi.prompt(filler(n));
    const first = await timedCompact(pi);
    for (let n = 4; n < 8; n++) await pi.prompt(filler(n));
    const second = await timedCompact(pi);
    return { first, second };
  } finally {
    await pi.close();
    home.remove();
  }
}

const server = await startModelServer(mkdtempSync(join(tmpdir(), "pi-ext-bench-")));
const runs = { pi: [], extension: [], spawn: [] };
try {
  for (let round = 0; round < rounds; round++) {
    runs.pi.push(await session(false, server));
    runs.extension.push(await session(true, server));
    const start = performance.now();
    const client = await SidecarClient.spawn({ root: mkdtempSync(join(tmpdir(), "pi-ext-bench-root-")) });
    runs.spawn.push(performance.now() - start);
    await client.dispose();
  }
} finally {
  server.stop();
}

const row = (name, values, kept, chars) =>
  console.log(`${name.padEnd(62)} ${ms(median(values))}   min ${ms(Math.min(...values))}   constraint kept ${kept}   summary ${chars} chars`);
console.log(`pi ${install.version}, ${rounds} rounds, medians (scripted model on loopback)`);
for (const which of ["first", "second"]) {
  for (const [name, label] of [["pi", "pi's own compaction"], ["extension", "through the extension (sidecar)"]]) {
    const results = runs[name].map((r) => r[which]);
    const tag = name === "extension" ? (which === "first" ? ", cold: spawns the sidecar" : ", warm") : "";
    row(
      `${which} compaction, ${label}${tag}`,
      results.map((r) => r.ms),
      `${results.filter((r) => r.kept).length}/${results.length}`,
      median(results.map((r) => r.chars)),
    );
  }
}
console.log(`${"sidecar spawn + initialize alone".padEnd(62)} ${ms(median(runs.spawn))}   min ${ms(Math.min(...runs.spawn))}`);
