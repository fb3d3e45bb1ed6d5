//! Subscriptions through the client on a real sidecar: typed notifications, in order, with cursors.

mod common;

use common::{builder, Scratch};
use session_sidecar::entries::{assistant_text, user};
use session_sidecar::*;
use std::sync::mpsc;
use std::time::Duration;

fn seq(cursor: &str) -> u64 {
    cursor.rsplit('.').next().unwrap().parse().unwrap()
}

#[test]
fn a_subscriber_gets_typed_events_in_order_and_resumes_from_a_cursor() {
    let root = Scratch::new("live");
    let (tx, rx) = mpsc::channel();
    let client = builder(root.path()).on_notification(move |n| tx.send(n).unwrap()).spawn().unwrap();
    let sid = client.create(CreateParams { cwd: "/work/app".into(), ..Default::default() }).unwrap().session_id;
    client
        .append(AppendParams { session_id: sid.clone(), entries: vec![user("hello"), assistant_text("hi")], ..Default::default() })
        .unwrap();
    let subscribed = client.subscribe(SubscribeParams { session_id: sid.clone(), ..Default::default() }).unwrap();
    assert_eq!(subscribed.entry_count, 2);
    assert!(!subscribed.resync);

    let one = client.append(AppendParams { session_id: sid.clone(), entries: vec![user("one")], ..Default::default() }).unwrap();
    let first = one.entries[0].id.clone();
    client
        .set_label(SetLabelParams { session_id: sid.clone(), entry_id: first.clone(), label: Some("here".into()), ..Default::default() })
        .unwrap();
    client.branch(BranchParams { session_id: sid.clone(), entry_id: Some(first.clone()), ..Default::default() }).unwrap();

    let mut cursors = Vec::new();
    let next = || rx.recv_timeout(Duration::from_secs(20)).expect("a notification");
    match next() {
        ServerNotification::DidAppend(p) => {
            let SessionEntry::Message(m) = &p.entries[0] else { panic!("{:?}", p.entries[0]) };
            assert_eq!(m.id, Some(Some(first.clone())));
            assert!(!p.external);
            cursors.push(p.cursor.unwrap());
        }
        other => panic!("expected didAppend, got {other:?}"),
    }
    match next() {
        ServerNotification::DidAppend(p) => {
            let SessionEntry::Label(label) = &p.entries[0] else { panic!("{:?}", p.entries[0]) };
            assert_eq!(label.label, Some(Some("here".to_string())));
            cursors.push(p.cursor.unwrap());
        }
        other => panic!("expected the label's didAppend, got {other:?}"),
    }
    match next() {
        ServerNotification::DidSetLabel(p) => {
            assert_eq!((p.target_id.as_str(), p.label.as_deref()), (first.as_str(), Some("here")));
            cursors.push(p.cursor);
        }
        other => panic!("expected didSetLabel, got {other:?}"),
    }
    match next() {
        ServerNotification::DidChangeLeaf(p) => {
            assert_eq!(p.leaf_id.as_deref(), Some(first.as_str()));
            cursors.push(p.cursor);
        }
        other => panic!("expected didChangeLeaf, got {other:?}"),
    }
    let seqs: Vec<u64> = cursors.iter().map(|c| seq(c)).collect();
    assert_eq!(seqs, vec![1, 2, 3, 4]);

    // From the second cursor: the two events after it come again, then the answer.
    let again = client.subscribe(SubscribeParams { session_id: sid.clone(), since: Some(cursors[1].clone()), ..Default::default() }).unwrap();
    assert_eq!(again.missed, 2);
    assert!(matches!(next(), ServerNotification::DidSetLabel(_)));
    assert!(matches!(next(), ServerNotification::DidChangeLeaf(_)));

    let gone = client.unsubscribe(UnsubscribeParams { session_id: sid.clone(), ..Default::default() }).unwrap();
    assert!(gone.unsubscribed);
    client.append(AppendParams { session_id: sid.clone(), entries: vec![user("unheard")], ..Default::default() }).unwrap();
    client.get_tree(GetTreeParams { session_id: sid, ..Default::default() }).unwrap(); // a round trip after it
    assert!(rx.recv_timeout(Duration::from_millis(200)).is_err());
    client.close().unwrap();
}

