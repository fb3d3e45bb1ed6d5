#!/usr/bin/env bash
# After sidecar/wire/ or sidecar/errors.py changed: regenerate protocol/schema.json
# and every client's generated code from it (each client's tests fail when these are stale).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
"$PY" -m sidecar.schema
"$PY" clients/python/generate.py
(cd clients/typescript && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npm run --silent generate && npm run --silent build)  # dist/ is committed: rebuilt from src/
(cd clients/go && go run ./internal/gen -schema ../../protocol/schema.json -out sidecar)
(cd clients/rust && SIDECAR_REGENERATE=1 cargo test --quiet --test codegen)
