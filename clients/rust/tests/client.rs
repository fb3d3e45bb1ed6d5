//! End-to-end tests of the client against a real `session-sidecar` subprocess.

mod common;

use common::{builder, spawn, Scratch};
use serde_json::{json, Value};
use session_sidecar::entries::{assistant, assistant_text, text, tool_call, tool_result, user};
use session_sidecar::*;
use std::path::Path;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn conversation() -> Vec<Value> {
    vec![
        user("The parser test fails on empty input. Can you fix it?"),
        assistant(vec![text("Let me look at the parser."), tool_call("call_1", "read", json!({"path": "src/parser.rs"}))]),
        tool_result("call_1", "read", "fn parse(s: &str) -> &str { s.split(',').next().unwrap() }", false),
        assistant(vec![tool_call("call_2", "edit", json!({"path": "src/parser.rs", "old": "unwrap()", "new": "unwrap_or(\"\")"}))]),
        tool_result("call_2", "edit", "Applied 1 edit.", false),
        assistant_text("Fixed: parse(\"\") now returns an empty string."),
    ]
}

/// A turn with a long tool output: a compaction must make the context smaller (the sidecar refuses one that
/// would not, -33025), and a summary with its carried-over blocks outweighs `conversation()` alone.
fn long_turn() -> Vec<Value> {
    vec![
        user("Show me the whole parser."),
        assistant(vec![tool_call("call_9", "read", json!({"path": "src/parser.rs"}))]),
        tool_result("call_9", "read", &"// the parser, one line of it\n".repeat(150), false),
        assistant_text("That is the whole parser."),
        // (long enough that the kept part starts at this request: the turn above is summarized whole)
        user("Thanks, that helps; next I will look at the tests of the parser. ".repeat(2)),
        assistant_text("You are welcome."),
    ]
}

fn create(client: &Client, cwd: &str) -> String {
    client.create(CreateParams { cwd: cwd.into(), ..Default::default() }).unwrap().session_id
}

fn append(client: &Client, session: &str, entries: Vec<Value>) -> AppendResult {
    client.append(AppendParams { session_id: session.into(), entries, ..Default::default() }).unwrap()
}

/// Each message's role, through the typed messages.
fn roles(messages: &[AgentMessage]) -> Vec<&'static str> {
    messages
        .iter()
        .map(|m| match m {
            AgentMessage::User(_) => "user",
            AgentMessage::Assistant(_) => "assistant",
            AgentMessage::ToolResult(_) => "toolResult",
            AgentMessage::CompactionSummary(_) => "compactionSummary",
            AgentMessage::Unknown(_) => "unknown",
            _ => "other",
        })
        .collect()
}

/// Any value's JSON, for looking at fields generically.
fn json_of<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap()
}

fn list_all(client: &Client, include_archived: bool) -> ListResult {
    client
        .list(ListParams { all: Some(true), include_archived: Some(include_archived), limit: Some(1000), ..Default::default() })
        .unwrap()
}

