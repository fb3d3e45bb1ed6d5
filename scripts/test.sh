#!/usr/bin/env bash
# Install everything the tests need and run every test suite: the Python
# package's tests (store, server, compaction, providers, pi parity, Python
# client), then the TypeScript, Go and Rust clients and the pi extension
# (clients/pi-extension, in pi's own CLI) against the same sidecar.
# Arguments go to pytest; with arguments, only pytest runs.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# The locked versions (requirements/README.md), then the package itself in place.
.venv/bin/python -m pip install --quiet --require-hashes -r requirements/build.lock -r requirements/test.lock
.venv/bin/python -m pip install --quiet --no-deps --no-build-isolation -e .
# The compiled core (issue 42, core/): built into the venv, its cargo build cached in .cache (scripts/core.sh).
bash scripts/core.sh >/dev/null
# The session page's tests (tests/export/test_page_chromium.py) run in the system's headless Chromium.
if ! command -v chromium >/dev/null 2>&1; then
  echo "installing chromium (apt-get) for the session page tests"
  if [ "$(id -u)" = 0 ]; then sudo=(); else sudo=(sudo); fi
  "${sudo[@]}" apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq chromium >/dev/null
fi
export PATH="$PWD/.venv/bin:$PATH"
export SESSION_SIDECAR_BIN="$PWD/.venv/bin/session-sidecar"

# A throwaway PostgreSQL cluster (issue 12) for tests/postgres, installed from the
# system's packages when missing (scripts/pg.sh), stopped and removed at exit.
if [ -z "${SIDECAR_TEST_DATABASE_URL:-}" ]; then
  pg_base="$(mktemp -d)"
  trap 'bash scripts/pg.sh stop "$pg_base/cluster"; rmdir "$pg_base" 2>/dev/null || true' EXIT
  SIDECAR_TEST_DATABASE_URL="$(bash scripts/pg.sh start "$pg_base/cluster")"
  export SIDECAR_TEST_DATABASE_URL SIDECAR_TEST_PG_DIR="$pg_base/cluster"
fi

if [ "$#" -eq 0 ]; then
  # The house's habits (issue 40): types checked, lint and format, before any test runs.
  echo "== mypy (sidecar/, clients/python), ruff check and ruff format --check"
  mypy
  ruff check sidecar tests bench clients/python
  ruff format --check sidecar tests bench clients/python
  echo "== cargo fmt --check and cargo clippy (core/, the compiled core)"
  (
    cd core
    export CARGO_HOME="$PWD/../.cache/cargo-home" CARGO_TARGET_DIR="$PWD/../.cache/core-target"
    [ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$PATH:$HOME/.cargo/bin"
    cargo fmt --check
    cargo clippy --release --quiet -- -D warnings
  )
fi

# The first pass runs the pure-Python core, the reference (issue 42); the SIDECAR_TEST_MAP_ALL pass below runs the
# compiled one, with tests/format/test_core_differential.py holding the two to each other.
SIDECAR_CORE=python python -m pytest -q "$@"
if [ "$#" -gt 0 ]; then
  exit 0
fi

echo
echo "== in-process tests again, every session file mapped and tree-cached (SIDECAR_TEST_MAP_ALL), the compiled core"
SIDECAR_CORE=compiled SIDECAR_TEST_MAP_ALL=1 python -m pytest -q -p no:cacheprovider \
  tests/store tests/context tests/format tests/compaction tests/parity tests/export

echo
echo "== the store, context, compaction, rpc, parity and importers suites again, every session in PostgreSQL (SIDECAR_TEST_STORE)"
SIDECAR_TEST_STORE=postgres python -m pytest -q -p no:cacheprovider \
  tests/store tests/context tests/compaction tests/rpc tests/parity tests/importers \
  --deselect tests/rpc/test_crash.py --deselect tests/rpc/test_fuzz.py

status=0
for client in typescript go rust pi-extension; do
  echo
  echo "== clients/$client"
  if ! bash "clients/$client/test.sh"; then
    echo "clients/$client: FAILED" >&2
    status=1
  fi
done

# ==== release (issue 29): what users install, and the Neovim plugin ==========
# The wheel (fresh venv, uv tool) and the standalone executable built from it,
# driven end to end (scripts/release/check.sh; the executable is cached by a
# hash of its sources in .cache/release); the TypeScript, Go and Rust suites
# once more, against that executable; the Neovim plugin in headless Neovim.
echo
echo "== release: build the wheel, sdist and standalone executable; install and drive them"
if bash scripts/release/check.sh; then
  release_bin="$(ls -d "$PWD"/dist/session-sidecar-linux-*/)session-sidecar"
  for client in typescript go rust; do
    echo
    echo "== clients/$client against the standalone executable"
    if ! SESSION_SIDECAR_BIN="$release_bin" bash "clients/$client/test.sh"; then
      echo "clients/$client against the standalone executable: FAILED" >&2
      status=1
    fi
  done
else
  echo "release: FAILED" >&2
  status=1
fi
echo
echo "== clients/nvim"
if ! bash clients/nvim/test.sh; then
  echo "clients/nvim: FAILED" >&2
  status=1
fi
# ==== end of release ===========================================================

exit "$status"
