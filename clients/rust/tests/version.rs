//! Version negotiation: a sidecar whose protocol major differs is refused, naming both versions.

mod common;

use common::{builder, Scratch};
use session_sidecar::{Error, PROTOCOL_VERSION};

#[test]
fn a_sidecar_of_another_protocol_major_is_refused_naming_both_versions() {
    let scratch = Scratch::new("version");
    // The real sidecar, told (test-only) to report protocol 2.0 in its initialize answer.
    let result = builder(scratch.path()).env("SIDECAR_TEST_REPORT_PROTOCOL_VERSION", "2.0").spawn();
    let error = match result {
        Ok(_) => panic!("spawn accepted a sidecar that speaks protocol 2.0"),
        Err(e) => e,
    };
    match &error {
        Error::ProtocolVersion { server, client } => {
            assert_eq!(server, "2.0");
            assert_eq!(client, PROTOCOL_VERSION);
        }
        other => panic!("expected Error::ProtocolVersion, got {other:?}"),
    }
    let message = error.to_string();
    assert!(message.contains("speaks protocol 2.0 but this client speaks 1.0"), "{message}");
}

#[test]
fn a_newer_minor_of_the_same_major_is_accepted() {
    let scratch = Scratch::new("version-minor");
    let client = builder(scratch.path()).env("SIDECAR_TEST_REPORT_PROTOCOL_VERSION", "1.7").spawn().expect("spawn");
    assert_eq!(client.server().protocol_version, "1.7");
    client.close().expect("close");
}
