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
import type { ContextMessage, CustomMessageEntry, MessageEntry } from "../../protocol.js";
/** A JSON object: an item, a part, a message. */
export type Json = {
    [key: string]: unknown;
};
/** customType of an item this adapter keeps verbatim. */
export declare const ITEM_TYPE = "openai-agents-js.item";
/** customType of an item the Python adapter kept verbatim (Responses API JSON). */
export declare const PYTHON_ITEM_TYPE = "openai-agents.item";
/** customType of the marker popItem and clearSession append (shared with the Python adapter). */
export declare const LEAF_TYPE = "openai-agents.leaf";
/** The field of a message holding what pi cannot (this adapter's). */
export declare const PATCH = "openaiAgentsJs";
/** The Python adapter's patch field. */
export declare const PYTHON_PATCH = "openaiAgents";
export declare const COMPACTION_SUMMARY_PREFIX = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
export declare const COMPACTION_SUMMARY_SUFFIX = "\n</summary>";
type Kind = "user" | "assistant" | "function_call" | "function_call_result" | "reasoning";
type Entry = MessageEntry | CustomMessageEntry;
/** The pi entry holding `item`. */
export declare function toEntry(item: Json): Entry;
/** An item pi has no message for, kept as its JSON. */
export declare function verbatimEntry(item: Json): CustomMessageEntry;
/** The pi message holding `item` exactly, or undefined when pi has no message that can. */
export declare function toMessage(item: Json): Json | undefined;
/** Which of the mapped kinds `item` is (by its shape, not only its type), or undefined. */
export declare function itemKind(item: Json): Kind | undefined;
/** The items a message of a context stands for: one for a message either adapter wrote. */
export declare function fromMessage(message: ContextMessage | Json): Json[];
export {};
