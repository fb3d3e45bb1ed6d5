#!/usr/bin/env bash
# Runs the Rust client's tests (cargo test) against a real sidecar:
# $SESSION_SIDECAR_BIN if set, else session-sidecar on PATH, else the repo's .venv.
# Extra arguments go to cargo test, e.g. `clients/rust/test.sh --test vectors`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"

bin="${SESSION_SIDECAR_BIN:-}"
if [[ -z "$bin" ]]; then
  if command -v session-sidecar >/dev/null 2>&1; then
    bin="$(command -v session-sidecar)"
  elif [[ -x "$here/../../.venv/bin/session-sidecar" ]]; then
    bin="$here/../../.venv/bin/session-sidecar"
  else
    echo "clients/rust/test.sh: no session-sidecar: set SESSION_SIDECAR_BIN or put it on PATH" >&2
    exit 1
  fi
fi
export SESSION_SIDECAR_BIN="$bin"

# Offline when every locked crate is already in cargo's cache; else fetch them (crates.io).
if cargo fetch --locked --offline >/dev/null 2>&1; then
  offline=(--offline)
else
  cargo fetch --locked
  offline=()
fi
cargo test --locked "${offline[@]}" "$@"
