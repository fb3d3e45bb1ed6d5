//! No call is ever left waiting, and the documented errors: a payload over the frame limit,
//! an error the sidecar answers with `id: null`, a deadline, params the encoder refuses,
//! text that is not valid UTF-8, close and a killed sidecar; each against a real sidecar.

mod common;

use common::{builder, spawn, Scratch};
use serde::{Serialize, Serializer};
use serde_json::{json, Value};
use session_sidecar::entries::user;
use session_sidecar::*;
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

fn create(client: &Client) -> String {
    client.create(CreateParams { cwd: "/work/settle".into(), ..Default::default() }).unwrap().session_id
}

fn set_name(client: &Client, id: &str, name: &str) -> PendingCall<SetNameResult> {
    client.start::<methods::SetName>(SetNameParams { session_id: id.into(), name: name.into(), ..Default::default() })
}

#[test]
fn a_request_over_the_frame_limit_fails_before_sending() {
    let root = Scratch::new("too-large");
    let client = spawn(root.path());
    let id = create(&client);
    let huge = "x".repeat(70 << 20); // 70 MB, over the 64 MiB limit
    let err = client
        .append(AppendParams { session_id: id.clone(), entries: vec![user(huge.clone())], ..Default::default() })
        .unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::PayloadTooLarge), "{err}");
    assert_eq!(err.rpc().unwrap().data["limit"], MAX_MESSAGE_BYTES);
    let err = client.notify("custom/huge", Some(json!({ "text": huge }))).unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::PayloadTooLarge), "{err}");
    // Nothing was sent: the session is as it was, and the client still serves.
    let entries = client.get_entries(GetEntriesParams { session_id: id.clone(), ..Default::default() }).unwrap();
    assert!(entries.entries.iter().all(|e| !matches!(e, SessionEntry::Message(_))), "nothing was appended");
    client.append(AppendParams { session_id: id, entries: vec![user("small")], ..Default::default() }).unwrap();
    client.close().unwrap();
}

/// Stands between the client and the sidecar's stdin; replaces the body of every frame that
/// holds `marker` with 0xFF bytes, a frame no reader can find the id of: the sidecar answers
/// -32700 with `id: null`.
struct Corrupter<W: Write> {
    inner: W,
    marker: &'static [u8],
    buffer: Vec<u8>,
}

impl<W: Write> Write for Corrupter<W> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buffer.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        // The client writes one whole frame, then flushes.
        let mut frame = std::mem::take(&mut self.buffer);
        if let Some(at) = frame.windows(4).position(|w| w == b"\r\n\r\n") {
            let body = &mut frame[at + 4..];
            if body.windows(self.marker.len()).any(|w| w == self.marker) {
                body.fill(0xff);
            }
        }
        self.inner.write_all(&frame)?;
        self.inner.flush()
    }
}

fn corrupted(root: &Scratch, b: ClientBuilder) -> (Client, std::process::Child) {
    let mut child = Command::new(common::sidecar_bin())
        .arg("--root")
        .arg(root.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(common::stderr())
        .spawn()
        .unwrap();
    let writer = Corrupter { inner: child.stdin.take().unwrap(), marker: b"corrupt-me", buffer: Vec::new() };
    let client = b.connect(child.stdout.take().unwrap(), writer).unwrap();
    (client, child)
}

#[test]
fn an_error_answered_with_id_null_settles_the_only_call_in_flight() {
    let root = Scratch::new("null-id");
    let (client, mut child) = corrupted(&root, Client::builder());
    let id = create(&client);
    let err = set_name(&client, &id, "corrupt-me").wait_timeout(Duration::from_secs(1)).unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::ParseError), "{err}");
    set_name(&client, &id, "fine").wait_timeout(Duration::from_secs(10)).expect("the next call");
    client.close().unwrap();
    child.wait().unwrap();
}

