// The README's example runs as written, against a real sidecar.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, it } from "node:test";
import { PACKAGE_DIR, removeTempRoots, SIDECAR_BIN, tempRoot, testEnv } from "./helpers.js";

after(removeTempRoots);

it("the README's example runs as written", async () => {
  const readme = readFileSync(join(PACKAGE_DIR, "README.md"), "utf8");
  const example = /## Example[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(example, "README.md has an ## Example with a js block");
  // Inside the package, so that `@session-sidecar/client` resolves to this package.
  const dir = join(PACKAGE_DIR, "build", "readme");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "example.mjs");
  writeFileSync(file, example);
  const home = tempRoot();
  const cwd = tempRoot();
  const { stdout } = await promisify(execFile)(process.execPath, [file], {
    cwd,
    env: { ...testEnv(), SESSION_SIDECAR_BIN: SIDECAR_BIN, SESSION_SIDECAR_HOME: home },
  });
  assert.match(stdout, /^call read { path: .main.py. }\nresult of call-1\n4 messages, ~\d+ tokens\n$/);
  // The session landed in $SESSION_SIDECAR_HOME, in pi's layout.
  const folders = readdirSync(home).filter((name) => name.startsWith("--"));
  assert.equal(folders.length, 1);
  assert.equal(readdirSync(join(home, folders[0]!)).filter((name) => name.endsWith(".jsonl")).length, 1);
});

it("the README's OpenAI Agents SDK example runs as written", async () => {
  const readme = readFileSync(join(PACKAGE_DIR, "README.md"), "utf8");
  const example = /## The OpenAI Agents SDK[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(example, "README.md has an ## The OpenAI Agents SDK with a js block");
  const dir = join(PACKAGE_DIR, "build", "readme");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "openai-agents.mjs");
  writeFileSync(file, example);
  const home = tempRoot();
  const { stdout } = await promisify(execFile)(process.execPath, [file], {
    cwd: tempRoot(),
    env: { ...testEnv(), SESSION_SIDECAR_BIN: SIDECAR_BIN, SESSION_SIDECAR_HOME: home, OPENAI_AGENTS_DISABLE_TRACING: "1" },
  });
  assert.equal(stdout, "Hello! 2 items\n");
  const folders = readdirSync(home).filter((name) => name.startsWith("--"));
  assert.equal(folders.length, 1); // the conversation is a session of the sidecar's root
});
