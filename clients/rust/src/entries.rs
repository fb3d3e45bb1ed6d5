//! Builders for the session entries agents append most (pi's `message` entries).
//!
//! Entries are plain JSON ([`serde_json::Value`]): any entry pi or oh-my-pi writes can be
//! appended as it is, e.g. with `serde_json::json!`. These helpers only save typing.
//!
//! ```
//! use session_sidecar::entries::{assistant, text, tool_call, tool_result, user};
//! let conversation = vec![
//!     user("Fix the failing test"),
//!     assistant(vec![text("Reading it."), tool_call("call_1", "read", serde_json::json!({"path": "a.rs"}))]),
//!     tool_result("call_1", "read", "fn main() {}", false),
//! ];
//! assert_eq!(conversation[1]["message"]["stopReason"], "toolUse");
//! ```

use serde_json::{json, Value};

/// A `message` entry holding `message` (an AgentMessage with a `role`).
pub fn message(message: Value) -> Value {
    json!({"type": "message", "message": message})
}

/// A user message with one text block.
pub fn user(text_: impl Into<String>) -> Value {
    message(json!({"role": "user", "content": [text(text_)]}))
}

/// A text content block.
pub fn text(text: impl Into<String>) -> Value {
    json!({"type": "text", "text": text.into()})
}

/// A tool call content block of an assistant message.
pub fn tool_call(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Value {
    json!({"type": "toolCall", "id": id.into(), "name": name.into(), "arguments": arguments})
}

/// An assistant message made of content blocks; `stopReason` is `toolUse` when a block is a tool call.
pub fn assistant(content: Vec<Value>) -> Value {
    let stop = if content.iter().any(|b| b["type"] == "toolCall") { "toolUse" } else { "stop" };
    message(json!({"role": "assistant", "content": content, "stopReason": stop}))
}

/// An assistant message with one text block.
pub fn assistant_text(text_: impl Into<String>) -> Value {
    assistant(vec![text(text_)])
}

/// The result of a tool call, with one text block.
pub fn tool_result(tool_call_id: impl Into<String>, tool_name: impl Into<String>, output: impl Into<String>, is_error: bool) -> Value {
    message(json!({
        "role": "toolResult",
        "toolCallId": tool_call_id.into(),
        "toolName": tool_name.into(),
        "content": [text(output)],
        "isError": is_error,
    }))
}
