#!/usr/bin/env bash
# What a user installs, tested as a user gets it: builds the release
# (scripts/release/build.sh), then drives each of these end to end with
# scripts/release/drive.py (initialize, create, append, buildContext, list,
# shutdown) and runs `session-sidecar demo`:
#   - the wheel, pip-installed into a fresh virtual environment (not editable);
#   - the wheel as a `uv tool` (and through `uvx --from`) and with `pipx install`,
#     uv and pipx from PyPI (tools.lock);
#   - the standalone executable (no Python of ours on its path).
# and prints the executable's size and its spawn -> initialize times.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo="$PWD"
PYTHON="${PYTHON:-python3}"
bash scripts/release/build.sh
version="$("$PYTHON" -c 'import re, sys; print(re.search(r"^__version__ = \"([^\"]+)\"", open("sidecar/__init__.py").read(), re.M)[1])')"
wheel="$repo/$(ls dist/session_sidecar-*.whl)"
core_wheel="$repo/$(ls dist/session_sidecar_core-*.whl)"
sdist="$repo/$(ls dist/session_sidecar-*.tar.gz)"
exe="$(ls -d "$repo"/dist/session-sidecar-linux-*/)session-sidecar"
tarball="$(ls "$repo"/dist/session-sidecar-linux-*.tar.gz)"
uv="$repo/.cache/release/tools/bin/uv"
pipx="$repo/.cache/release/tools/bin/pipx"
drive=("$PYTHON" "$repo/scripts/release/drive.py" --expect-version "$version" --)

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"   # away from the checkout, so nothing imports its sources by accident

check_demo() {  # the demo prints each step; its last line says how the sidecar it spawned exited
  "$@" demo >"$scratch/demo.log" 2>&1 || { cat "$scratch/demo.log" >&2; return 1; }
  tail -n 1 "$scratch/demo.log" | grep -qx "sidecar exited with code 0" || { cat "$scratch/demo.log" >&2; return 1; }
  echo "  ok  demo: $(grep -c '^== ' "$scratch/demo.log") steps, sidecar exited with code 0"
}

check_version() {  # CORE ("python" or "compiled") then the command: --version names the release and the core
  local got core="$1"
  shift
  got="$("$@" --version)"
  [ "$got" = "session-sidecar $version (core: $core)" ] || {
    echo "--version said '$got', not 'session-sidecar $version (core: $core)'" >&2
    return 1
  }
  echo "  ok  --version: $got"
}

echo "== the wheel in a fresh virtual environment"
"$PYTHON" -m venv "$scratch/venv"
"$scratch/venv/bin/python" -m pip install --quiet "$wheel"
where="$("$scratch/venv/bin/python" -c 'import sidecar, session_sidecar_client; print(sidecar.__file__, session_sidecar_client.__file__)')"
case "$where" in
  "$scratch/venv/"*site-packages*" $scratch/venv/"*site-packages*) echo "  ok  installed in site-packages: $where" ;;
  *) echo "the wheel's packages are not in the venv's site-packages: $where" >&2; exit 1 ;;
esac
check_version python "$scratch/venv/bin/session-sidecar"
"${drive[@]}" "$scratch/venv/bin/session-sidecar"
check_demo "$scratch/venv/bin/session-sidecar"

echo "== the same venv with the compiled core's wheel added ($(basename "$core_wheel"))"
"$scratch/venv/bin/python" -m pip install --quiet "$core_wheel"
check_version compiled "$scratch/venv/bin/session-sidecar"
"${drive[@]}" "$scratch/venv/bin/session-sidecar"

echo "== the sdist in a fresh virtual environment, no Rust on the path: the pure-Python core"
"$PYTHON" -m venv "$scratch/sdist-venv"
env PATH="$(dirname "$(readlink -f "$PYTHON" 2>/dev/null || command -v "$PYTHON")"):/usr/bin:/bin" \
  "$scratch/sdist-venv/bin/python" -m pip install --quiet "$sdist"
check_version python "$scratch/sdist-venv/bin/session-sidecar"
"${drive[@]}" "$scratch/sdist-venv/bin/session-sidecar"

echo "== uv tool install (and uvx --from) of the wheel"
export UV_TOOL_DIR="$scratch/uv-tools" UV_TOOL_BIN_DIR="$scratch/uv-bin"
"$uv" tool install --quiet --python "$PYTHON" "$wheel"
check_version python "$scratch/uv-bin/session-sidecar"
"${drive[@]}" "$scratch/uv-bin/session-sidecar"
"${drive[@]}" "$uv" tool run --quiet --python "$PYTHON" --from "$wheel" session-sidecar

echo "== pipx install of the wheel"
PIPX_HOME="$scratch/pipx" PIPX_BIN_DIR="$scratch/pipx-bin" PIPX_MAN_DIR="$scratch/pipx-man" \
  "$pipx" install --quiet --python "$PYTHON" "$wheel" >/dev/null
check_version python "$scratch/pipx-bin/session-sidecar"
"${drive[@]}" "$scratch/pipx-bin/session-sidecar"

echo "== the standalone executable, unpacked from $(basename "$tarball")"
mkdir "$scratch/unpacked"
tar -C "$scratch/unpacked" -xzf "$tarball"
exe="$(ls -d "$scratch"/unpacked/session-sidecar-linux-*/)session-sidecar"
echo "  size: $(du -sm "$(dirname "$exe")" | cut -f1) MB unpacked, $(du -m "$tarball" | cut -f1) MB as $(basename "$tarball")"
# Its spawn -> initialize times: the first with the bundle's files dropped from the page cache (cold).
"$PYTHON" "$repo/scripts/release/drive.py" --time-initialize 11 --evict "$(dirname "$exe")" -- "$exe"
echo "  (the same for the wheel's venv entry point:)"
"$PYTHON" "$repo/scripts/release/drive.py" --time-initialize 11 -- "$scratch/venv/bin/session-sidecar"
check_version compiled "$exe"
env -i PATH=/usr/bin:/bin HOME="$scratch" "${drive[@]}" "$exe"
check_demo env -i PATH=/usr/bin:/bin HOME="$scratch" "$exe"