#[test]
fn conversation_with_tool_calls_then_context_fork_and_list() {
    let root = Scratch::new("e2e");
    let client = spawn(root.path());
    assert_eq!(client.server().server_info.name, "session-sidecar");
    assert_eq!(client.server().protocol_version, PROTOCOL_VERSION);
    for m in METHOD_NAMES {
        assert!(client.server().capabilities.methods.iter().any(|x| x == m), "server lacks {m}");
    }

    let created = client.create(CreateParams { cwd: "/work/app".into(), name: Some("fix the parser".into()), ..Default::default() }).unwrap();
    assert_eq!(created.header["cwd"], "/work/app");
    assert_eq!(created.header["id"], created.session_id.as_str());
    let id = created.session_id;

    let appended = append(&client, &id, conversation());
    assert_eq!(appended.entries.len(), 6);
    // The name was written first (a session_info entry): the conversation hangs below it.
    assert!(appended.entries[0].parent_id.is_some());
    for pair in appended.entries.windows(2) {
        assert_eq!(pair[1].parent_id.as_deref(), Some(pair[0].id.as_str()), "a chain, each below the last");
    }
    assert_eq!(appended.leaf_id.as_deref(), Some(appended.entries[5].id.as_str()));
    assert!(appended.context_tokens > 0);
    assert!(!appended.should_compact);
    assert!(Path::new(&created.path).exists(), "written once the first assistant message came");

    let context = client
        .build_context(BuildContextParams { session_id: id.clone(), format: Some(ContextFormat::Llm), ..Default::default() })
        .unwrap();
    assert_eq!(roles(&context.messages), ["user", "assistant", "toolResult", "assistant", "toolResult", "assistant"]);
    let AgentMessage::Assistant(asked) = &context.messages[1] else { panic!("{:?}", context.messages[1]) };
    let AssistantContentBlock::ToolCall(call) = &asked.content.as_ref().unwrap()[1] else { panic!("{:?}", asked.content) };
    assert_eq!(call.arguments["path"], "src/parser.rs");
    let AgentMessage::ToolResult(result) = &context.messages[2] else { panic!("{:?}", context.messages[2]) };
    assert_eq!(result.tool_call_id, "call_1");
    let ids: Vec<String> = appended.entries.iter().map(|e| e.id.clone()).collect();
    assert_eq!(context.entry_ids, ids);
    assert_eq!(context.leaf_id, appended.leaf_id);
    assert!(context.estimated_tokens > 0);

    let fork = client.fork(ForkParams { session_id: id.clone(), entry_id: Some(ids[3].clone()), ..Default::default() }).unwrap();
    assert_ne!(fork.session_id, id);
    assert!(fork.persisted);
    assert!(Path::new(&fork.path).exists());
    let forked = client.build_context(BuildContextParams { session_id: fork.session_id.clone(), ..Default::default() }).unwrap();
    assert_eq!(roles(&forked.messages), ["user", "assistant", "toolResult", "assistant"]);

    let listed = list_all(&client, false);
    assert_eq!(listed.sessions.len(), 2);
    assert_eq!(listed.next_cursor, None);
    let original = listed.sessions.iter().find(|s| s.session_id == id).expect("the original is listed");
    let copy = listed.sessions.iter().find(|s| s.session_id == fork.session_id).expect("the fork is listed");
    assert_eq!(original.message_count, 6);
    assert_eq!(original.name.as_deref(), Some("fix the parser"));
    assert_eq!(original.cwd, "/work/app");
    assert!(original.first_message.contains("parser test fails"));
    assert!(copy.parent_session.is_some(), "a fork names its parent");
    assert_eq!(copy.message_count, 4);

    let tree = client.get_tree(GetTreeParams { session_id: id.clone(), ..Default::default() }).unwrap();
    assert_eq!(tree.nodes.len(), 7, "the name entry and six messages");
    assert_eq!(tree.nodes[0].r#type, "session_info");
    let messages: Vec<&TreeNode> = tree.nodes.iter().filter(|n| n.r#type == "message").collect();
    assert_eq!(messages.len(), 6);
    assert_eq!(messages[2].role.as_deref(), Some("toolResult"));
    assert_eq!(messages[2].id, ids[2]);
    client.close().unwrap();
}

#[test]
fn branches_labels_names_and_the_three_meanings_of_parent_id() {
    let root = Scratch::new("tree");
    let client = spawn(root.path());
    let id = create(&client, "/work/tree");
    let first = append(&client, &id, conversation());
    let ids: Vec<String> = first.entries.iter().map(|e| e.id.clone()).collect();

    let label = client.set_label(SetLabelParams { session_id: id.clone(), entry_id: ids[1].clone(), label: Some("first look".into()), ..Default::default() }).unwrap();
    let named = client.set_name(SetNameParams { session_id: id.clone(), name: "parser work".into(), ..Default::default() }).unwrap();
    assert_eq!(named.name.as_deref(), Some("parser work"));

    // Back to the first answer, and another way from there.
    let branched = client.branch(BranchParams { session_id: id.clone(), entry_id: Some(ids[1].clone()), ..Default::default() }).unwrap();
    assert_eq!(branched.leaf_id.as_deref(), Some(ids[1].as_str()));
    assert_eq!(branched.summary_entry_id, None);
    let retry = append(&client, &id, vec![tool_result("call_1", "read", "other text", false), assistant_text("Another way.")]);
    assert_eq!(retry.entries[0].parent_id.as_deref(), Some(ids[1].as_str()));

    let tree = client.get_tree(GetTreeParams { session_id: id.clone(), ..Default::default() }).unwrap();
    let children_of_1 = tree.nodes.iter().filter(|n| n.parent_id.as_deref() == Some(ids[1].as_str())).count();
    assert_eq!(children_of_1, 2, "two branches below the first answer");
    let labelled = tree.nodes.iter().find(|n| n.id == ids[1]).unwrap();
    assert_eq!(labelled.label.as_deref(), Some("first look"));
    assert!(tree.nodes.iter().any(|n| n.id == label.entry_id && n.r#type == "label"));
    assert_eq!(tree.leaf_id, retry.leaf_id);

    // leafId absent: the session's leaf; an id: the path to it; null: before the first entry.
    let at_leaf = client.build_context(BuildContextParams { session_id: id.clone(), ..Default::default() }).unwrap();
    assert_eq!(at_leaf.messages.len(), 4);
    let at_old = client
        .build_context(BuildContextParams { session_id: id.clone(), leaf_id: Some(Some(ids[5].clone())), ..Default::default() })
        .unwrap();
    assert_eq!(at_old.messages.len(), 6);
    let empty = client.build_context(BuildContextParams { session_id: id.clone(), leaf_id: Some(None), ..Default::default() }).unwrap();
    assert!(empty.messages.is_empty());

    // parentId null: a new root; an id: below that entry.
    let new_root = client
        .append(AppendParams { session_id: id.clone(), entries: vec![user("start over")], parent_id: Some(None), ..Default::default() })
        .unwrap();
    assert_eq!(new_root.entries[0].parent_id, None);
    let below = client
        .append(AppendParams { session_id: id.clone(), entries: vec![user("aside")], parent_id: Some(Some(ids[0].clone())), ..Default::default() })
        .unwrap();
    assert_eq!(below.entries[0].parent_id.as_deref(), Some(ids[0].as_str()));

    let got = client.get_entries(GetEntriesParams { session_id: id.clone(), ids: Some(vec![ids[0].clone(), ids[2].clone()]), ..Default::default() }).unwrap();
    assert_eq!(got.entries.len(), 2);
    assert_eq!(json_of(&got.entries[1])["message"]["toolName"], "read");
    let all = client.get_entries(GetEntriesParams { session_id: id.clone(), ..Default::default() }).unwrap();
    assert!(all.entries.len() >= 12);
    client.close().unwrap();
}

#[test]
fn open_close_continue_archive_delete_restore() {
    let root = Scratch::new("files");
    let client = spawn(root.path());
    let id = create(&client, "/work/files");
    // Nothing is written before the first assistant message.
    let flushed = client.flush(FlushParams { session_id: id.clone(), ..Default::default() }).unwrap();
    assert!(!flushed.persisted);
    append(&client, &id, conversation());
    assert!(client.flush(FlushParams { session_id: id.clone(), ..Default::default() }).unwrap().persisted);
    client.close_session(CloseParams { session_id: id.clone(), ..Default::default() }).unwrap();

    let opened = client.open(OpenParams { session_id: Some(id.clone()), ..Default::default() }).unwrap();
    assert_eq!(opened.entry_count, 6);
    assert_eq!(opened.parse_errors, 0);
    assert!(opened.persisted);
    assert_eq!(opened.migrated_from, None);
    let by_path = client.open(OpenParams { path: Some(opened.path.clone()), ..Default::default() }).unwrap();
    assert_eq!(by_path.session_id, id);

    let recent = client.continue_recent(ContinueRecentParams { cwd: "/work/files".into(), ..Default::default() }).unwrap();
    assert_eq!(recent.map(|r| r.session_id), Some(id.clone()));
    let none = client.continue_recent(ContinueRecentParams { cwd: "/work/elsewhere".into(), ..Default::default() }).unwrap();
    assert!(none.is_none());

    let archived = client.archive(ArchiveParams { session_id: id.clone(), ..Default::default() }).unwrap();
    assert!(archived.archived);
    assert!(Path::new(&archived.path).exists());
    assert!(list_all(&client, false).sessions.is_empty());
    let with_archived = list_all(&client, true);
    assert_eq!(with_archived.sessions.len(), 1);
    assert!(with_archived.sessions[0].archived);
    let back = client.unarchive(ArchiveParams { session_id: id.clone(), ..Default::default() }).unwrap();
    assert!(!back.archived);
    assert_eq!(list_all(&client, false).sessions.len(), 1);

    let deleted = client.delete(DeleteParams { session_id: id.clone(), ..Default::default() }).unwrap();
    let trash = deleted.trash_path.expect("a written session goes to the trash");
    assert!(Path::new(&trash).exists());
    assert!(list_all(&client, true).sessions.is_empty());
    let restored = client.restore(RestoreParams { session_id: id.clone(), ..Default::default() }).unwrap();
    assert!(Path::new(&restored.path).exists());
    assert_eq!(list_all(&client, false).sessions.len(), 1);

    // Restoring what is not in the trash fails. (The schema's table names invalidState for
    // this case; the server answers sessionNotFound.)
    let err = client.restore(RestoreParams { session_id: id, ..Default::default() }).unwrap_err();
    assert!(matches!(err.kind(), Some(ErrorKind::InvalidState | ErrorKind::SessionNotFound)), "{err}");
    client.close().unwrap();
}

#[test]
fn server_errors_are_typed_with_code_and_data() {
    let root = Scratch::new("errors");
    let client = spawn(root.path());

    let err = client.get_tree(GetTreeParams { session_id: "ghost".into(), ..Default::default() }).unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::SessionNotFound));
    assert_eq!(err.code(), Some(-33001));
    let obj = err.rpc().unwrap();
    assert_eq!(obj.data_kind(), Some("sessionNotFound"));
    assert_eq!(obj.data["sessionId"], "ghost");
    assert!(err.to_string().contains("-33001"), "{err}");
    assert!(!err.is_cancelled());

    let err = client.get_tree(GetTreeParams { session_id: "../x".into(), ..Default::default() }).unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::InvalidSessionId));

    let id = create(&client, "/work/e");
    let err = client
        .set_label(SetLabelParams { session_id: id.clone(), entry_id: "nope".into(), label: None, ..Default::default() })
        .unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::EntryNotFound), "{err}");

    // What the typed API cannot send, through the raw one.
    let err = client.call_raw("session/create", json!({"cwd": "/w", "sesionId": "typo"})).unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::InvalidParams));
    assert_eq!(err.rpc().unwrap().field(), Some("sesionId"));
    let err = client.call_raw("session/nope", json!({})).unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::MethodNotFound));
    assert_eq!(err.rpc().unwrap().data["method"], "session/nope");

    // The generated params types refuse the same unknown field.
    assert!(serde_json::from_value::<CreateParams>(json!({"cwd": "/w", "sesionId": "typo"})).is_err());
    assert!(serde_json::from_value::<CreateParams>(json!({"cwd": "/w", "sessionId": "ok"})).is_ok());

    // A compaction with nothing to compact.
    append(&client, &id, vec![user("hi"), assistant_text("hello")]);
    let err = client
        .compact(CompactParams { session_id: id.clone(), provider: Some("offline".into()), ..Default::default() })
        .unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::NothingToCompact), "{err}");

    // The connection is still fine.
    assert_eq!(list_all(&client, false).sessions.len(), 1);
    client.close().unwrap();
}

