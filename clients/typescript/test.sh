#!/usr/bin/env bash
# Install (npm ci), build and test the TypeScript client against a real sidecar:
# $SESSION_SIDECAR_BIN if set, else `session-sidecar` on PATH. Then the ways a
# user gets the package: `npm install <checkout>/clients/typescript`, the packed
# tarball, and esbuild bundles (ESM and CommonJS), each in a clean folder running
# a tool-using turn; and the type-level test (code that must not compile).
set -euo pipefail
cd "$(dirname "$0")"
HERE="$PWD"

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

npm ci --no-audit --no-fund --loglevel=error
rm -rf build
npm run --silent build                          # dist/: committed, so a checkout installs without building
if [ -n "$(git status --porcelain -- dist 2>/dev/null)" ]; then
  echo "clients/typescript: dist/ differs from a fresh build of src/: commit dist/ (npm run build)" >&2
  git status --short -- dist >&2
  exit 1
fi
npx --no-install tsc -p test/tsconfig.json      # the tests, against dist/ (imported by the package's name)

# The type-level test: each file of test/must-not-compile/ must fail to compile, with
# the error its first line names (so a file broken some other way does not pass).
# One tsc run for all of them (each is checked in the output by its own name).
set +e
out="$(npx --no-install tsc --noEmit --strict --module NodeNext --moduleResolution NodeNext --target ES2022 --types node test/must-not-compile/*.ts 2>&1)"
set -e
for file in test/must-not-compile/*.ts; do
  expected="$(sed -n '1s#^// expect: ##p' "$file")"
  if ! grep -F -- "$file(" <<<"$out" | grep -qF -- "$expected"; then
    echo "type-level test: $file must fail to compile with '$expected'; tsc said:" >&2
    grep -F -- "$file" <<<"$out" >&2 || echo "  (nothing: it compiled)" >&2
    exit 1
  fi
  echo "type-level test: $file does not compile ($expected)"
done

node --test --test-reporter=spec build/test/*.test.js

# -- installs, each in a clean folder -------------------------------------------------
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
turn() { # $1: folder holding node_modules/@session-sidecar/client; runs both module kinds
  cp test/install/turn.mjs test/install/turn.cjs test/install/openai-agents.mjs test/install/openai-agents.cjs "$1/"
  (cd "$1" && node turn.mjs "$WORK/sessions" && node turn.cjs "$WORK/sessions")
  # The adapter subpath, its SDK (an optional peer) not installed.
  (cd "$1" && test ! -e node_modules/@openai/agents-core && node openai-agents.mjs "$WORK/sessions" && node openai-agents.cjs "$WORK/sessions")
}

echo "install: npm install <checkout>/clients/typescript"
mkdir "$WORK/from-folder" && (cd "$WORK/from-folder" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error "$HERE")
turn "$WORK/from-folder"

echo "install: npm pack, then npm install the tarball"
tarball="$(npm pack --silent --pack-destination "$WORK")"
mkdir "$WORK/from-tarball" && (cd "$WORK/from-tarball" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error "$WORK/$tarball")
turn "$WORK/from-tarball"
git status --porcelain -- dist | grep -q . && { echo "npm pack rebuilt dist/ differently" >&2; exit 1; }

echo "bundle: esbuild, ESM and CommonJS, run from a folder without node_modules"
mkdir "$WORK/bundles"
for format in esm cjs; do
  src="$WORK/from-tarball/turn.mjs"; [ "$format" = cjs ] && src="$WORK/from-tarball/turn.cjs"
  out="$WORK/bundles/turn-$format.$([ "$format" = esm ] && echo mjs || echo cjs)"
  (cd "$WORK/from-tarball" && "$HERE/node_modules/.bin/esbuild" "$src" --bundle --platform=node --format="$format" --outfile="$out" --log-level=warning)
  (cd "$WORK/bundles" && node "$out" "$WORK/sessions")
done
echo "installs: all ran a tool-using turn"
