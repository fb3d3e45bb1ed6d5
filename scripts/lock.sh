#!/usr/bin/env bash
# Regenerate requirements/*.lock from pyproject.toml (see requirements/README.md): uv's resolver,
# universal (every platform, Python 3.11 and up), with hashes. uv comes from the test lock's venv.
set -euo pipefail
cd "$(dirname "$0")/.."
uv="${UV:-.venv/bin/uv}"
[ -x "$uv" ] || { .venv/bin/python -m pip install --quiet uv; }
common=(--universal --python-version 3.11 --generate-hashes --quiet)
"$uv" pip compile "${common[@]}" pyproject.toml -o requirements/run.lock
"$uv" pip compile "${common[@]}" pyproject.toml --extra test -o requirements/test.lock
printf 'setuptools>=68\n' | "$uv" pip compile "${common[@]}" - -o requirements/build.lock