/// Writes `n` copies of a real session file under `root`, each with an id of its own.
fn many_sessions(client: &Client, n: usize) {
    let created = client
        .create(CreateParams { cwd: "/work/many".into(), session_id: Some("tmpl-0".into()), ..Default::default() })
        .unwrap();
    append(client, "tmpl-0", conversation());
    client.close_session(CloseParams { session_id: "tmpl-0".into(), ..Default::default() }).unwrap();
    let path = Path::new(&created.path);
    let data = std::fs::read_to_string(path).unwrap();
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    for i in 1..n {
        let sid = format!("tmpl-{i}");
        std::fs::write(path.with_file_name(name.replace("tmpl-0", &sid)), data.replace("\"tmpl-0\"", &format!("\"{sid}\""))).unwrap();
    }
}

#[test]
fn progress_comes_begin_reports_end_before_the_answer() {
    let root = Scratch::new("progress");
    let client = spawn(root.path());
    many_sessions(&client, 300);
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let pending = client.start_with_progress::<methods::List>(
        ListParams { all: Some(true), limit: Some(1000), ..Default::default() },
        move |p| sink.lock().unwrap().push(p),
    );
    let listed = pending.wait().unwrap();
    assert_eq!(listed.sessions.len(), 300);
    let events = events.lock().unwrap().clone();
    assert!(events.len() >= 3, "{events:?}");
    match &events[0] {
        WorkDoneProgress::Begin(b) => assert!(!b.title.is_empty()),
        other => panic!("first is not begin: {other:?}"),
    }
    assert!(matches!(events.last().unwrap(), WorkDoneProgress::End(_)), "last is not end: {events:?}");
    let percentages: Vec<i64> =
        events.iter().filter_map(|e| if let WorkDoneProgress::Report(r) = e { r.percentage } else { None }).collect();
    assert!(!percentages.is_empty(), "no report with a percentage: {events:?}");
    assert!(percentages.windows(2).all(|w| w[0] <= w[1]), "percentages go up: {percentages:?}");

    // A call without a callback gets no progress; a token of the caller's own goes to on_notification.
    drop(client);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let client = builder(root.path()).on_notification(move |n| sink.lock().unwrap().push(n)).spawn().unwrap();
    client.list(ListParams { all: Some(true), ..Default::default() }).unwrap();
    client
        .list(ListParams { all: Some(true), work_done_token: Some("mine".into()), ..Default::default() })
        .unwrap();
    let seen = seen.lock().unwrap();
    assert!(!seen.is_empty());
    for n in seen.iter() {
        match n {
            ServerNotification::Progress(p) => assert_eq!(p.token, NumberOrString::from("mine")),
            other => panic!("unexpected notification {other:?}"),
        }
    }
}

