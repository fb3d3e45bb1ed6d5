/**
 * The OpenAI Agents SDK (`@openai/agents-core` 0.20): its `Session` kept in the sidecar.
 *
 *     import { run } from "@openai/agents";
 *     import { SidecarSession } from "@session-sidecar/client/adapters/openai-agents";
 *
 *     const result = await run(agent, "hello", { session: new SidecarSession("conversation-1") });
 *
 * The SDK is an optional peer dependency: only its types are imported here.
 */
export { SidecarSession, type CompactOptions, type SidecarSessionOptions } from "./session.js";
export { fromMessage, itemKind, ITEM_TYPE, LEAF_TYPE, PATCH, PYTHON_ITEM_TYPE, PYTHON_PATCH, toEntry, type Json } from "./items.js";
