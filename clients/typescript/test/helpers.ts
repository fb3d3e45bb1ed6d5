// Shared by the tests: the sidecar to run, temporary roots, the schema and a
// validator for the subset of JSON Schema it uses, and sample conversations.

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { SidecarClient, type EntryInput, type SpawnOptions } from "@session-sidecar/client";

export const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const REPO_DIR = resolve(PACKAGE_DIR, "../..");
export const SCHEMA_PATH = process.env.SESSION_SIDECAR_SCHEMA ?? join(REPO_DIR, "protocol/schema.json");
export const VECTORS_DIR = process.env.SESSION_SIDECAR_VECTORS ?? join(REPO_DIR, "protocol/vectors");

/** The sidecar under test: $SESSION_SIDECAR_BIN, else `session-sidecar` on PATH. */
export const SIDECAR_BIN = process.env.SESSION_SIDECAR_BIN || "session-sidecar";

/** Environment without the vendors' keys, so the default summarizer is always the offline one. */
export function testEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) {
    if (/^(ANTHROPIC|OPENAI)_/.test(name) || name.startsWith("SESSION_SIDECAR_") && name !== "SESSION_SIDECAR_BIN") {
      delete env[name];
    }
  }
  return env;
}

const roots: string[] = [];

export function tempRoot(prefix = "sidecar-ts-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  roots.push(dir);
  return dir;
}

export function removeTempRoots(): void {
  for (const dir of roots.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A ready client on a fresh root (offline summarizer by default). */
export async function startClient(options: SpawnOptions = {}): Promise<SidecarClient> {
  return SidecarClient.spawn({
    command: SIDECAR_BIN,
    root: options.root ?? tempRoot(),
    env: testEnv(),
    shutdownTimeoutMs: 10_000,
    ...options,
    settings: { providers: { default: "offline" }, ...options.settings },
  });
}

// -- the schema ---------------------------------------------------------------------

export type Schema = any;
export const schema: Schema = JSON.parse(readFileSync(SCHEMA_PATH, "utf8"));

/**
 * Problems of `value` against `node` (empty when it fits). The subset msgspec
 * emits: $ref, anyOf, enum, const, type, properties/required/additionalProperties,
 * items. With `strict`, an object may not carry properties its schema does not
 * list (results from the server must not grow fields the schema lacks).
 */
export function validate(node: Schema, value: unknown, path = "$", strict = true): string[] {
  if (node === true || node === undefined) return [];
  if (node.$ref) {
    const name = node.$ref.replace("#/$defs/", "");
    const def = schema.$defs[name];
    if (!def) return [`${path}: unknown $ref ${node.$ref}`];
    return validate(def, value, path, strict);
  }
  if (node.anyOf) {
    const results = node.anyOf.map((member: Schema) => validate(member, value, path, strict));
    if (results.some((problems: string[]) => problems.length === 0)) return [];
    return [`${path}: fits none of anyOf (${results.map((r: string[]) => r[0]).join("; ")})`];
  }
  if (node.enum) return node.enum.some((v: unknown) => v === value) ? [] : [`${path}: ${JSON.stringify(value)} not in ${JSON.stringify(node.enum)}`];
  if ("const" in node) return node.const === value ? [] : [`${path}: expected ${JSON.stringify(node.const)}`];
  switch (node.type) {
    case undefined:
      return [];
    case "null":
      return value === null ? [] : [`${path}: expected null, got ${JSON.stringify(value)}`];
    case "string":
      return typeof value === "string" ? [] : [`${path}: expected string, got ${JSON.stringify(value)}`];
    case "boolean":
      return typeof value === "boolean" ? [] : [`${path}: expected boolean, got ${JSON.stringify(value)}`];
    case "integer":
      return Number.isInteger(value) ? [] : [`${path}: expected integer, got ${JSON.stringify(value)}`];
    case "number":
      return typeof value === "number" ? [] : [`${path}: expected number, got ${JSON.stringify(value)}`];
    case "array":
      if (!Array.isArray(value)) return [`${path}: expected array, got ${JSON.stringify(value)}`];
      return value.flatMap((item, i) => validate(node.items, item, `${path}[${i}]`, strict));
    case "object": {
      if (value === null || typeof value !== "object" || Array.isArray(value)) return [`${path}: expected object, got ${JSON.stringify(value)}`];
      const record = value as Record<string, unknown>;
      const problems: string[] = [];
      for (const name of node.required ?? []) if (!(name in record)) problems.push(`${path}: missing required ${name}`);
      const props = node.properties ?? {};
      for (const [name, item] of Object.entries(record)) {
        if (name in props) problems.push(...validate(props[name], item, `${path}.${name}`, strict));
        else if (typeof node.additionalProperties === "object") problems.push(...validate(node.additionalProperties, item, `${path}.${name}`, strict));
        else if (node.additionalProperties === false || (strict && node.properties)) problems.push(`${path}: property ${name} is not in the schema`);
      }
      return problems;
    }
    default:
      return [`${path}: unsupported schema type ${node.type}`];
  }
}

/** Throw when `result` does not fit the schema's result of `method`. */
export function assertResultFits(method: string, result: unknown): void {
  const entry = schema.methods[method];
  if (!entry) throw new Error(`${method} is not in the schema`);
  const problems = validate(entry.result, result);
  if (problems.length) throw new Error(`${method} result does not fit the schema:\n  ${problems.join("\n  ")}`);
}

// -- sample conversation ------------------------------------------------------------

let counter = 0;

/** A user turn, an assistant tool call, its result, and the assistant's answer. */
export function toolConversation(topic: string, padding = 0): EntryInput[] {
  const n = ++counter;
  const filler = padding ? " " + "lorem ipsum dolor sit amet ".repeat(padding) : "";
  return [
    { type: "message", message: { role: "user", content: [{ type: "text", text: `look at ${topic}${filler}` }] } },
    {
      type: "message",
      message: {
        role: "assistant",
        content: [
          { type: "text", text: `reading ${topic}` },
          { type: "toolCall", id: `call-${n}`, name: "read", arguments: { path: `${topic}.ts` } },
        ],
        stopReason: "toolUse",
      },
    },
    {
      type: "message",
      message: {
        role: "toolResult",
        toolCallId: `call-${n}`,
        toolName: "read",
        content: [{ type: "text", text: `export const ${topic} = 1;${filler}` }],
        isError: false,
      },
    },
    {
      type: "message",
      message: { role: "assistant", content: [{ type: "text", text: `${topic} exports one constant.${filler}` }], stopReason: "stop" },
    },
  ];
}

export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