#[test]
fn cancel_handle_stops_a_long_listing() {
    let root = Scratch::new("cancel");
    let client = spawn(root.path());
    many_sessions(&client, 2500);
    client.close().unwrap();
    // A fresh server, so no summary is cached and the listing reads every file.
    let client = spawn(root.path());
    let handle: Arc<Mutex<Option<CancelHandle>>> = Arc::new(Mutex::new(None));
    let in_callback = handle.clone();
    let reports = Arc::new(Mutex::new(0));
    let counted = reports.clone();
    let pending = client.start_with_progress::<methods::List>(
        ListParams { all: Some(true), limit: Some(1000), ..Default::default() },
        move |p| {
            if let WorkDoneProgress::Report(_) = p {
                *counted.lock().unwrap() += 1;
                // Cancel from the reader thread, on the first report.
                if let Some(h) = in_callback.lock().unwrap().take() {
                    h.cancel();
                }
            }
        },
    );
    *handle.lock().unwrap() = Some(pending.cancel_handle());
    let started = Instant::now();
    let err = pending.wait().expect_err("the listing was cancelled");
    assert_eq!(err.kind(), Some(ErrorKind::RequestCancelled), "{err}");
    assert!(err.is_cancelled());
    assert!(*reports.lock().unwrap() >= 1);
    eprintln!("cancelled after {:?}", started.elapsed());
    // The same listing, not cancelled, completes.
    assert_eq!(list_all(&client, false).sessions.len(), 1000);
    client.close().unwrap();
}

