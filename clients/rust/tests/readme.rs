//! The README's minimal example is `examples/minimal.rs`, word for word, and it runs.

mod minimal {
    include!("../examples/minimal.rs");

    pub fn run() -> session_sidecar::Result<()> {
        main()
    }
}

#[test]
fn the_readme_shows_the_example_verbatim() {
    let readme = include_str!("../README.md");
    let example = include_str!("../examples/minimal.rs");
    assert!(readme.contains(&format!("```rust\n{example}```")), "README.md's minimal example differs from examples/minimal.rs");
}

#[test]
fn the_minimal_example_runs() {
    // The example finds the sidecar as any program would: $SESSION_SIDECAR_BIN, else PATH.
    minimal::run().expect("examples/minimal.rs runs");
}
