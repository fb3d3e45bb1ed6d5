#!/usr/bin/env bash
# The Neovim plugin in a real headless Neovim (the system's package; installed
# here with apt-get when missing) against a real sidecar: $SESSION_SIDECAR_BIN,
# else session-sidecar on PATH.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

if ! command -v nvim >/dev/null 2>&1; then
  echo "clients/nvim: installing neovim (apt-get)"
  if [ "$(id -u)" = 0 ]; then sudo=(); else sudo=(sudo); fi
  "${sudo[@]}" apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq neovim >/dev/null
fi
bin="${SESSION_SIDECAR_BIN:-$(command -v session-sidecar || true)}"
if [ -z "$bin" ] || ! command -v "$bin" >/dev/null 2>&1; then
  echo "clients/nvim: no sidecar: set SESSION_SIDECAR_BIN or put session-sidecar on PATH" >&2
  exit 1
fi
export SESSION_SIDECAR_BIN="$(command -v "$bin")"
echo "$(nvim --version | head -n 1), sidecar $SESSION_SIDECAR_BIN"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
export NVIM_TEST_DIR="$scratch"
# No user config, no shada; the plugin on the runtime path and its plugin/ loaded as at start-up.
timeout 300 nvim --headless -i NONE -u "$here/tests/minimal_init.lua" -c "luafile $here/tests/test_plugin.lua" </dev/null