/// A compaction that blocks in the client's summarizer until `release` says.
fn blocked_compaction() -> (Scratch, Client, String, mpsc::Receiver<SummarizeParams>, mpsc::Sender<()>) {
    let root = Scratch::new("summarize");
    let (asked_tx, asked) = mpsc::channel();
    let (release, released) = mpsc::channel::<()>();
    let released = Mutex::new(released);
    let asked_tx = Mutex::new(asked_tx);
    let client = builder(root.path())
        .summarizer(move |p| {
            asked_tx.lock().unwrap().send(p).ok();
            let _ = released.lock().unwrap().recv_timeout(Duration::from_secs(30));
            Ok(SummarizeResult { text: "late".into() })
        })
        .spawn()
        .unwrap();
    let id = create(&client, "/work/blocked");
    append(&client, &id, conversation());
    (root, client, id, asked, release)
}

fn compact_params(id: &str, provider: &str) -> CompactParams {
    CompactParams { session_id: id.into(), provider: Some(provider.into()), keep_recent_tokens: Some(20), ..Default::default() }
}

fn entry_types(client: &Client, id: &str) -> Vec<String> {
    let all = client.get_entries(GetEntriesParams { session_id: id.into(), ..Default::default() }).unwrap();
    all.entries.iter().map(|e| json_of(e)["type"].as_str().unwrap().to_string()).collect()
}

#[test]
fn cancel_of_a_compaction_waiting_for_the_summarizer() {
    let (_root, client, id, asked, release) = blocked_compaction();
    let pending = client.start::<methods::Compact>(compact_params(&id, "client"));
    asked.recv_timeout(Duration::from_secs(20)).expect("the server asked for a summary");
    pending.cancel();
    let err = pending.wait_timeout(Duration::from_secs(20)).unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::RequestCancelled), "{err}");
    release.send(()).ok();
    assert!(!entry_types(&client, &id).contains(&"compaction".to_string()), "a cancelled compaction writes nothing");
    client.close().unwrap();
}

