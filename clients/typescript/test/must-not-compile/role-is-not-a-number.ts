// expect: is not assignable to type 'number'
// A message's role is a string union: using it as a number must not compile.
import type { LlmMessage } from "@session-sidecar/client";

export function roleNumber(msg: LlmMessage): number {
  const n: number = msg.role;
  return n;
}
