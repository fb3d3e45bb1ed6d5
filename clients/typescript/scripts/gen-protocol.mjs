#!/usr/bin/env node
// Generate src/protocol.ts from protocol/schema.json (the sidecar's contract).
//
//   node scripts/gen-protocol.mjs            write src/protocol.ts
//   node scripts/gen-protocol.mjs --check    exit 1 when src/protocol.ts is stale
//   node scripts/gen-protocol.mjs --stdout   print what would be written
//   --schema PATH                            another schema.json (default: ../../protocol/schema.json)
//
// The schema is the subset of JSON Schema that msgspec emits: $ref into $defs,
// anyOf, enum, const, object (properties / additionalProperties), array, and
// the scalar types. Anything else is an error here, so a schema this
// generator does not understand fails the build instead of becoming `any`.

import { readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const PACKAGE_DIR = resolve(here, "..");
export const DEFAULT_SCHEMA = resolve(PACKAGE_DIR, "../../protocol/schema.json");
export const OUTPUT = resolve(PACKAGE_DIR, "src/protocol.ts");

const KNOWN_KEYWORDS = new Set([
  "$ref", "anyOf", "enum", "const", "type", "properties", "required", "additionalProperties",
  "items", "title", "description", "default", "discriminator",
]);

function refName(ref) {
  const prefix = "#/$defs/";
  if (!ref.startsWith(prefix)) throw new Error(`unsupported $ref ${ref}`);
  return ref.slice(prefix.length);
}

function literal(value) {
  return JSON.stringify(value);
}

function needsParens(type) {
  return /[|&]/.test(type) && !/^\{[\s\S]*\}$/.test(type);
}

/** The TypeScript type of one schema node. */
export function tsType(node, indent = "") {
  if (node === true || node === undefined) return "unknown";
  if (node === false) return "never";
  for (const key of Object.keys(node)) {
    if (!KNOWN_KEYWORDS.has(key)) throw new Error(`unsupported schema keyword ${key} in ${JSON.stringify(node)}`);
  }
  if (node.$ref) return refName(node.$ref);
  if (node.anyOf) {
    const parts = [...new Set(node.anyOf.map((member) => tsType(member, indent)))];
    return parts.join(" | ");
  }
  if (node.enum) return node.enum.map(literal).join(" | ");
  if ("const" in node) return literal(node.const);
  const type = node.type;
  if (Array.isArray(type)) return type.map((t) => tsType({ ...node, type: t }, indent)).join(" | ");
  switch (type) {
    case "string":
      return "string";
    case "integer":
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array": {
      const item = tsType(node.items, indent);
      return needsParens(item) ? `(${item})[]` : `${item}[]`;
    }
    case "object":
      if (node.properties) return objectLiteral(node, indent);
      if (node.additionalProperties && typeof node.additionalProperties === "object") {
        return `{ [key: string]: ${tsType(node.additionalProperties, indent)} }`;
      }
      return "JsonObject";
    case undefined:
      return "unknown";
    default:
      throw new Error(`unsupported type ${type}`);
  }
}