#[test]
fn dropping_a_pending_call_cancels_it() {
    let (_root, client, id, asked, release) = blocked_compaction();
    let pending = client.start::<methods::Compact>(compact_params(&id, "client"));
    asked.recv_timeout(Duration::from_secs(20)).expect("the server asked for a summary");
    drop(pending);
    // Calls on one session run in order: this one answers only once the compaction is gone,
    // and the summarizer is still blocked, so only the cancel can have ended it.
    let tree = client.start::<methods::GetTree>(GetTreeParams { session_id: id.clone(), ..Default::default() });
    let tree = tree.wait_timeout(Duration::from_secs(20)).expect("the compaction was cancelled by the drop");
    assert!(tree.nodes.iter().all(|n| n.r#type != "compaction"));
    release.send(()).ok();
    client.close().unwrap();
}

#[test]
fn wait_timeout_gives_up_and_cancels() {
    let (_root, client, id, asked, release) = blocked_compaction();
    let pending = client.start::<methods::Compact>(compact_params(&id, "client"));
    asked.recv_timeout(Duration::from_secs(20)).unwrap();
    let err = pending.wait_timeout(Duration::from_millis(200)).unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err}");
    assert!(err.is_cancelled());
    let tree = client.start::<methods::GetTree>(GetTreeParams { session_id: id, ..Default::default() });
    tree.wait_timeout(Duration::from_secs(20)).expect("the timed-out compaction was cancelled");
    release.send(()).ok();
    client.close().unwrap();
}

#[test]
fn the_summarizer_answers_session_summarize() {
    let root = Scratch::new("summarizer");
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let client = builder(root.path())
        .summarizer(move |p: SummarizeParams| {
            let answer = format!("SUMMARY of {} prompt bytes", p.prompt.len());
            seen.lock().unwrap().push(p);
            Ok(SummarizeResult { text: answer })
        })
        .spawn()
        .unwrap();
    let id = create(&client, "/work/summary");
    append(&client, &id, conversation());
    append(&client, &id, long_turn());
    let mut params = compact_params(&id, "client");
    params.model = Some("my-model".into());
    let result = client.compact(params).unwrap();
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    assert!(asked[0].prompt.contains("parser"), "the prompt holds the conversation");
    assert!(!asked[0].system_prompt.is_empty());
    assert!(asked[0].max_tokens > 0);
    assert_eq!(asked[0].model.as_deref(), Some("my-model"));
    assert!(result.summary.contains(&format!("SUMMARY of {} prompt bytes", asked[0].prompt.len())), "{}", result.summary);
    assert_eq!(result.provider, "client");
    assert_eq!(result.model, "my-model");
    assert!(entry_types(&client, &id).contains(&"compaction".to_string()));
    let context = client.build_context(BuildContextParams { session_id: id, ..Default::default() }).unwrap();
    let AgentMessage::CompactionSummary(summary) = &context.messages[0] else { panic!("the summary leads the context: {:?}", context.messages[0]) };
    assert!(summary.summary.contains("SUMMARY of"), "{}", summary.summary);
    client.close().unwrap();
}

#[test]
fn a_failing_or_missing_summarizer_fails_the_compaction() {
    let root = Scratch::new("summarizer-error");
    let client = builder(root.path())
        .summarizer(|_| Err(ErrorObject::new(-32000, "model unavailable")))
        .spawn()
        .unwrap();
    let id = create(&client, "/work/s");
    append(&client, &id, conversation());
    let err = client.compact(compact_params(&id, "client")).unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::ProviderError), "{err}");
    assert!(err.to_string().contains("model unavailable"), "{err}");
    client.close().unwrap();

    // A summarizer that panics: still answered, with the panic's message.
    let client = builder(root.path()).summarizer(|_| panic!("out of credits")).spawn().unwrap();
    let err = client.compact(compact_params(&id, "client")).unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::ProviderError), "{err}");
    assert!(err.to_string().contains("out of credits"), "{err}");
    client.close().unwrap();

    // No summarizer: the client refuses session/summarize, and the compaction fails the same way.
    let client = spawn(root.path());
    let err = client.compact(compact_params(&id, "client")).unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::ProviderError), "{err}");
    assert!(!entry_types(&client, &id).contains(&"compaction".to_string()));
    client.close().unwrap();
}

