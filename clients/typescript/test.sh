#!/usr/bin/env bash
# Install (npm ci), build and test the TypeScript client against a real sidecar:
# $SESSION_SIDECAR_BIN if set, else `session-sidecar` on PATH.
set -euo pipefail
cd "$(dirname "$0")"

SIDECAR="${SESSION_SIDECAR_BIN:-session-sidecar}"
if ! command -v "$SIDECAR" >/dev/null 2>&1; then
  echo "clients/typescript: no sidecar to test against: '$SIDECAR' is not executable or not on PATH" >&2
  echo "  install it (pip install -e .) or set SESSION_SIDECAR_BIN" >&2
  exit 1
fi
export SESSION_SIDECAR_BIN="$(command -v "$SIDECAR")"

node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
  echo "clients/typescript: Node 20+ is required (found $(node --version))" >&2
  exit 1
fi

rm -rf dist build
npm ci --no-audit --no-fund --loglevel=error   # its prepare step builds dist/
npx --no-install tsc -p test/tsconfig.json      # the tests, against dist/ (imported by the package's name)
exec node --test --test-reporter=spec build/test/*.test.js
