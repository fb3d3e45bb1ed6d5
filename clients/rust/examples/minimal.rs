use session_sidecar::entries::{assistant, assistant_text, text, tool_call, tool_result, user};
use session_sidecar::{AgentMessage, AppendParams, AssistantContentBlock, BuildContextParams, Client, ContextFormat, CreateParams};

fn main() -> session_sidecar::Result<()> {
    let root = std::env::temp_dir().join("session-sidecar-example");
    let client = Client::builder().root(&root).spawn()?; // spawns $SESSION_SIDECAR_BIN or `session-sidecar`
    let session = client.create(CreateParams { cwd: "/work/demo".into(), ..Default::default() })?;
    // One tool-using turn: the user asks, the model calls a tool, the tool answers, the model answers.
    let turn = vec![
        user("What does main.rs do?"),
        assistant(vec![text("Let me read it."), tool_call("call-1", "read", serde_json::json!({"path": "main.rs"}))]),
        tool_result("call-1", "read", "fn main() {}", false),
        assistant_text("It declares an empty main."),
    ];
    client.append(AppendParams { session_id: session.session_id.clone(), entries: turn, ..Default::default() })?;
    // The context for the next model call, as typed messages.
    let llm = client.build_context(BuildContextParams {
        session_id: session.session_id,
        format: Some(ContextFormat::Llm),
        ..Default::default()
    })?;
    for message in &llm.messages {
        match message {
            AgentMessage::Assistant(a) => {
                for block in a.content.iter().flatten() {
                    if let AssistantContentBlock::ToolCall(call) = block {
                        println!("tool call: {} {}", call.name, call.arguments["path"].as_str().unwrap_or("?"));
                    }
                }
            }
            AgentMessage::ToolResult(r) => println!("tool result for {}", r.tool_call_id),
            _ => {}
        }
    }
    println!("{} messages, ~{} tokens", llm.messages.len(), llm.estimated_tokens);
    client.close()?; // shutdown + exit; the process is waited for (killed after a timeout)
    Ok(())
}