#[test]
fn offline_compaction_reports_progress_and_tracks_files() {
    let root = Scratch::new("offline");
    let client = spawn(root.path());
    let id = create(&client, "/work/offline");
    append(&client, &id, conversation());
    append(&client, &id, long_turn());
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let result = client
        .start_with_progress::<methods::Compact>(compact_params(&id, "offline"), move |p| sink.lock().unwrap().push(p))
        .wait()
        .unwrap();
    assert_eq!(result.provider, "offline");
    assert!(result.tokens_before > 0);
    assert!(!result.summary.is_empty());
    assert!(result.details.read_files.iter().any(|f| f.contains("parser.rs")) || result.details.modified_files.iter().any(|f| f.contains("parser.rs")), "{:?}", result.details);
    let events = events.lock().unwrap();
    assert!(matches!(events.first(), Some(WorkDoneProgress::Begin(_))), "{events:?}");
    assert!(matches!(events.last(), Some(WorkDoneProgress::End(_))), "{events:?}");
    let tree = client.get_tree(GetTreeParams { session_id: id, ..Default::default() }).unwrap();
    assert!(tree.nodes.iter().any(|n| n.id == result.entry_id && n.r#type == "compaction"));
    client.close().unwrap();
}

#[test]
fn auto_compaction_is_announced_with_did_compact() {
    let root = Scratch::new("auto");
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let settings = Settings {
        compaction: Some(CompactionSettings {
            auto_compact: Some(true),
            context_window: Some(400),
            reserve_tokens: Some(100),
            keep_recent_tokens: Some(20),
            ..Default::default()
        }),
        providers: Some(ProvidersSettings { default: Some("offline".into()), ..Default::default() }),
        ..Default::default()
    };
    let client = builder(root.path())
        .settings(settings)
        .on_notification(move |n| {
            tx.lock().unwrap().send(n).ok();
        })
        .spawn()
        .unwrap();
    assert_eq!(client.server().settings["compaction"]["autoCompact"], true);
    let id = create(&client, "/work/auto");
    let mut long = conversation();
    long.extend(long_turn());
    long.push(user("Explain the parser in detail. ".repeat(100)));
    long.push(assistant_text("The parser splits the input on commas. ".repeat(100)));
    let appended = append(&client, &id, long);
    assert!(appended.should_compact);
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut progress_began = false;
    let did = loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(ServerNotification::DidCompact(d)) => break d,
            // The client accepted the server's progress token, so the run reports on it.
            Ok(ServerNotification::Progress(p)) => {
                progress_began |= matches!(p.value, session_sidecar::WorkDoneProgress::Begin(_))
            }
            Ok(_) => continue,
            Err(_) => panic!("no session/didCompact within 30 s"),
        }
    };
    assert!(progress_began, "autoCompact reported no progress");
    assert_eq!(did.session_id, id);
    assert_eq!(did.result.expect("autoCompact's notification carries its result").provider, "offline");
    assert!(entry_types(&client, &id).contains(&"compaction".to_string()));
    client.close().unwrap();
}

#[cfg(unix)]
fn alive(pid: u32) -> bool {
    std::process::Command::new("kill").arg("-0").arg(pid.to_string()).stderr(std::process::Stdio::null()).status().unwrap().success()
}

#[test]
fn close_shuts_down_and_later_calls_fail() {
    let root = Scratch::new("close");
    let client = spawn(root.path());
    let id = create(&client, "/work/c");
    append(&client, &id, conversation());
    let status = client.close().unwrap().expect("a spawned process has a status");
    assert!(status.success(), "shutdown then exit: code 0, got {status}");
    assert_eq!(client.close().unwrap(), Some(status), "close is idempotent");
    // The documented contract after close: Error::Closed from every call and notification.
    let err = client.list(ListParams::default()).unwrap_err();
    assert!(matches!(err, Error::Closed), "{err}");
    let err = client.call_raw("session/list", json!({})).unwrap_err();
    assert!(matches!(err, Error::Closed), "{err}");
    let err = client.notify("$/cancelRequest", Some(json!({"id": 1}))).unwrap_err();
    assert!(matches!(err, Error::Closed), "{err}");
    // What was appended is on disk: a new sidecar sees it.
    let again = spawn(root.path());
    assert_eq!(again.open(OpenParams { session_id: Some(id), ..Default::default() }).unwrap().entry_count, 6);
}

#[cfg(unix)]
#[test]
fn dropping_the_client_ends_the_process() {
    let root = Scratch::new("drop");
    let client = spawn(root.path());
    let pid = client.pid().unwrap();
    assert!(alive(pid));
    drop(client);
    assert!(!alive(pid), "the sidecar is gone (and reaped) once the client is dropped");
}