/// A sidecar serving sockets (`serve` with `args`), the address it printed, and its process.
struct Served {
    child: std::process::Child,
    listening: Option<String>,
}

impl Served {
    fn start(root: &std::path::Path, args: &[&str]) -> Served {
        use std::io::BufRead;
        let mut child = std::process::Command::new(common::sidecar_bin())
            .arg("serve")
            .arg("--root")
            .arg(root)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(common::stderr())
            .spawn()
            .expect("start session-sidecar serve");
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let mut listening = None;
        loop {
            let line = lines.next().expect("the sidecar exited before it was ready").unwrap();
            if let Some(at) = line.find("listening on ") {
                listening = Some(line[at + "listening on ".len()..].trim().to_string());
            }
            if line.contains("ready") {
                break;
            }
        }
        std::thread::spawn(move || lines.for_each(drop)); // keep its stdout drained
        Served { child, listening }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        terminate(self.child.id());
        let _ = self.child.wait();
    }
}

fn terminate(pid: u32) {
    let _ = std::process::Command::new("kill").arg("-TERM").arg(pid.to_string()).status();
}

#[cfg(unix)]
#[test]
fn connect_unix_attaches_to_a_shared_sidecar_and_follows_another_client() {
    let root = Scratch::new("unix");
    let path = root.path().join("live.sock");
    let _served = Served::start(&root.path().join("sessions"), &["--socket", path.to_str().unwrap()]);
    let controller = Client::builder().connect_unix(&path).unwrap();
    let (tx, rx) = mpsc::channel();
    let observer = Client::builder().on_notification(move |n| tx.send(n).unwrap()).connect_unix(&path).unwrap();
    let sid = controller.create(CreateParams { cwd: "/work/unix".into(), ..Default::default() }).unwrap().session_id;
    controller
        .append(AppendParams { session_id: sid.clone(), entries: vec![user("hello"), assistant_text("hi")], ..Default::default() })
        .unwrap();
    observer.subscribe(SubscribeParams { session_id: sid.clone(), ..Default::default() }).unwrap();
    let one = controller.append(AppendParams { session_id: sid.clone(), entries: vec![user("one")], ..Default::default() }).unwrap();
    match rx.recv_timeout(Duration::from_secs(20)).expect("a notification") {
        ServerNotification::DidAppend(p) => {
            assert_eq!(serde_json::to_value(&p.entries[0]).unwrap()["id"], one.entries[0].id.as_str())
        }
        other => panic!("expected didAppend, got {other:?}"),
    }
    assert_eq!(observer.close().unwrap(), None);
    assert_eq!(controller.close().unwrap(), None);
}

#[test]
fn connect_tcp_sends_the_token_and_a_wrong_or_missing_one_is_refused() {
    let root = Scratch::new("tcp");
    let token_file = root.path().join("token");
    let served = Served::start(
        &root.path().join("sessions"),
        &["--listen", "127.0.0.1:0", "--token-file", token_file.to_str().unwrap()],
    );
    let addr = served.listening.clone().expect("the sidecar said where it listens");
    let token = std::fs::read_to_string(&token_file).unwrap().trim().to_string();
    for offered in [None, Some("a-wrong-token-of-enough-length")] {
        let builder = Client::builder();
        let builder = match offered {
            Some(t) => builder.token(t),
            None => builder,
        };
        let error = builder.connect_tcp(addr.as_str()).expect_err("initialize without the right token");
        assert_eq!(error.code(), Some(-33071), "{error}");
        assert_eq!(error.kind(), Some(ErrorKind::Unauthorized));
        assert!(error.to_string().contains("token"), "{error}");
    }
    let client = Client::builder().token(token).connect_tcp(addr.as_str()).unwrap();
    let created = client.create(CreateParams { cwd: "/work/tcp".into(), ..Default::default() }).unwrap();
    assert!(!created.session_id.is_empty());
    assert_eq!(client.close().unwrap(), None);
}
