//! The README's examples are `examples/minimal.rs` and `examples/subscribe.rs`, word for
//! word, and they run.

mod minimal {
    include!("../examples/minimal.rs");

    pub fn run() -> session_sidecar::Result<()> {
        main()
    }
}

#[cfg(unix)]
mod subscribe {
    include!("../examples/subscribe.rs");

    pub fn run() -> session_sidecar::Result<()> {
        main()
    }
}

#[test]
fn the_readme_shows_the_examples_verbatim() {
    let readme = include_str!("../README.md");
    for (name, example) in [("minimal", include_str!("../examples/minimal.rs")), ("subscribe", include_str!("../examples/subscribe.rs"))] {
        assert!(readme.contains(&format!("```rust\n{example}```")), "README.md's example differs from examples/{name}.rs");
    }
    for said in ["SESSION_SIDECAR_BIN", "scripts/demo.sh", ".venv/bin/session-sidecar"] {
        assert!(readme.contains(said), "README.md does not say {said}");
    }
}

#[test]
fn the_minimal_example_runs() {
    // The example finds the sidecar as any program would: $SESSION_SIDECAR_BIN, else PATH.
    minimal::run().expect("examples/minimal.rs runs");
}

#[cfg(unix)]
#[test]
fn the_subscription_example_runs() {
    subscribe::run().expect("examples/subscribe.rs runs");
}
