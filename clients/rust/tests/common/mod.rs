//! Shared by the integration tests: a real sidecar in a scratch folder, and the schema.
#![allow(dead_code)]

use serde_json::Value;
use session_sidecar::{Client, ClientBuilder};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The sidecar under test: `$SESSION_SIDECAR_BIN`, else `session-sidecar` on PATH.
pub fn sidecar_bin() -> PathBuf {
    match std::env::var_os("SESSION_SIDECAR_BIN") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => PathBuf::from("session-sidecar"),
    }
}

/// The server's log: dropped, unless `SIDECAR_TEST_LOG` is set.
pub fn stderr() -> Stdio {
    if std::env::var_os("SIDECAR_TEST_LOG").is_some() {
        Stdio::inherit()
    } else {
        Stdio::null()
    }
}

/// A folder removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        static N: AtomicUsize = AtomicUsize::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
        let dir = std::env::temp_dir().join(format!(
            "sidecar-rust-{tag}-{}-{}-{nanos}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn builder(root: &Path) -> ClientBuilder {
    Client::builder().program(sidecar_bin()).root(root).stderr(stderr())
}

pub fn spawn(root: &Path) -> Client {
    builder(root).spawn().expect("spawn session-sidecar (set SESSION_SIDECAR_BIN or put it on PATH)")
}

pub fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let path = match std::env::var_os("SIDECAR_SCHEMA") {
            Some(p) => PathBuf::from(p),
            None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../protocol/schema.json"),
        };
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    })
}

pub fn protocol_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../protocol")
}

fn resolve(s: &Value) -> &Value {
    match s.get("$ref").and_then(Value::as_str) {
        Some(r) => resolve(&schema()["$defs"][r.trim_start_matches("#/$defs/")]),
        None => s,
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Fills in the schema's defaults for absent properties, everywhere in `v`: what the server
/// leaves out (it omits defaults) and what the Rust types fill in compare equal after this.
pub fn normalize(v: &mut Value, s: &Value) {
    let s = resolve(s);
    if let Some(any) = s.get("anyOf").and_then(Value::as_array) {
        if v.is_null() {
            return;
        }
        if let (Some(d), Some(tag)) = (s.get("discriminator"), v.get("kind").and_then(Value::as_str)) {
            let _ = d;
            let target = &s["discriminator"]["mapping"][tag];
            if let Some(t) = target.as_str() {
                let member = serde_json::json!({ "$ref": t });
                normalize(v, &member);
                return;
            }
        }
        let t = json_type(v);
        for m in any {
            let m = resolve(m);
            let mt = m.get("type").and_then(Value::as_str);
            if mt == Some(t) || (t == "integer" && mt == Some("number")) {
                normalize(v, m);
                return;
            }
        }
        return;
    }
    match v {
        Value::Object(map) => {
            if let Some(props) = s.get("properties").and_then(Value::as_object) {
                for (k, ps) in props {
                    if !map.contains_key(k) {
                        if let Some(d) = ps.get("default") {
                            map.insert(k.clone(), d.clone());
                        }
                    }
                }
                for (k, x) in map.iter_mut() {
                    if let Some(ps) = props.get(k) {
                        normalize(x, ps);
                    }
                }
            }
            if let Some(items @ Value::Object(_)) = s.get("additionalProperties") {
                for x in map.values_mut() {
                    normalize(x, items);
                }
            }
        }
        Value::Array(items) => {
            if let Some(is) = s.get("items") {
                for x in items {
                    normalize(x, is);
                }
            }
        }
        _ => {}
    }
}

/// The schema of one side of a method, server request or notification.
pub fn schema_of(kind: &str, method: &str) -> Value {
    let s = schema();
    match kind {
        "params" => s["methods"][method]["params"].clone(),
        "result" => s["methods"][method]["result"].clone(),
        "serverRequestParams" => s["serverRequests"][method]["params"].clone(),
        "serverRequestResult" => s["serverRequests"][method]["result"].clone(),
        "notification" => s["notifications"]["serverToClient"][method].clone(),
        _ => panic!("unknown kind {kind}"),
    }
}

/// `value` decoded into the Rust type for (kind, method) and encoded again loses nothing
/// and adds nothing but the schema's defaults. Err when the types refuse it.
pub fn check_roundtrip(kind: &str, method: &str, value: &Value) -> Result<(), String> {
    let again = match session_sidecar::roundtrip(kind, method, value.clone()) {
        None => return Err(format!("no Rust type for {kind} of {method}")),
        Some(Err(e)) => return Err(format!("{kind} of {method} does not decode into its Rust type: {e}\n  {value}")),
        Some(Ok(v)) => v,
    };
    let s = schema_of(kind, method);
    let (mut a, mut b) = (value.clone(), again);
    normalize(&mut a, &s);
    normalize(&mut b, &s);
    if a != b {
        return Err(format!("{kind} of {method} changes through its Rust type:\n  sent/received: {a}\n  through Rust:  {b}"));
    }
    Ok(())
}