function docComment(lines, indent) {
  const text = lines.filter((line) => line !== undefined && line !== null && line !== "");
  if (text.length === 0) return "";
  const body = text
    .join("\n")
    .replace(/``/g, "`")
    .replace(/\*\//g, "*\\/")
    .split("\n")
    .map((line) => line.trim());
  if (body.length === 1) return `${indent}/** ${body[0]} */\n`;
  return `${indent}/**\n${body.map((line) => `${indent} *${line ? " " + line : ""}`).join("\n")}\n${indent} */\n`;
}

function propertyName(name) {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : literal(name);
}

// Fields the wire types leave as open objects that hold pi's entries and
// messages (their shapes are the schema's entryShapes): typed here, so an agent
// reads `entry.message.role` and a misspelt field does not compile.
const TYPED_FIELDS = {
  "AppendParams.entries": "EntryInput[]",
  "GetEntriesResult.entries": "StoredEntry[]",
  "DidAppendParams.entries": "StoredEntry[]",
  "BuildContextResult.messages": "ContextMessage[]",
};
let typedFields = {};

function objectMembers(node, indent, owner) {
  const required = new Set(node.required ?? []);
  let out = "";
  for (const [name, prop] of Object.entries(node.properties ?? {})) {
    const doc = [prop.description, "default" in prop ? `@default ${literal(prop.default)}` : undefined];
    out += docComment(doc, indent);
    const optional = required.has(name) ? "" : "?";
    out += `${indent}${propertyName(name)}${optional}: ${typedFields[`${owner}.${name}`] ?? tsType(prop, indent)};\n`;
  }
  return out;
}

function objectLiteral(node, indent) {
  return `{\n${objectMembers(node, indent + "  ")}${indent}}`;
}

function declaration(name, node) {
  let out = docComment([node.description], "");
  if (node.type === "object" && node.properties) {
    out += `export interface ${name} {\n${objectMembers(node, "  ", name)}}\n`;
  } else {
    out += `export type ${name} = ${tsType(node)};\n`;
  }
  return out;
}

/** `session/buildContext` -> `buildContext`: the client's method for a protocol method. */
/** `session/buildContext` -> `buildContext`; another family keeps its name: `history/add` -> `historyAdd`. */
export function clientMethodName(method) {
  const slash = method.indexOf("/");
  const family = method.slice(0, slash);
  const name = method.slice(slash + 1);
  return family === "session" ? name : family + name.charAt(0).toUpperCase() + name.slice(1);
}

const LIFECYCLE = new Set(["initialize", "shutdown"]);

function table(name, doc, entries, render) {
  let out = docComment([doc], "");
  out += `export interface ${name} {\n`;
  for (const [key, value] of entries) out += `  ${literal(key)}: ${render(value)};\n`;
  out += "}\n";
  return out;
}

function paramsType(node) {
  return tsType(node);
}

function hasRequired(schema, node) {
  if (!node.$ref) return node.type !== "null";
  const def = schema.$defs[refName(node.$ref)];
  return (def.required ?? []).length > 0;
}

export function render(schema) {
  const defs = schema.$defs ?? {};
  const methods = schema.methods ?? {};
  const serverRequests = schema.serverRequests ?? {};
  const clientNotes = schema.notifications?.clientToServer ?? {};
  const serverNotes = schema.notifications?.serverToClient ?? {};
  const errors = schema.errors ?? [];

  let out = "";
  out += "// Generated by scripts/gen-protocol.mjs from protocol/schema.json; do not edit by hand.\n";
  out += "// Regenerate with `npm run generate`; the tests fail when this file is stale.\n";
  out += "/* eslint-disable */\n\n";
  out += `/** The protocol version this client was generated for (major.minor; majors must match). */\n`;
  out += `export const PROTOCOL_VERSION = ${literal(schema.protocolVersion)};\n\n`;
  out += "/** A JSON object the schema leaves open (session entries, headers, messages, settings). */\n";
  out += "export type JsonObject = { [key: string]: any };\n\n";

  typedFields = schema.entryShapes ? TYPED_FIELDS : {};
  for (const [name, node] of Object.entries(defs)) out += declaration(name, node) + "\n";
  if (schema.entryShapes) out += entryAliases(defs);
  out += enumConstants(schema);

  out += table(
    "Methods",
    "Client -> server requests: params and result of each method.",
    Object.entries(methods),
    (m) => `{ params: ${paramsType(m.params)}; result: ${tsType(m.result)} }`,
  );
  out += "\nexport type MethodName = keyof Methods;\n";
  out += "export type ParamsOf<M extends MethodName> = Methods[M][\"params\"];\n";
  out += "export type ResultOf<M extends MethodName> = Methods[M][\"result\"];\n\n";
  out += `/** Every method of the schema, in schema order. */\nexport const METHOD_NAMES = ${literal(Object.keys(methods))} as const satisfies readonly MethodName[];\n\n`;

  out += table(
    "ServerRequests",
    "Server -> client requests (answered by the client).",
    Object.entries(serverRequests),
    (m) => `{ params: ${tsType(m.params)}; result: ${tsType(m.result)} }`,
  );
  out += `\nexport const SERVER_REQUEST_NAMES = ${literal(Object.keys(serverRequests))} as const;\n\n`;
  out += table("ClientNotifications", "Client -> server notifications.", Object.entries(clientNotes), tsType);
  out += "\n";
  out += table("ServerNotifications", "Server -> client notifications.", Object.entries(serverNotes), tsType);
  out += `\nexport const SERVER_NOTIFICATION_NAMES = ${literal(Object.keys(serverNotes))} as const;\n\n`;

  out += `/** The error object of a failed response. */\nexport type ResponseErrorObject = ${tsType(schema.error)};\n\n`;
  out += `/** Settings, as initialize's \`settings\` overrides and as initialize returns them. */\nexport type SidecarSettings = ${tsType(schema.settings)};\n\n`;

  out += "/** Error codes by kind (`error.data.kind`). */\nexport const ErrorCodes = {\n";
  for (const error of errors) {
    out += docComment([error.description.replace(/``/g, "`")], "  ");
    out += `  ${propertyName(error.kind)}: ${error.code},\n`;
  }
  out += "} as const;\n\nexport type ErrorKind = keyof typeof ErrorCodes;\n\n";

  // The typed method of every session method: generated, so a method added to
  // the schema appears in the client, and one whose params change fails to compile.
  out += "/** Per-call options: cancellation and `$/progress` for this call. */\n";
  out += "export interface CallOptions {\n";
  out += "  /** Aborting sends `$/cancelRequest`; the call then rejects with a `RequestCancelledError` (or resolves, if the server finished first). */\n";
  out += "  signal?: AbortSignal;\n";
  out += "  /** Receives this call's `$/progress` values (begin, report..., end) before the call resolves. */\n";
  out += "  onProgress?: (value: ProgressParams[\"value\"]) => void;\n";
  out += "}\n\n";
  out += "/** One typed method per session method of the protocol (`session/x` -> `x`). */\n";
  out += "export abstract class SessionMethods {\n";
  out += "  /** Send `method` with `params` and wait for its result. */\n";
  out += "  abstract request<M extends MethodName>(method: M, params: ParamsOf<M>, options?: CallOptions): Promise<ResultOf<M>>;\n";
  const seen = new Map();
  for (const [method, m] of Object.entries(methods)) {
    if (LIFECYCLE.has(method)) continue;
    const name = clientMethodName(method);
    if (seen.has(name)) throw new Error(`methods ${seen.get(name)} and ${method} both map to ${name}()`);
    seen.set(name, method);
    const params = paramsType(m.params);
    const result = tsType(m.result);
    const paramDoc = m.params.$ref ? defs[refName(m.params.$ref)]?.description : undefined;
    out += "\n" + docComment([`\`${method}\`.`, paramDoc], "  ");
    const optional = hasRequired(schema, m.params) ? "" : " = {}";
    if (method === "session/buildContext" && schema.entryShapes) {
      out += `  ${name}(params: ${params} & { format: "llm" }, options?: CallOptions): Promise<LlmContext>;\n`;
      out += `  ${name}(params: ${params}${optional}, options?: CallOptions): Promise<${result}>;\n`;
    }
    out += `  ${name}(params: ${params}${optional}, options?: CallOptions): Promise<${result}> {\n`;
    out += `    return this.request(${literal(method)}, params, options);\n`;
    out += "  }\n";
  }
  out += notificationHandlers(serverNotes);
  out += "}\n\n";
  out += `/** Protocol method -> the SessionMethods method serving it. */\nexport const CLIENT_METHOD_NAMES = {\n`;
  for (const [name, method] of seen) out += `  ${literal(method)}: ${literal(name)},\n`;
  out += "} as const;\n";
  return out;
}

/** `session/didAppend` -> `onDidAppend`; `$/progress` has its own API (onProgress, onServerProgress). */
export function notificationHandlerName(method) {
  if (method.startsWith("$/")) return undefined;
  const name = method.slice(method.indexOf("/") + 1);
  return "on" + name.charAt(0).toUpperCase() + name.slice(1);
}

function notificationHandlers(serverNotes) {
  let out = "\n  /** Listen to one server notification by name (the typed `onDidAppend`... call this). */\n";
  out += "  abstract onNotification<N extends keyof ServerNotifications>(method: N, listener: (params: ServerNotifications[N]) => void): { dispose(): void };\n";
  out += "  abstract onNotification(method: string, listener: (params: unknown) => void): { dispose(): void };\n";
  for (const [method, node] of Object.entries(serverNotes)) {
    const name = notificationHandlerName(method);
    if (!name) continue;
    const def = node.$ref ? refName(node.$ref) : undefined;
    out += "\n" + docComment([`\`${method}\`${def ? ` (\`${def}\`)` : ""}.`], "  ");
    out += `  ${name}(listener: (params: ServerNotifications[${literal(method)}]) => void): { dispose(): void } {\n`;
    out += `    return this.onNotification(${literal(method)}, listener);\n`;
    out += "  }\n";
  }
  return out;
}

function entryAliases(defs) {
  const has = (name) => name in defs;
  const union = (names) => names.filter(has).join(" | ");
  let out = "";
  out += "/** An entry `session/append` accepts: one of pi's entry types, or oh-my-pi's (under its compatibility). */\n";
  out += `export type EntryInput = ${union(["SessionEntry", "OmpSessionEntry"])};\n\n`;
  out += "/**\n * An entry as the sidecar returns it. Entries of a type this client does not\n";
  out += " * know (written by a newer pi) come through unchanged: `isKnownEntry` tells.\n */\n";
  out += `export type StoredEntry = ${union(["SessionEntry", "OmpSessionEntry"])};\n\n`;
  out += "/** A message of an agent-format context (`buildContext` with `format: \"agent\"`, the default). */\n";
  out += `export type ContextMessage = ${union(["AgentMessage", "OmpAgentMessage"])};\n\n`;
  out += "/** A message of an llm-format context: what a model API takes (the other roles became user messages). */\n";
  out += `export type LlmMessage = ${union(["UserMessage", "AssistantMessage", "OmpAssistantMessage", "ToolResultMessage", "SystemMessage", "DeveloperMessage"])};\n\n`;
  out += "/** `buildContext`'s result in llm format. */\n";
  out += "export type LlmContext = Omit<BuildContextResult, \"messages\"> & { messages: LlmMessage[] };\n\n";
  const types = new Set();
  for (const name of ["SessionEntry", "OmpSessionEntry"]) {
    for (const tag of Object.keys(defs[name]?.discriminator?.mapping ?? {})) types.add(tag);
  }
  out += `/** Every entry type this client knows. */\nexport const KNOWN_ENTRY_TYPES: ReadonlySet<string> = new Set(${literal([...types])});\n\n`;
  out += "/** True when this client knows the entry's type (its fields are then typed); others are kept as read. */\n";
  out += "export function isKnownEntry(entry: { type?: unknown }): entry is StoredEntry {\n";
  out += "  return typeof entry.type === \"string\" && KNOWN_ENTRY_TYPES.has(entry.type);\n}\n\n";
  return out;
}

function pascal(name) {
  return name.replace(/(^|[_\-\s])([a-zA-Z])/g, (_, __, c) => c.toUpperCase()).replace(/^[a-z]/, (c) => c.toUpperCase());
}

/** Every enum string, as a constant: each discriminated union's tags, each property's enum, progress kinds. */
function enumConstants(schema) {
  const defs = schema.$defs ?? {};
  const made = new Map();
  const add = (name, values, doc) => {
    if (values.length < 2 || made.has(name) || name in defs) return;
    made.set(name, { values: [...new Set(values)], doc });
  };
  for (const [def, node] of Object.entries(defs)) {
    if (node.discriminator?.mapping) {
      const prop = node.discriminator.propertyName;
      add(def + pascal(prop), Object.keys(node.discriminator.mapping), `The \`${prop}\` of each member of \`${def}\`.`);
    }
    for (const [prop, value] of Object.entries(node.properties ?? {})) {
      const enums = [value, ...(value.anyOf ?? []), value.items ?? {}].filter((n) => Array.isArray(n.enum));
      for (const e of enums) add(def + pascal(prop), e.enum, `The values of \`${def}.${prop}\`.`);
    }
  }
  const progress = defs.ProgressParams?.properties?.value?.anyOf ?? [];
  const kinds = progress.map((m) => (m.$ref ? defs[refName(m.$ref)]?.properties?.kind?.enum?.[0] : undefined)).filter(Boolean);
  add("ProgressKind", kinds, "The `kind` of each `$/progress` value.");
  let out = "";
  for (const [name, { values, doc }] of made) {
    out += docComment([doc], "");
    out += `export const ${name} = {\n${values.map((v) => `  ${propertyName(v)}: ${literal(v)},`).join("\n")}\n} as const;\n`;
    out += `export type ${name} = (typeof ${name})[keyof typeof ${name}];\n\n`;
  }
  return out;
}

function main(argv) {
  let schemaPath = process.env.SESSION_SIDECAR_SCHEMA || DEFAULT_SCHEMA;
  let mode = "write";
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--check") mode = "check";
    else if (argv[i] === "--stdout") mode = "stdout";
    else if (argv[i] === "--schema") schemaPath = argv[++i];
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  const text = render(JSON.parse(readFileSync(schemaPath, "utf8")));
  if (mode === "stdout") {
    process.stdout.write(text);
  } else if (mode === "check") {
    let current = "";
    try {
      current = readFileSync(OUTPUT, "utf8");
    } catch {}
    if (current !== text) {
      console.error(`${OUTPUT} is stale against ${schemaPath}; run: npm run generate`);
      process.exit(1);
    }
  } else {
    writeFileSync(OUTPUT, text);
    console.error(`wrote ${OUTPUT}`);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
