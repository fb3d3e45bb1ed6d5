/**
 * The Agents SDK's items (`AgentInputItem`, agents-core's protocol) to pi entries and back, exactly.
 *
 * The storage is the Python adapter's (`session_sidecar_client.adapters.openai_agents`), so a
 * session written by one language reads in the other. One entry per item; the items pi has a
 * message for become that message:
 *
 * - a user message (text only): a `user` message;
 * - an assistant message (`output_text` parts only): an `assistant` message of `text` blocks;
 * - a `function_call`: an `assistant` message holding one `toolCall` block;
 * - a `function_call_result` (a text output): a `toolResult` message (`name` is its `toolName`);
 * - a `reasoning` item: an `assistant` message of `thinking` blocks (one per `content` part).
 *
 * What pi's message cannot hold (`id`, `providerData`, `rawContent`, the exact `arguments`
 * string, the order of the keys, keys whose value is `undefined` as the runner writes some...)
 * goes in an `openaiAgentsJs` patch on the message: the fields to set and to drop over the item
 * the message alone gives back (its natural item), per part where the item has parts. The
 * Python adapter's patch is `openaiAgents`: each language's patch is in its own SDK's
 * vocabulary (agents-core's `callId` and `function_call_result` against the Responses API's
 * `call_id` and `function_call_output`), so a message is read exactly by the language that
 * wrote it, and by the other as its natural item with the `id` and `status` the patch holds. Every other item is kept verbatim: a `custom_message` of customType
 * `openai-agents-js.item` whose content is the item's JSON (Python's are `openai-agents.item`;
 * each reads the other's when the item has the same shape in both vocabularies).
 */

import type {
  AssistantMessage,
  ContextMessage,
  CustomMessageEntry,
  MessageEntry,
  ToolResultMessage,
  UserMessage,
} from "../../protocol.js";

/** A JSON object: an item, a part, a message. */
export type Json = { [key: string]: unknown };

/** customType of an item this adapter keeps verbatim. */
export const ITEM_TYPE = "openai-agents-js.item";
/** customType of an item the Python adapter kept verbatim (Responses API JSON). */
export const PYTHON_ITEM_TYPE = "openai-agents.item";
/** customType of the marker popItem and clearSession append (shared with the Python adapter). */
export const LEAF_TYPE = "openai-agents.leaf";
/** The field of a message holding what pi cannot (this adapter's). */
export const PATCH = "openaiAgentsJs";
/** The Python adapter's patch field. */
export const PYTHON_PATCH = "openaiAgents";

// How pi puts a summary in front of a model (convertToLlm); the Python adapter words it so too.
export const COMPACTION_SUMMARY_PREFIX =
  "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
export const COMPACTION_SUMMARY_SUFFIX = "\n</summary>";
const BRANCH_SUMMARY_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
const BRANCH_SUMMARY_SUFFIX = "</summary>";

type Kind = "user" | "assistant" | "function_call" | "function_call_result" | "reasoning";
const KINDS: readonly Kind[] = ["user", "assistant", "function_call", "function_call_result", "reasoning"];
// The Python adapter's names of the same kinds (its patch may name the kind).
const PYTHON_KINDS: Record<string, Kind> = {
  user: "user",
  assistant: "assistant",
  function_call: "function_call",
  function_call_output: "function_call_result",
  reasoning: "reasoning",
};
// The list of parts a kind of item has, patched part by part.
const PARTS: Partial<Record<Kind, string>> = { user: "content", assistant: "content", reasoning: "content" };
// Fields meaning the same in both SDKs' items: carried over from the other language's patch.
const PORTABLE = ["id", "status"] as const;
// Verbatim items whose JSON is the same item in both vocabularies.
const SHARED_VERBATIM = (item: Json): boolean =>
  item.type === "compaction" || (item.role === "system" && typeof item.content === "string" && item.type === undefined);

type Entry = MessageEntry | CustomMessageEntry;

/** The pi entry holding `item`. */
export function toEntry(item: Json): Entry {
  const message = toMessage(item);
  if (message !== undefined) return { type: "message", message: message as unknown as UserMessage | AssistantMessage | ToolResultMessage };
  return verbatimEntry(item);
}

/** An item pi has no message for, kept as its JSON. */
export function verbatimEntry(item: Json): CustomMessageEntry {
  return { type: "custom_message", customType: ITEM_TYPE, content: JSON.stringify(item), display: false };
}

/** The pi message holding `item` exactly, or undefined when pi has no message that can. */
export function toMessage(item: Json): Json | undefined {
  const kind = itemKind(item);
  if (kind === undefined) return undefined;
  const message = messageOf(kind, item);
  const patch = diff(natural(kind, message), item, PARTS[kind]);
  // A message stands for its kind by its shape (inferKind), except a reasoning item with no
  // content (an assistant message with no blocks): say so.
  if (kind === "reasoning" && (message.content as unknown[]).length === 0) patch.kind = kind;
  if (Object.keys(patch).length > 0) message[PATCH] = patch;
  return message;
}

