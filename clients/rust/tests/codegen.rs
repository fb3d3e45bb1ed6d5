//! `src/generated.rs` is exactly what `codegen/generate.rs` makes of `protocol/schema.json`:
//! a protocol change the crate has not picked up fails here.
//! `SIDECAR_REGENERATE=1 cargo test --test codegen` rewrites the file.

#[path = "../codegen/generate.rs"]
mod generate;

use std::path::PathBuf;

fn schema_path() -> PathBuf {
    match std::env::var_os("SIDECAR_SCHEMA") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../protocol/schema.json"),
    }
}

#[test]
fn generated_code_matches_the_schema() {
    let path = schema_path();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let schema: serde_json::Value = serde_json::from_str(&text).expect("schema.json is JSON");
    let code = generate::generate(&schema);
    let target = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/generated.rs");
    if std::env::var_os("SIDECAR_REGENERATE").is_some() {
        std::fs::write(&target, &code).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&target).unwrap_or_default();
    if committed != code {
        let line = committed.lines().zip(code.lines()).position(|(a, b)| a != b).unwrap_or(committed.lines().count().min(code.lines().count()));
        panic!(
            "src/generated.rs is stale against {} (first difference at line {}:\n  committed: {:?}\n  generated: {:?});\n\
             run `SIDECAR_REGENERATE=1 cargo test --test codegen` and review the diff",
            path.display(),
            line + 1,
            committed.lines().nth(line).unwrap_or(""),
            code.lines().nth(line).unwrap_or(""),
        );
    }
}

#[test]
fn generation_is_deterministic() {
    let text = std::fs::read_to_string(schema_path()).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(generate::generate(&schema), generate::generate(&schema));
}

/// What the client sends and answers by hand (not generated) is what the schema has: a new
/// server request or client notification in the protocol fails here until the client knows it.
#[test]
fn hand_written_parts_cover_the_schema() {
    use session_sidecar::{CLIENT_NOTIFICATION_NAMES, SERVER_REQUEST_NAMES, ServerRequest, server_requests};
    let mut sent = vec!["$/cancelRequest", "exit", "initialized"];
    sent.sort();
    let mut known: Vec<&str> = CLIENT_NOTIFICATION_NAMES.to_vec();
    known.sort();
    assert_eq!(known, sent, "client.rs sends exactly these notifications");
    assert_eq!(
        SERVER_REQUEST_NAMES,
        [server_requests::Summarize::NAME, server_requests::Create::NAME],
        "client.rs answers exactly session/summarize and window/workDoneProgress/create"
    );
    // Every error code the client maps is in the schema, and back.
    for kind in session_sidecar::ErrorKind::ALL {
        assert_eq!(session_sidecar::ErrorKind::from_code(kind.code()), Some(*kind));
    }
    assert_eq!(session_sidecar::ErrorKind::RequestCancelled.code(), -32800);
}