#[test]
fn an_error_answered_with_id_null_waits_for_the_other_calls_in_flight() {
    let root = Scratch::new("null-id-2");
    let (asked_tx, asked) = mpsc::channel();
    let (release, released) = mpsc::channel::<()>();
    let (asked_tx, released) = (Mutex::new(asked_tx), Mutex::new(released));
    let b = Client::builder().summarizer(move |_| {
        asked_tx.lock().unwrap().send(()).ok();
        let _ = released.lock().unwrap().recv_timeout(Duration::from_secs(30));
        Ok(SummarizeResult { text: "the summary".into() })
    });
    let (client, mut child) = corrupted(&root, b);
    let id = create(&client);
    let turns: Vec<Value> = (0..6)
        .flat_map(|i| {
            vec![user(format!("step {i}: {}", "context ".repeat(60))), entries::assistant_text(format!("done {i}: {}", "ok ".repeat(60)))]
        })
        .collect();
    client.append(AppendParams { session_id: id.clone(), entries: turns, ..Default::default() }).unwrap();
    let compaction = client.start::<methods::Compact>(CompactParams {
        session_id: id.clone(),
        provider: Some("client".into()),
        keep_recent_tokens: Some(200),
        ..Default::default()
    });
    asked.recv_timeout(Duration::from_secs(20)).expect("the compaction waits for our summary");
    let named = set_name(&client, &id, "corrupt-me");
    std::thread::sleep(Duration::from_millis(500));
    assert!(!named.is_ready(), "settled while another call could have been the unreadable one");
    drop(release); // every summary asked for from now on is answered at once
    compaction.wait_timeout(Duration::from_secs(20)).expect("the compaction");
    let err = named.wait_timeout(Duration::from_secs(1)).unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::ParseError), "{err}");
    client.close().unwrap();
    child.wait().unwrap();
}

#[cfg(unix)]
#[test]
fn a_deadline_settles_the_call_at_once() {
    let root = Scratch::new("deadline");
    let client = spawn(root.path());
    let pid = client.pid().unwrap().to_string();
    assert!(Command::new("kill").arg("-STOP").arg(&pid).status().unwrap().success());
    let started = Instant::now();
    let err = client.start::<methods::List>(ListParams::default()).wait_timeout(Duration::from_millis(200)).unwrap_err();
    let took = started.elapsed();
    assert!(Command::new("kill").arg("-CONT").arg(&pid).status().unwrap().success());
    assert!(matches!(err, Error::Timeout { .. }), "{err}");
    assert!(took < Duration::from_millis(450), "returned {took:?} after a 200ms deadline");
    create(&client);
    client.close().unwrap();
}

/// Params whose Serialize fails, sent as a `session/list`.
struct Unencodable;

impl Serialize for Unencodable {
    fn serialize<S: Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom("this value cannot be encoded"))
    }
}

struct ListUnencodable;

impl Method for ListUnencodable {
    const NAME: &'static str = "session/list";
    type Params = Unencodable;
    type Result = Value;
}

#[test]
fn params_the_encoder_refuses_fail_with_its_error() {
    let root = Scratch::new("encode");
    let client = spawn(root.path());
    let err = client.call::<ListUnencodable>(Unencodable).unwrap_err();
    assert!(matches!(&err, Error::Encode(e) if e.to_string().contains("cannot be encoded")), "{err}");
    create(&client);
    client.close().unwrap();
}

/// A Rust `String` is always valid UTF-8: bytes cut inside an emoji become one through the
/// standard library's lossy conversion (U+FFFD), and are stored as such.
#[test]
fn text_cut_inside_a_multi_byte_character_is_answered() {
    let root = Scratch::new("cut");
    let client = spawn(root.path());
    let id = create(&client);
    let whole = "tool output 😀".as_bytes();
    let cut = String::from_utf8_lossy(&whole[..whole.len() - 2]).into_owned();
    client
        .start::<methods::Append>(AppendParams { session_id: id.clone(), entries: vec![user(cut)], ..Default::default() })
        .wait_timeout(Duration::from_secs(1))
        .unwrap();
    let entries = client.get_entries(GetEntriesParams { session_id: id, ..Default::default() }).unwrap();
    assert!(serde_json::to_string(entries.entries.last().unwrap()).unwrap().contains("tool output \u{fffd}"));
    client.close().unwrap();
}