/** Which of the mapped kinds `item` is (by its shape, not only its type), or undefined. */
export function itemKind(item: Json): Kind | undefined {
  const type = item.type;
  if (type === "function_call") {
    return isString(item.callId) && isString(item.name) && isString(item.arguments) ? "function_call" : undefined;
  }
  if (type === "function_call_result") {
    const output = item.output;
    const text = isString(output) || (isObject(output) && isPart(output, "text"));
    return isString(item.callId) && isString(item.name) && text ? "function_call_result" : undefined;
  }
  if (type === "reasoning") {
    const content = item.content;
    return Array.isArray(content) && content.every((part) => isPart(part, "input_text")) ? "reasoning" : undefined;
  }
  if (type !== undefined && type !== "message") return undefined;
  const content = item.content;
  if (item.role === "user") {
    if (isString(content) || (Array.isArray(content) && content.every((part) => isPart(part, "input_text")))) return "user";
  } else if (item.role === "assistant") {
    if (Array.isArray(content) && content.length > 0 && content.every((part) => isPart(part, "output_text"))) {
      return "assistant";
    }
  }
  return undefined;
}

/** The items a message of a context stands for: one for a message either adapter wrote. */
export function fromMessage(message: ContextMessage | Json): Json[] {
  const m = message as Json;
  const patch = m[PATCH];
  if (isObject(patch)) {
    const kind = (patch.kind as Kind | undefined) ?? inferKind(m);
    if (kind !== undefined && KINDS.includes(kind)) return [apply(natural(kind, m), patch, PARTS[kind])];
  }
  if (m.role === "custom" && (m.customType === ITEM_TYPE || m.customType === PYTHON_ITEM_TYPE)) {
    let kept: unknown;
    try {
      kept = JSON.parse(isString(m.content) ? m.content : "null");
    } catch {
      kept = undefined;
    }
    if (!isObject(kept)) return [];
    return m.customType === ITEM_TYPE || SHARED_VERBATIM(kept) ? [kept] : [];
  }
  const python = m[PYTHON_PATCH];
  const kind = (isObject(python) && isString(python.kind) ? PYTHON_KINDS[python.kind] : undefined) ?? inferKind(m);
  if (kind !== undefined) {
    const item = natural(kind, m);
    const sets = isObject(python) && isObject(python.set) ? python.set : {};
    for (const key of PORTABLE) if (isString(sets[key])) item[key] = sets[key];
    return [item];
  }
  return foreign(m);
}

// -- the message of an item, and the item a message naturally is ----------------------------

function messageOf(kind: Kind, item: Json): Json {
  if (kind === "user") {
    const content = item.content;
    if (isString(content)) return { role: "user", content };
    return { role: "user", content: (content as Json[]).map((part) => ({ type: "text", text: part.text })) };
  }
  if (kind === "assistant") {
    return { role: "assistant", content: (item.content as Json[]).map((part) => ({ type: "text", text: part.text })) };
  }
  if (kind === "function_call") {
    let args: unknown;
    try {
      args = JSON.parse(item.arguments as string);
    } catch {
      args = undefined;
    }
    const call = { type: "toolCall", id: item.callId, name: item.name, arguments: isObject(args) ? args : {} };
    return { role: "assistant", content: [call] };
  }
  if (kind === "function_call_result") {
    const output = item.output;
    const text = isString(output) ? output : (output as Json).text;
    return {
      role: "toolResult",
      toolCallId: item.callId,
      toolName: item.name,
      content: [{ type: "text", text }],
      isError: false,
    };
  }
  return { role: "assistant", content: (item.content as Json[]).map((part) => ({ type: "thinking", thinking: part.text })) };
}

/** The kind a message without our patch stands for (undefined: not one item). */
function inferKind(message: Json): Kind | undefined {
  const content = message.content;
  if (message.role === "user") {
    return isString(content) || (Array.isArray(content) && content.every((block) => isPart(block, "text"))) ? "user" : undefined;
  }
  if (message.role === "toolResult") {
    return isString(message.toolCallId) && Array.isArray(content) && content.every((block) => isPart(block, "text"))
      ? "function_call_result"
      : undefined;
  }
  if (message.role !== "assistant" || !Array.isArray(content) || content.length === 0) return undefined;
  if (content.length === 1 && isObject(content[0]) && content[0].type === "toolCall") return "function_call";
  if (content.every((block) => isPart(block, "text"))) return "assistant";
  if (content.every((block) => isObject(block) && block.type === "thinking" && isString(block.thinking))) return "reasoning";
  return undefined;
}

/** The item `message` alone gives back (its patch aside), keys in the order the SDK's runner writes them. */
function natural(kind: Kind, message: Json): Json {
  const content = message.content;
  const blocks: Json[] = Array.isArray(content) ? content.filter(isObject) : [];
  if (kind === "user") {
    if (isString(content)) return { role: "user", content };
    return { role: "user", content: blocks.map((block) => ({ type: "input_text", text: block.text })) };
  }
  if (kind === "assistant") {
    return {
      type: "message",
      role: "assistant",
      status: "completed",
      content: blocks.map((block) => ({ type: "output_text", text: block.text })),
    };
  }
  if (kind === "function_call") {
    const call = blocks[0] ?? {};
    return { type: "function_call", callId: call.id, name: call.name, arguments: JSON.stringify(call.arguments ?? null) };
  }
  if (kind === "function_call_result") {
    return {
      type: "function_call_result",
      name: isString(message.toolName) ? message.toolName : "",
      callId: message.toolCallId,
      status: "completed",
      output: { type: "text", text: blocks.map((block) => String(block.text)).join("\n") },
    };
  }
  return { type: "reasoning", content: blocks.map((block) => ({ type: "input_text", text: block.thinking })) };
}

