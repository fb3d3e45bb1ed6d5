use session_sidecar::{entries, AppendParams, BuildContextParams, Client, CreateParams, ListParams};

fn main() -> session_sidecar::Result<()> {
    let root = std::env::temp_dir().join("session-sidecar-example");
    let client = Client::builder().root(&root).spawn()?; // spawns `session-sidecar`, initializes it
    let session = client.create(CreateParams { cwd: "/work/demo".into(), ..Default::default() })?;
    let entries = vec![entries::user("What is 6 x 7?"), entries::assistant_text("42.")];
    client.append(AppendParams { session_id: session.session_id.clone(), entries, ..Default::default() })?;
    let context = client.build_context(BuildContextParams { session_id: session.session_id, ..Default::default() })?;
    println!("{} messages, ~{} tokens", context.messages.len(), context.estimated_tokens);
    let listed = client.list(ListParams { cwd: Some("/work/demo".into()), ..Default::default() })?;
    println!("{} session(s) in {}", listed.sessions.len(), root.display());
    client.close()?; // shutdown + exit; the process is waited for (killed after a timeout)
    Ok(())
}
