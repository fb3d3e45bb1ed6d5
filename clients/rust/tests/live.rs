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
            assert_eq!(p.entries[0]["id"], first.as_str());
            assert!(!p.external);
            cursors.push(p.cursor.unwrap());
        }
        other => panic!("expected didAppend, got {other:?}"),
    }
    match next() {
        ServerNotification::DidAppend(p) => {
            assert_eq!(p.entries[0]["type"], "label");
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
