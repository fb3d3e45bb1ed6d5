//! Replays every transcript in `protocol/vectors/` against a real sidecar, in both framings,
//! with this crate's framing code; every request sent and every answer and notification
//! received is also put through the generated Rust types (nothing lost, nothing added but
//! the schema's defaults). See protocol/vectors/README.md for the format.

mod common;

use common::{check_roundtrip, protocol_dir, sidecar_bin, Scratch};
use serde_json::Value;
use session_sidecar::Framing;
use std::collections::HashMap;
use std::io::{BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const READ_TIMEOUT: Duration = Duration::from_secs(30);

fn vector_files() -> Vec<PathBuf> {
    let dir = protocol_dir().join("vectors");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

struct Replay {
    framing: Framing,
    root: String,
    captures: HashMap<String, Value>,
    child: Child,
    stdin: std::process::ChildStdin,
    messages: mpsc::Receiver<Value>,
    /// Requests sent and not yet answered: id -> (method, params).
    sent: HashMap<String, (String, Value)>,
    typed_checks: usize,
}

impl Replay {
    fn start(framing: Framing, root: &Scratch) -> Replay {
        let mut cmd = Command::new(sidecar_bin());
        if framing == Framing::Jsonl {
            cmd.arg("--jsonl");
        }
        let mut child = cmd
            .arg("--root")
            .arg(root.path().join("unused-default"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(common::stderr())
            .spawn()
            .expect("spawn session-sidecar");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Ok(Some(body)) = framing.read(&mut r) {
                let v: Value = serde_json::from_slice(&body).expect("the server sent invalid JSON");
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        Replay {
            framing,
            root: root.path().to_string_lossy().into_owned(),
            captures: HashMap::new(),
            child,
            stdin,
            messages: rx,
            sent: HashMap::new(),
            typed_checks: 0,
        }
    }

    fn lookup(&self, name: &str) -> Value {
        if name == "root" {
            return Value::String(self.root.clone());
        }
        self.captures.get(name).cloned().unwrap_or_else(|| panic!("${{{name}}} was never captured"))
    }

    /// `${name}` replaced: a whole-string placeholder keeps the captured value's type.
    fn substitute(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => {
                if let Some(name) = s.strip_prefix("${").and_then(|r| r.strip_suffix('}')) {
                    if !name.contains('}') {
                        return self.lookup(name);
                    }
                }
                Value::String(self.substitute_text(s))
            }
            Value::Array(a) => Value::Array(a.iter().map(|x| self.substitute(x)).collect()),
            Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), self.substitute(x))).collect()),
            other => other.clone(),
        }
    }

    fn substitute_text(&self, s: &str) -> String {
        let mut out = String::new();
        let mut rest = s;
        while let Some(start) = rest.find("${") {
            let Some(len) = rest[start..].find('}') else { break };
            out.push_str(&rest[..start]);
            match self.lookup(&rest[start + 2..start + len]) {
                Value::String(x) => out.push_str(&x),
                other => out.push_str(&other.to_string()),
            }
            rest = &rest[start + len + 1..];
        }
        out.push_str(rest);
        out
    }

    fn matches(&mut self, expected: &Value, actual: &Value, at: &str) -> Result<(), String> {
        let fail = |why: &str| Err(format!("at {at}: {why}\n  expected {expected}\n  actual   {actual}"));
        match expected {
            Value::String(s) => {
                match s.as_str() {
                    "<any>" => return Ok(()),
                    "<string>" => return if actual.is_string() { Ok(()) } else { fail("not a string") },
                    "<integer>" => return if actual.is_i64() || actual.is_u64() { Ok(()) } else { fail("not an integer") },
                    "<timestamp>" => {
                        return if actual.as_str().is_some_and(is_timestamp) { Ok(()) } else { fail("not an ISO 8601 UTC time") }
                    }
                    _ => {}
                }
                if let Some(name) = s.strip_prefix("<capture:").and_then(|r| r.strip_suffix('>')) {
                    self.captures.insert(name.to_string(), actual.clone());
                    return Ok(());
                }
                let expected = self.substitute(expected);
                match (&expected, actual) {
                    (Value::String(pattern), Value::String(got)) if pattern.contains("<*>") => {
                        if glob(pattern, got) { Ok(()) } else { fail("does not match the pattern") }
                    }
                    (e, a) if e == a => Ok(()),
                    _ => fail("different value"),
                }
            }
            Value::Object(em) => {
                let Some(am) = actual.as_object() else { return fail("not an object") };
                let mut ek: Vec<_> = em.keys().collect();
                let mut ak: Vec<_> = am.keys().collect();
                ek.sort();
                ak.sort();
                if ek != ak {
                    return fail(&format!("keys differ: expected {ek:?}, got {ak:?}"));
                }
                // Captures first: a sibling may use them (objects are read without their key order).
                let (first, then): (Vec<_>, Vec<_>) = em.iter().partition(|(_, ev)| has_capture(ev));
                for (k, ev) in first.into_iter().chain(then) {
                    self.matches(ev, &am[k], &format!("{at}.{k}"))?;
                }
                Ok(())
            }
            Value::Array(ea) => {
                let Some(aa) = actual.as_array() else { return fail("not an array") };
                if ea.len() != aa.len() {
                    return fail(&format!("{} items, expected {}", aa.len(), ea.len()));
                }
                for (i, (e, a)) in ea.iter().zip(aa).enumerate() {
                    self.matches(e, a, &format!("{at}[{i}]"))?;
                }
                Ok(())
            }
            Value::Number(_) => {
                if expected == actual && expected.is_f64() == actual.is_f64() { Ok(()) } else { fail("different number") }
            }
            _ => if expected == actual { Ok(()) } else { fail("different value") },
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    fn send(&mut self, message: &Value) -> Result<(), String> {
        let message = self.substitute(message);
        if let (Some(method), Some(id)) = (message.get("method").and_then(Value::as_str), message.get("id")) {
            let params = message.get("params").cloned().unwrap_or(Value::Null);
            self.sent.insert(id.to_string(), (method.to_string(), params));
        }
        let body = serde_json::to_vec(&message).unwrap();
        let framed = self.framing.encode(&body);
        self.write(&framed);
        Ok(())
    }

    /// A message from the server through the Rust types.
    fn check_typed(&mut self, message: &Value) -> Result<(), String> {
        if let Some(method) = message.get("method").and_then(Value::as_str) {
            let params = message.get("params").cloned().unwrap_or(Value::Null);
            let kind = if message.get("id").is_some() { "serverRequestParams" } else { "notification" };
            self.typed_checks += 1;
            return check_roundtrip(kind, method, &params);
        }
        let Some((method, params)) = message.get("id").and_then(|id| self.sent.remove(&id.to_string())) else {
            return Ok(()); // id null: a parse error, nothing was sent for it
        };
        if session_sidecar::roundtrip("params", &method, Value::Null).is_none() {
            return Ok(()); // a method the schema does not have (an error vector)
        }
        // Omitted params mean {} to the server (and null to a method without params).
        let params = if params.is_null() && session_sidecar::roundtrip("params", &method, Value::Null).unwrap().is_err() {
            serde_json::json!({})
        } else {
            params
        };
        if let Some(result) = message.get("result") {
            self.typed_checks += 2;
            check_roundtrip("params", &method, &params)?;
            check_roundtrip("result", &method, result)?;
        } else if let Some(error) = message.get("error") {
            self.typed_checks += 1;
            let e: session_sidecar::ErrorObject =
                serde_json::from_value(error.clone()).map_err(|e| format!("an error object that does not fit ErrorObject: {e}"))?;
            // Params the server took (it failed for another reason) fit the types too.
            if e.kind() != Some(session_sidecar::ErrorKind::InvalidParams)
                && e.kind() != Some(session_sidecar::ErrorKind::ServerNotInitialized)
                && e.kind() != Some(session_sidecar::ErrorKind::InvalidRequest)
            {
                check_roundtrip("params", &method, &params)?;
            }
        }
        Ok(())
    }

    fn expect(&mut self, expected: &[Value]) -> Result<(), String> {
        for (i, e) in expected.iter().enumerate() {
            let actual = self
                .messages
                .recv_timeout(READ_TIMEOUT)
                .map_err(|_| format!("expected message {i} did not come within {READ_TIMEOUT:?}: {e}"))?;
            self.matches(e, &actual, "$")?;
            self.check_typed(&actual)?;
        }
        Ok(())
    }

    fn finish(mut self, ends_with_exit: bool) -> Result<usize, String> {
        if ends_with_exit {
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                if let Some(status) = self.child.try_wait().unwrap() {
                    if status.code() != Some(0) {
                        return Err(format!("the server exited with {status} after exit, expected code 0"));
                    }
                    break;
                }
                if Instant::now() > deadline {
                    let _ = self.child.kill();
                    return Err("the server did not exit after exit".into());
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        } else {
            drop(self.stdin);
            let _ = self.child.kill();
            let _ = self.child.wait();
            return Ok(self.typed_checks);
        }
        if let Ok(extra) = self.messages.try_recv() {
            return Err(format!("an unexpected message after the last step: {extra}"));
        }
        Ok(self.typed_checks)
    }
}

fn has_capture(v: &Value) -> bool {
    match v {
        Value::String(s) => s.starts_with("<capture:"),
        Value::Array(a) => a.iter().any(has_capture),
        Value::Object(m) => m.values().any(has_capture),
        _ => false,
    }
}

fn is_timestamp(s: &str) -> bool {
    // 2025-01-01T10:00:00Z or 2025-01-01T10:00:00.000Z
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| r.clone().all(|i| b.get(i).is_some_and(u8::is_ascii_digit));
    b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && s.ends_with('Z')
        && (b.len() == 20 || (b[19] == b'.' && digits(20..b.len() - 1) && b.len() > 21))
}

/// `<*>` matches any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split("<*>").collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
}

fn replay(path: &PathBuf, framing: Framing) -> Result<(usize, usize), String> {
    let steps: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).map_err(|e| e.to_string())?;
    let scratch = Scratch::new("vector");
    let mut r = Replay::start(framing, &scratch);
    let wanted = if framing == Framing::Lsp { "lsp" } else { "jsonl" };
    let mut ran = 0;
    let mut ends_with_exit = false;
    for (i, step) in steps.iter().enumerate() {
        if step.get("framing").and_then(Value::as_str).is_some_and(|f| f != wanted) {
            continue;
        }
        ran += 1;
        let what = step.get("comment").and_then(Value::as_str).unwrap_or("");
        let context = |e: String| format!("step {i} ({what}): {e}");
        ends_with_exit = false;
        if let Some(message) = step.get("send") {
            ends_with_exit = message.get("method").and_then(Value::as_str) == Some("exit") && message.get("id").is_none();
            r.send(message).map_err(context)?;
        }
        if let Some(raw) = step.get("sendRaw").and_then(Value::as_str) {
            r.write(raw.as_bytes());
        }
        let expected = step.get("expect").and_then(Value::as_array).cloned().unwrap_or_default();
        r.expect(&expected).map_err(context)?;
    }
    let checks = r.finish(ends_with_exit)?;
    Ok((ran, checks))
}

fn replay_all(framing: Framing) {
    let files = vector_files();
    assert!(!files.is_empty(), "no vectors in protocol/vectors");
    let mut failures = Vec::new();
    let mut total_steps = 0;
    let mut total_checks = 0;
    for file in &files {
        match replay(file, framing) {
            Ok((steps, checks)) => {
                total_steps += steps;
                total_checks += checks;
            }
            Err(e) => failures.push(format!("{} ({framing:?}): {e}", file.file_name().unwrap().to_string_lossy())),
        }
    }
    eprintln!("{framing:?}: {} vector files, {total_steps} steps, {total_checks} typed checks", files.len());
    assert!(failures.is_empty(), "{} vector(s) failed:\n{}", failures.len(), failures.join("\n\n"));
    assert!(total_steps > files.len(), "replayed almost nothing");
    assert!(total_checks > 0, "no message went through the Rust types");
}

#[test]
fn vectors_replay_in_lsp_framing() {
    replay_all(Framing::Lsp);
}

#[test]
fn vectors_replay_in_jsonl_framing() {
    replay_all(Framing::Jsonl);
}

#[test]
fn placeholder_helpers() {
    assert!(glob("/r/--w--/<*>_vec-1.jsonl", "/r/--w--/2025-01-01T10-00-00-000Z_vec-1.jsonl"));
    assert!(!glob("/r/--w--/<*>_vec-1.jsonl", "/r/--w--/x_vec-2.jsonl"));
    assert!(glob("a<*>b<*>c", "aXbYc"));
    assert!(!glob("a<*>b<*>c", "aXc"));
    assert!(is_timestamp("2025-01-01T10:00:00.000Z"));
    assert!(is_timestamp("2025-01-01T10:00:00Z"));
    assert!(!is_timestamp("2025-01-01 10:00:00"));
    assert!(!is_timestamp("yesterday"));
}
