use session_sidecar::entries::{assistant_text, user};
use session_sidecar::{AppendParams, Client, CreateParams, EntryMessage, Server, SessionEntry, SubscribeParams};
use std::sync::mpsc;
use std::time::Duration;

fn main() -> session_sidecar::Result<()> {
    let dir = std::env::temp_dir().join(format!("session-sidecar-shared-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let sessions = dir.join("sessions");
    // `session-sidecar serve --socket PATH --root DIR`, returned once it is ready.
    let server = Server::start(dir.join("agent.sock"), &["--root", sessions.to_str().unwrap()])?;
    let (tx, events) = mpsc::channel();
    // One typed handler per notification: on_did_append, on_did_change_leaf, on_did_set_label, ...
    let observer = server.connect(Client::builder().on_did_append(move |p| {
        for entry in p.entries {
            if let SessionEntry::Message(m) = entry {
                let role = match m.message {
                    EntryMessage::User(_) => "user",
                    EntryMessage::Assistant(_) => "assistant",
                    _ => "other",
                };
                tx.send(role).ok();
            }
        }
    }))?;
    let writer = server.connect(Client::builder())?;
    let session = writer.create(CreateParams { cwd: "/work/demo".into(), ..Default::default() })?;
    observer.subscribe(SubscribeParams { session_id: session.session_id.clone(), ..Default::default() })?;
    let entries = vec![user("hi"), assistant_text("hello")];
    writer.append(AppendParams { session_id: session.session_id, entries, ..Default::default() })?;
    for _ in 0..2 {
        let event = events.recv_timeout(Duration::from_secs(10)).expect("didAppend reaches the observer");
        println!("the observer saw a {event} message");
    }
    writer.close()?;
    observer.close()?;
    server.close()?; // SIGTERM: the server closes its sessions and removes the socket
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
