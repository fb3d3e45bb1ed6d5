#!/usr/bin/env bash
# Install everything the tests need and run every test suite: the Python
# package's tests (store, server, compaction, providers, pi parity, Python
# client), then the TypeScript, Go and Rust clients against the same sidecar.
# Arguments go to pytest; with arguments, only pytest runs.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
export PATH="$PWD/.venv/bin:$PATH"
export SESSION_SIDECAR_BIN="$PWD/.venv/bin/session-sidecar"

python -m pytest -q "$@"
if [ "$#" -gt 0 ]; then
  exit 0
fi

echo
echo "== in-process tests again, every session file mapped and tree-cached (SIDECAR_TEST_MAP_ALL)"
SIDECAR_TEST_MAP_ALL=1 python -m pytest -q -p no:cacheprovider \
  tests/store tests/context tests/format tests/compaction tests/parity

status=0
for client in typescript go rust; do
  echo
  echo "== clients/$client"
  if ! bash "clients/$client/test.sh"; then
    echo "clients/$client: FAILED" >&2
    status=1
  fi
done
exit "$status"
