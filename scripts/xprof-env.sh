#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Creates (or refreshes, when scripts/requirements-xprof.txt changed) the Python virtual environment .venv-xprof/
# with the pinned XProf used by test/interop/xprof.test.ts, and prints its python on stdout. Progress goes to stderr.
# Needs Python 3.10-3.13 with the venv module (PYTHON=... picks one); the venv is never committed.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv-xprof
req=scripts/requirements-xprof.txt
if [ -x "$venv/bin/python" ] && cmp -s "$req" "$venv/.requirements-xprof.txt"; then
  echo "$PWD/$venv/bin/python"
  exit 0
fi

py="${PYTHON:-}"
if [ -z "$py" ]; then
  for c in python3.11 python3.12 python3.10 python3.13 python3; do
    if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import sys, venv; sys.exit(not ((3, 10) <= sys.version_info[:2] <= (3, 13)))' 2>/dev/null; then
      py="$c"
      break
    fi
  done
fi
if [ -z "$py" ]; then
  echo "xprof-env: no Python 3.10-3.13 with venv found (set PYTHON=...)" >&2
  exit 1
fi

echo "xprof-env: creating $venv with $("$py" --version 2>&1) and the pinned XProf (one-time, about a minute)" >&2
rm -rf "$venv"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$req" >&2
"$venv/bin/python" -c 'import xprof.convert.raw_to_tool_data' >&2
cp "$req" "$venv/.requirements-xprof.txt"
echo "$PWD/$venv/bin/python"
