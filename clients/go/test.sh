#!/usr/bin/env bash
# Tests of the Go client against a real sidecar: $SESSION_SIDECAR_BIN, else
# session-sidecar on PATH. Downloads modules, checks formatting and vet, then
# runs every test with the race detector.
set -euo pipefail
cd "$(dirname "$0")"

if [[ -n "${SESSION_SIDECAR_BIN:-}" ]]; then
  command -v "$SESSION_SIDECAR_BIN" >/dev/null || { echo "SESSION_SIDECAR_BIN=$SESSION_SIDECAR_BIN is not executable" >&2; exit 1; }
elif ! command -v session-sidecar >/dev/null; then
  echo "no sidecar: set SESSION_SIDECAR_BIN or put session-sidecar on PATH (pip install -e . at the repo root)" >&2
  exit 1
fi
export SESSION_SIDECAR_BIN="${SESSION_SIDECAR_BIN:-$(command -v session-sidecar)}"

go mod download
unformatted="$(gofmt -l .)"
if [[ -n "$unformatted" ]]; then
  echo "gofmt needed: $unformatted" >&2
  exit 1
fi
go vet ./...
go test -race -count=1 -timeout 300s "$@" ./...
