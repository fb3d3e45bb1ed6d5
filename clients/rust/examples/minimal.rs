//! `cargo run --example minimal`: a session through a real sidecar, in a temporary folder.
use session_sidecar::{entries, AppendParams, BuildContextParams, Client, CreateParams, ListParams};

fn main() -> session_sidecar::Result<()> {
    let root = std::env::temp_dir().join(format!("sidecar-example-{}", std::process::id()));
    let client = Client::builder().root(&root).spawn()?;
    let session = client.create(CreateParams { cwd: "/work/demo".into(), ..Default::default() })?;
    let conversation = vec![entries::user("What is 6 x 7?"), entries::assistant_text("42.")];
    client.append(AppendParams { session_id: session.session_id.clone(), entries: conversation, ..Default::default() })?;
    let context = client.build_context(BuildContextParams { session_id: session.session_id, ..Default::default() })?;
    println!("{} messages, ~{} tokens", context.messages.len(), context.estimated_tokens);
    println!("{} session(s) listed", client.list(ListParams { all: Some(true), ..Default::default() })?.sessions.len());
    client.close()?;
    std::fs::remove_dir_all(root).ok();
    Ok(())
}