/** The items a message no adapter wrote stands for (another agent's session, a summary). */
function foreign(message: Json): Json[] {
  const content = message.content;
  switch (message.role) {
    case "compactionSummary":
      return [{ role: "user", content: COMPACTION_SUMMARY_PREFIX + String(message.summary) + COMPACTION_SUMMARY_SUFFIX }];
    case "branchSummary":
      return [{ role: "user", content: BRANCH_SUMMARY_PREFIX + String(message.summary) + BRANCH_SUMMARY_SUFFIX }];
    case "assistant": {
      // Text, thinking and tool calls in one message: an item each.
      const blocks: Json[] = Array.isArray(content) ? content.filter(isObject) : [];
      return blocks.flatMap((block) => {
        if (block.type === "text") return [natural("assistant", { content: [block] })];
        if (block.type === "thinking") return [natural("reasoning", { content: [block] })];
        if (block.type === "toolCall") return [natural("function_call", { content: [block] })];
        return [];
      });
    }
    case "toolResult":
      return isString(message.toolCallId) ? [natural("function_call_result", { ...message, content: textBlocks(content) })] : [];
    case "system":
      return [{ role: "system", content: text(content) }];
    case "bashExecution":
      return [{ role: "user", content: `Ran \`${String(message.command ?? "")}\`\n${String(message.output ?? "")}` }];
    default: {
      const words = text(content); // a user message with images, a custom message...
      return words ? [{ role: "user", content: words }] : [];
    }
  }
}

function textBlocks(content: unknown): Json[] {
  return Array.isArray(content) ? content.filter((block) => isPart(block, "text")) : [];
}

function text(content: unknown): string {
  if (isString(content)) return content;
  return textBlocks(content)
    .map((block) => String(block.text))
    .join("\n");
}

function isString(value: unknown): value is string {
  return typeof value === "string";
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isPart(part: unknown, type: string): boolean {
  return isObject(part) && part.type === type && isString(part.text);
}

// -- patches: what to set and drop over the natural item, and the keys' order -------------------

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b); // key order included: the runner compares items so
}

/** The patch making `base` into `actual`: `set`, `drop`, per part (`parts`) the same, and `order`. */
function diff(base: Json, actual: Json, partsKey: string | undefined): Json {
  const patch: Json = {};
  const sets: Json = {};
  const absent: string[] = []; // keys present with the value undefined, which JSON cannot hold
  for (const [key, value] of Object.entries(actual)) {
    if (value === undefined) absent.push(key);
    else if (!(key in base) || !same(base[key], value)) sets[key] = value;
  }
  if (partsKey !== undefined && partsKey in sets) {
    const ours = base[partsKey];
    const theirs = actual[partsKey];
    if (Array.isArray(ours) && Array.isArray(theirs) && ours.length === theirs.length && theirs.every(isObject)) {
      const parts = ours.map((mine: Json, index) => {
        const change = diff(mine, theirs[index] as Json, undefined);
        return Object.keys(change).length > 0 ? change : null;
      });
      patch.parts = parts;
      delete sets[partsKey];
    }
  }
  if (Object.keys(sets).length > 0) patch.set = sets;
  const drop = Object.keys(base).filter((key) => !(key in actual) || (actual[key] === undefined && base[key] !== undefined));
  if (drop.length > 0) patch.drop = drop;
  if (absent.length > 0) patch.undefined = absent;
  const made = Object.keys(apply(base, patch, partsKey));
  const order = Object.keys(actual);
  if (!same(made, order)) patch.order = order;
  return patch;
}

function apply(base: Json, patch: Json, partsKey: string | undefined): Json {
  const drop = Array.isArray(patch.drop) ? patch.drop : [];
  const item: Json = {};
  for (const [key, value] of Object.entries(base)) if (!drop.includes(key)) item[key] = value;
  const parts = patch.parts;
  const list = partsKey !== undefined ? item[partsKey] : undefined;
  if (partsKey !== undefined && Array.isArray(parts) && Array.isArray(list)) {
    item[partsKey] = list.map((part: Json, index) => {
      const change = parts[index];
      return isObject(change) ? apply(part, change, undefined) : part;
    });
  }
  if (isObject(patch.set)) Object.assign(item, patch.set);
  if (Array.isArray(patch.undefined)) for (const key of patch.undefined) if (isString(key)) item[key] = undefined;
  if (Array.isArray(patch.order)) {
    const ordered: Json = {};
    for (const key of patch.order) if (isString(key) && key in item) ordered[key] = item[key];
    for (const key of Object.keys(item)) if (!(key in ordered)) ordered[key] = item[key];
    return ordered;
  }
  return item;
}
