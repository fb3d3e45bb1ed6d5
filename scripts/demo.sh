#!/usr/bin/env bash
# Install session-sidecar into .venv and run the demo: a real sidecar driven over stdio.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# The locked versions (requirements/README.md), then the package itself in place.
.venv/bin/python -m pip install --quiet --require-hashes -r requirements/build.lock -r requirements/run.lock
.venv/bin/python -m pip install --quiet --no-deps --no-build-isolation -e .
exec .venv/bin/session-sidecar demo "$@"
