#!/usr/bin/env bash
# Runs the pinned Schemathesis CLI with the given arguments. Whatever a test needs, the repository
# installs: the first run makes a Python venv under node_modules/.cache (gitignored) from PyPI.
set -euo pipefail
VERSION=4.32.5
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${SCHEMATHESIS_HOME:-$ROOT/node_modules/.cache/schemathesis-$VERSION}
PY=${SCHEMATHESIS_PYTHON:-python3}

install() {
  rm -rf "$DIR"
  mkdir -p "$DIR"
  if "$PY" -m venv "$DIR/venv" 2>/dev/null; then
    "$DIR/venv/bin/python" -m pip install --quiet --disable-pip-version-check "schemathesis==$VERSION"
    printf '#!/bin/sh\nexec "%s/venv/bin/schemathesis" "$@"\n' "$DIR" >"$DIR/run"
  else
    # Debian's python3 without python3-venv still has pip when python3-pip is installed.
    rm -rf "$DIR/venv"
    "$PY" -m pip install --quiet --disable-pip-version-check --target "$DIR/lib" "schemathesis==$VERSION"
    printf '#!/bin/sh\nPYTHONPATH="%s/lib" exec "%s" -m schemathesis.cli "$@"\n' "$DIR" "$(command -v "$PY")" >"$DIR/run"
  fi
  chmod +x "$DIR/run"
  touch "$DIR/.installed"
}

if [ ! -e "$DIR/.installed" ]; then
  mkdir -p "$(dirname "$DIR")"
  # Two runs at once install once: the second waits for the first's lock.
  exec 9>"$DIR.lock"
  flock 9
  [ -e "$DIR/.installed" ] || install >&2
  flock -u 9
fi
exec "$DIR/run" "$@"
