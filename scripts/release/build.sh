#!/usr/bin/env bash
# The release build: the sdist and the wheel (built from the sdist) in dist/, then
# the standalone Linux executable dist/session-sidecar-linux-<arch>, frozen by
# PyInstaller from an environment that has the wheel installed (no editable code).
#
# The tools (build, PyInstaller, uv) come from PyPI at the versions in
# scripts/release/tools.lock, into .cache/release/tools. The executable is cached
# in .cache/release/exe-<hash>, the hash taken over every file that goes into it
# (the package's sources, pyproject.toml, the lock, this script, the Python
# version), so an unchanged checkout reuses it.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON="${PYTHON:-python3}"
cache=.cache/release
tools="$cache/tools"
mkdir -p "$cache"

if [ ! -x "$tools/bin/python" ] || ! cmp -s scripts/release/tools.lock "$tools/tools.lock"; then
  rm -rf "$tools"
  "$PYTHON" -m venv "$tools"
  "$tools/bin/python" -m pip install --quiet --upgrade pip
  "$tools/bin/python" -m pip install --quiet -r scripts/release/tools.lock
  cp scripts/release/tools.lock "$tools/tools.lock"
fi

rm -rf dist
"$tools/bin/python" -m build --outdir dist . >"$cache/build.log" 2>&1 || { cat "$cache/build.log" >&2; exit 1; }
wheel="$(ls dist/session_sidecar-*.whl)"
echo "built $(ls dist/*.tar.gz) and $wheel"

arch="$(uname -m)"
exe_name="session-sidecar-linux-$arch"
hash="$(
  {
    find sidecar clients/python/session_sidecar_client -type f \( -name '*.py' -o -name py.typed \) | LC_ALL=C sort | xargs sha256sum
    sha256sum pyproject.toml scripts/release/tools.lock scripts/release/entry.py scripts/release/build.sh
    "$tools/bin/python" -c 'import sys; print(sys.version)'
  } | sha256sum | cut -c1-16
)"
exe_dir="$cache/exe-$hash"
if [ ! -x "$exe_dir/$exe_name" ]; then
  echo "freezing $exe_name with PyInstaller (sources $hash)"
  rm -rf "$cache"/exe-* "$cache/pyinstaller"
  # The wheel and its dependencies into the tools' environment, as a user would install it.
  "$tools/bin/python" -m pip install --quiet --force-reinstall --no-cache-dir "$wheel"
  "$tools/bin/python" -m PyInstaller --noconfirm --clean --onefile --log-level WARN \
    --name "$exe_name" \
    --collect-submodules sidecar --collect-submodules session_sidecar_client \
    --distpath "$cache/pyinstaller/dist" --workpath "$cache/pyinstaller/work" --specpath "$cache/pyinstaller" \
    scripts/release/entry.py >"$cache/pyinstaller.log" 2>&1 || { cat "$cache/pyinstaller.log" >&2; exit 1; }
  mkdir -p "$exe_dir.tmp"
  mv "$cache/pyinstaller/dist/$exe_name" "$exe_dir.tmp/"
  mv "$exe_dir.tmp" "$exe_dir"
  rm -rf "$cache/pyinstaller"
else
  echo "reusing $exe_dir/$exe_name (sources unchanged)"
fi
cp "$exe_dir/$exe_name" "dist/$exe_name"
echo "built dist/$exe_name ($(du -h "dist/$exe_name" | cut -f1))"
