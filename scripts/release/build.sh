#!/usr/bin/env bash
# The release build: the sdist and the wheel (built from the sdist) in dist/, the
# compiled core's wheel (session-sidecar-core, scripts/core.sh: optional, the sdist
# and wheel run without it), then the standalone Linux executable
# dist/session-sidecar-linux-<arch>/, frozen by PyInstaller from a fresh environment
# that has both wheels installed (no editable code): it runs the compiled core.
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
# The compiled core (issue 42), built with the tools' Python (its cargo build cached in .cache/core-target).
core_wheel="$(CORE_PYTHON="$tools/bin/python" bash scripts/core.sh --no-install 2>"$cache/core.log")" || { cat "$cache/core.log" >&2; exit 1; }
cp "$core_wheel" dist/
core_wheel="dist/$(basename "$core_wheel")"
echo "built $core_wheel"

arch="$(uname -m)"
# PyInstaller's one-folder mode: the executable is the sidecar's own process (a
# one-file build runs it as the child of an unpacking parent, which a SIGKILL
# of the pid the extension holds leaves running, and unpacks ~28 MB at every
# start). The folder ships as dist/session-sidecar-linux-<arch>.tar.gz.
bundle="session-sidecar-linux-$arch"
hash="$(
  {
    find sidecar clients/python/session_sidecar_client -type f \( -name '*.py' -o -name py.typed \) | LC_ALL=C sort | xargs sha256sum
    sha256sum pyproject.toml scripts/release/tools.lock scripts/release/entry.py scripts/release/build.sh
    find core -type f ! -path 'core/target/*' | LC_ALL=C sort | xargs sha256sum
    "$tools/bin/python" -c 'import sys; print(sys.version)'
  } | sha256sum | cut -c1-16
)"
cached="$cache/exe-$hash"
if [ ! -x "$cached/$bundle/session-sidecar" ]; then
  echo "freezing $bundle with PyInstaller (sources $hash)"
  rm -rf "$cache"/exe-* "$cache/pyinstaller"
  # A fresh environment with the wheel and its dependencies, as a user would install
  # it, and PyInstaller: nothing else there to be frozen in by accident.
  freeze="$cache/freeze"
  rm -rf "$freeze"
  "$PYTHON" -m venv "$freeze"
  "$freeze/bin/python" -m pip install --quiet --upgrade pip
  "$freeze/bin/python" -m pip install --quiet "$wheel" "$core_wheel" \
    $(grep -E '^(altgraph|packaging|pyinstaller|pyinstaller-hooks-contrib)==' scripts/release/tools.lock)
  "$freeze/bin/python" -m PyInstaller --noconfirm --clean --onedir --log-level WARN \
    --name session-sidecar \
    --collect-submodules sidecar --collect-submodules session_sidecar_client --collect-data sidecar \
    --hidden-import sidecar_core \
    --distpath "$cache/pyinstaller/dist" --workpath "$cache/pyinstaller/work" --specpath "$cache/pyinstaller" \
    scripts/release/entry.py >"$cache/pyinstaller.log" 2>&1 || { cat "$cache/pyinstaller.log" >&2; exit 1; }
  mkdir -p "$cached.tmp"
  mv "$cache/pyinstaller/dist/session-sidecar" "$cached.tmp/$bundle"
  tar -C "$cached.tmp" -czf "$cached.tmp/$bundle.tar.gz" "$bundle"
  mv "$cached.tmp" "$cached"
  rm -rf "$cache/pyinstaller" "$freeze"
else
  echo "reusing $cached/$bundle (sources unchanged)"
fi
cp -a "$cached/$bundle" "$cached/$bundle.tar.gz" dist/
echo "built dist/$bundle/session-sidecar ($(du -sh "dist/$bundle" | cut -f1) unpacked, $(du -h "dist/$bundle.tar.gz" | cut -f1) as dist/$bundle.tar.gz)"