#[cfg(unix)]
#[test]
fn close_kills_a_wedged_sidecar_after_the_timeout() {
    let root = Scratch::new("wedged");
    let client = builder(root.path()).close_timeout(Duration::from_millis(700)).spawn().unwrap();
    let pid = client.pid().unwrap();
    let stopped = std::process::Command::new("kill").arg("-STOP").arg(pid.to_string()).status().unwrap();
    assert!(stopped.success());
    let started = Instant::now();
    let status = client.close().unwrap().unwrap();
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(600), "waited for the timeout first: {took:?}");
    assert!(took < Duration::from_secs(5), "then killed it: {took:?}");
    assert!(!status.success());
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(9), "killed: {status}");
    assert!(!alive(pid));
}

#[cfg(unix)]
#[test]
fn spawn_failures_are_reported() {
    let err = Client::builder().program("/nonexistent/session-sidecar").spawn().unwrap_err();
    assert!(matches!(err, Error::Spawn { .. }), "{err}");
    assert!(err.to_string().contains("/nonexistent/session-sidecar"));

    // A program that exits at once: the connection ends before initialize is answered.
    let err = Client::builder().program("true").spawn().unwrap_err();
    assert!(matches!(err, Error::Exited(status) if status.success()), "{err}");

    // A program that never answers: initialize times out and the child is killed.
    let started = Instant::now();
    let err = Client::builder().program("sleep").arg("30").startup_timeout(Duration::from_millis(300)).spawn().unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn jsonl_framing() {
    let root = Scratch::new("jsonl");
    let client = builder(root.path()).framing(Framing::Jsonl).spawn().unwrap();
    let id = create(&client, "/work/j");
    append(&client, &id, conversation());
    let listed = list_all(&client, false);
    assert_eq!(listed.sessions[0].session_id, id);
    assert!(client.close().unwrap().unwrap().success());
}

#[test]
fn connect_to_streams_of_a_sidecar_started_elsewhere() {
    let root = Scratch::new("connect");
    let mut child = std::process::Command::new(common::sidecar_bin())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(common::stderr())
        .spawn()
        .unwrap();
    let client = Client::builder()
        .root(root.path())
        .connect(child.stdout.take().unwrap(), child.stdin.take().unwrap())
        .unwrap();
    assert_eq!(client.pid(), None);
    assert_eq!(Path::new(&client.server().session_root), root.path());
    let id = create(&client, "/work/attached");
    append(&client, &id, conversation());
    assert_eq!(client.close().unwrap(), None, "no process of ours");
    // shutdown + exit + end of input: the server exits with 0 by itself.
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
}

// -- async and threads -------------------------------------------------------------------

struct ThreadWaker(std::thread::Thread);

impl std::task::Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// A minimal executor: enough to show `PendingCall` is a plain `Future`.
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let waker = std::task::Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

fn assert_send_sync<T: Send + Sync>() {}
fn assert_send<T: Send>() {}

#[test]
fn usable_from_async_code_and_many_threads() {
    assert_send_sync::<Client>();
    assert_send::<PendingCall<ListResult>>();
    assert_send_sync::<CancelHandle>();
    assert_send_sync::<Error>();

    let root = Scratch::new("async");
    let client = Arc::new(spawn(root.path()));
    let created = block_on(client.start::<methods::Create>(CreateParams { cwd: "/work/async".into(), ..Default::default() })).unwrap();
    let both = block_on(async {
        let a = client.start::<methods::Append>(AppendParams { session_id: created.session_id.clone(), entries: conversation(), ..Default::default() });
        let b = client.start::<methods::List>(ListParams { all: Some(true), ..Default::default() });
        (a.await, b.await)
    });
    assert_eq!(both.0.unwrap().entries.len(), 6);
    assert!(both.1.unwrap().sessions.len() <= 1, "the listing ran beside the append");

    let threads: Vec<_> = (0..4)
        .map(|i| {
            let client = client.clone();
            std::thread::spawn(move || {
                let id = create(&client, &format!("/work/thread-{i}"));
                append(&client, &id, conversation());
                client.build_context(BuildContextParams { session_id: id, ..Default::default() }).unwrap().messages.len()
            })
        })
        .collect();
    for t in threads {
        assert_eq!(t.join().unwrap(), 6);
    }
    assert_eq!(list_all(&client, false).sessions.len(), 5);
    client.close().unwrap();
}
