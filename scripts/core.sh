#!/usr/bin/env bash
# Build the compiled core (core/, issue 42) and install it into .venv: the session-sidecar-core wheel
# (module sidecar_core), which the sidecar runs when it imports (SIDECAR_CORE, sidecar/corepath).
# Cargo's downloads and build are kept in .cache (CARGO_HOME, CARGO_TARGET_DIR), so a second run of CI on
# the same machine rebuilds nothing. Prints the wheel's path on its last line.
#   bash scripts/core.sh            # build (release) and install into .venv
#   bash scripts/core.sh --no-install   # build the wheel only (the release scripts)
set -euo pipefail
cd "$(dirname "$0")/.."
install=1
[ "${1:-}" = "--no-install" ] && install=0
PY="${CORE_PYTHON:-.venv/bin/python}"
export CARGO_HOME="${CORE_CARGO_HOME:-$PWD/.cache/cargo-home}"
export CARGO_TARGET_DIR="$PWD/.cache/core-target"
if ! command -v cargo >/dev/null 2>&1; then
  [ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
fi
"$PY" -m pip install --quiet --require-hashes -r requirements/core.lock
out="$PWD/.cache/core-wheel"
rm -rf "$out"
"$PY" -m maturin build --quiet --release --manifest-path core/Cargo.toml --interpreter "$PY" --out "$out" >&2
wheel="$(ls "$out"/session_sidecar_core-*.whl)"
if [ "$install" = 1 ]; then
  "$PY" -m pip install --quiet --no-deps --force-reinstall "$wheel"
fi
echo "$wheel"