/// Raw JSON params carry what a `String` cannot: the lone surrogate escape JavaScript writes
/// for a cut emoji. The sidecar answers within a second (it accepts it, or refuses it by id,
/// or with id null, which settles this only call in flight).
#[test]
fn a_lone_surrogate_in_raw_params_is_answered() {
    let root = Scratch::new("surrogate");
    let client = spawn(root.path());
    let id = create(&client);
    let raw = serde_json::value::RawValue::from_string(format!(
        r#"{{"sessionId":"{id}","entries":[{{"type":"message","message":{{"role":"user","content":[{{"type":"text","text":"cut \ud83d"}}]}}}}]}}"#
    ))
    .expect("serde_json takes the escape as JSON text");
    match client.start_raw_json("session/append", &raw).wait_timeout(Duration::from_secs(1)) {
        Ok(_) => {}
        Err(Error::Rpc(e)) => eprintln!("the sidecar refused the lone surrogate: {e}"),
        Err(e) => panic!("want an answer from the sidecar, got {e}"),
    }
    client.append(AppendParams { session_id: id, entries: vec![user("next")], ..Default::default() }).unwrap();
    client.close().unwrap();
}

#[cfg(unix)]
#[test]
fn a_killed_sidecar_is_reported_with_its_signal_and_close_then_says_closed() {
    use std::os::unix::process::ExitStatusExt;
    let (asked_tx, asked) = mpsc::channel();
    let asked_tx = Mutex::new(asked_tx);
    let root = Scratch::new("killed");
    let client = builder(root.path())
        .summarizer(move |_| {
            asked_tx.lock().unwrap().send(()).ok();
            std::thread::sleep(Duration::from_secs(30));
            Err("never".into())
        })
        .spawn()
        .unwrap();
    let id = create(&client);
    let turns: Vec<Value> = (0..6).map(|i| user(format!("step {i}: {}", "context ".repeat(60)))).collect();
    client.append(AppendParams { session_id: id.clone(), entries: turns, ..Default::default() }).unwrap();
    let compaction = client.start::<methods::Compact>(CompactParams {
        session_id: id,
        provider: Some("client".into()),
        keep_recent_tokens: Some(100),
        ..Default::default()
    });
    asked.recv_timeout(Duration::from_secs(20)).expect("the compaction is in flight");
    let pid = client.pid().unwrap().to_string();
    assert!(Command::new("kill").arg("-KILL").arg(&pid).status().unwrap().success());
    let err = compaction.wait_timeout(Duration::from_secs(5)).unwrap_err();
    assert!(matches!(&err, Error::Exited(status) if status.signal() == Some(9)), "{err}");
    assert!(err.to_string().contains("SIGKILL"), "the message names the signal: {err}");
    assert!(err.is_disconnected());
    let status = client.close().unwrap().expect("a spawned sidecar has a status");
    assert_eq!(status.signal(), Some(9));
    assert!(matches!(client.list(ListParams::default()).unwrap_err(), Error::Closed));
    assert!(matches!(client.notify("$/cancelRequest", Some(json!({"id": 1}))).unwrap_err(), Error::Closed));
}

#[cfg(unix)]
#[test]
fn server_start_then_two_clients_over_its_socket() {
    let dir = Scratch::new("serve");
    let socket = dir.path().join("s.sock");
    let sessions = dir.path().join("sessions");
    // A client connecting before the server is there waits for it.
    let early = {
        let socket = socket.clone();
        std::thread::spawn(move || {
            let c = Client::builder().connect_unix_waiting(&socket, Duration::from_secs(20))?;
            c.list(ListParams { all: Some(true), ..Default::default() })?;
            c.close().map(|_| ())
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    let server = Server::start_program(
        common::sidecar_bin(),
        &socket,
        &["--root".into(), sessions.into_os_string()],
        Duration::from_secs(30),
    )
    .unwrap();
    let writer = server.connect(Client::builder()).unwrap();
    let reader = Client::builder().connect_unix_waiting(server.socket(), Duration::from_secs(5)).unwrap();
    let id = create(&writer);
    writer.append(AppendParams { session_id: id.clone(), entries: vec![user("hi"), entries::assistant_text("hello")], ..Default::default() }).unwrap();
    let listed = reader.list(ListParams { all: Some(true), ..Default::default() }).unwrap();
    assert_eq!(listed.sessions.iter().map(|s| s.session_id.as_str()).collect::<Vec<_>>(), [id.as_str()]);
    early.join().unwrap().expect("the client that connected before the server started");
    writer.close().unwrap();
    reader.close().unwrap();
    assert!(server.close().unwrap().success(), "SIGTERM: a clean exit");
    assert!(!socket.exists(), "the socket is removed");

    // A program that exits at once is reported with its status.
    let err = Server::start_program("false", dir.path().join("x.sock"), &[], Duration::from_secs(5)).unwrap_err();
    assert!(matches!(err, Error::Exited(status) if !status.success()), "{err}");
}
