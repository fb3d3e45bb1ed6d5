//! The typed entries, messages and content blocks: what they decode, what they write back,
//! and that unknown shapes stay readable. (That a misspelt field or variant does not compile
//! is checked by the `compile_fail` examples in `src/lib.rs`, run with the doctests.)

mod common;

use common::{spawn, Scratch};
use serde_json::{json, Value};
use session_sidecar::entries::{tool_result, user};
use session_sidecar::*;

/// Lines as pi writes them: an assistant message with thinking, a tool call, usage and
/// stopReason; its result; an entry type this crate does not know; a known type whose fields
/// do not fit; a root with string content.
const PI_LINES: &str = r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2025-01-01T10:00:01.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"look first"},{"type":"toolCall","id":"call-1","name":"read","arguments":{"path":"main.go"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15},"stopReason":"toolUse","timestamp":1735725601000}}
{"type":"message","id":"r1","parentId":"a1","timestamp":"2025-01-01T10:00:02.000Z","message":{"role":"toolResult","toolCallId":"call-1","toolName":"read","content":[{"type":"text","text":"package main"}],"isError":false,"timestamp":1735725602000}}
{"type":"future_entry","id":"f1","parentId":"r1","timestamp":"2025-01-01T10:00:03.000Z","payload":{"x":[1,2]}}
{"type":"label","id":"l1","parentId":"f1","timestamp":"2025-01-01T10:00:04.000Z","targetId":42}
{"type":"message","id":"u2","parentId":null,"timestamp":"2025-01-01T10:00:05.000Z","message":{"role":"user","content":"plain text"}}"#;

#[test]
fn typed_entries_decode_and_write_back_what_they_read() {
    let mut entries = Vec::new();
    for line in PI_LINES.lines() {
        let read: Value = serde_json::from_str(line).unwrap();
        let entry: SessionEntry = serde_json::from_str(line).unwrap();
        assert_eq!(serde_json::to_value(&entry).unwrap(), read, "written back differently: {entry:?}");
        entries.push(entry);
    }
    let SessionEntry::Message(MessageEntry { message: EntryMessage::Assistant(assistant), .. }) = &entries[0] else {
        panic!("{:?}", entries[0])
    };
    let AssistantContentBlock::Thinking(thinking) = &assistant.content.as_ref().unwrap()[0] else { panic!() };
    assert_eq!(thinking.thinking, "look first");
    let AssistantContentBlock::ToolCall(call) = &assistant.content.as_ref().unwrap()[1] else { panic!() };
    assert_eq!((call.name.as_str(), &call.arguments["path"]), ("read", &json!("main.go")));
    assert_eq!(assistant.stop_reason, Some(Some(AssistantMessageStopReason::ToolUse)));
    assert_eq!(assistant.usage.as_ref().unwrap().as_ref().unwrap().total_tokens, Some(Some(15)));
    let SessionEntry::Message(MessageEntry { message: EntryMessage::ToolResult(result), .. }) = &entries[1] else { panic!() };
    assert_eq!(result.tool_call_id, call.id);
    assert!(matches!(&entries[2], SessionEntry::Unknown(v) if v["payload"]["x"][1] == 2), "an unknown type is kept");
    assert!(matches!(&entries[3], SessionEntry::Unknown(v) if v["type"] == "label"), "a label that does not fit is kept");
    let SessionEntry::Message(root) = &entries[4] else { panic!() };
    assert_eq!(root.parent_id, Some(None), "a root's parentId is a present null");
    assert!(matches!(&root.message, EntryMessage::User(UserMessage { content: Some(UserMessageContent::Text(t)), .. }) if t == "plain text"));
}

#[test]
fn typed_entries_are_appended_and_come_back_typed() {
    let root = Scratch::new("typed");
    let client = spawn(root.path());
    let id = client.create(CreateParams { cwd: "/work/typed".into(), ..Default::default() }).unwrap().session_id;
    let typed = SessionEntry::Message(MessageEntry {
        message: EntryMessage::Assistant(AssistantMessage {
            content: Some(vec![AssistantContentBlock::ToolCall(ToolCall {
                id: "c1".into(),
                name: "bash".into(),
                arguments: json!({"command": "ls"}),
                ..serde_json::from_value(json!({"id": "", "name": "", "arguments": {}})).unwrap()
            })]),
            stop_reason: Some(Some(AssistantMessageStopReason::ToolUse)),
            ..serde_json::from_value(json!({"content": []})).unwrap()
        }),
        ..serde_json::from_value(json!({"message": {"role": "user", "content": "x"}})).unwrap()
    });
    let entries = vec![user("list files"), serde_json::to_value(&typed).unwrap(), tool_result("c1", "bash", "a.rs", false)];
    client.append(AppendParams { session_id: id.clone(), entries, ..Default::default() }).unwrap();
    let context = client
        .build_context(BuildContextParams { session_id: id.clone(), format: Some(ContextFormat::Llm), ..Default::default() })
        .unwrap();
    let AgentMessage::Assistant(a) = &context.messages[1] else { panic!("{:?}", context.messages) };
    assert!(matches!(&a.content.as_ref().unwrap()[0], AssistantContentBlock::ToolCall(c) if c.arguments["command"] == "ls"));
    let got = client.get_entries(GetEntriesParams { session_id: id, ..Default::default() }).unwrap();
    assert!(got.entries.iter().any(|e| matches!(e, SessionEntry::Message(MessageEntry { message: EntryMessage::ToolResult(_), .. }))));
    assert_eq!(providers::OFFLINE, "offline");
    client.close().unwrap();
}
