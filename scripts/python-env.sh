#!/usr/bin/env bash
# Creates the Python environment of the interop tests: a venv at .venv/ (git-ignored) holding exactly the pinned
# packages of scripts/requirements-interop.txt (Holistic Trace Analysis and what it imports). Idempotent: a marker
# file in the venv records the hash of the requirements and the interpreter; when it matches, nothing is done and
# nothing touches the network. When it does not (first run, changed pins, broken venv), the venv is made anew.
# Prints one line saying what it did.
#
#   scripts/python-env.sh          # then: .venv/bin/python test/interop/hta_check.py DIR...
#
# Environment: RAWTRACE_VENV overrides the venv folder; PYTHON the interpreter (default python3.11, else python3,
# which must be 3.10 or newer). pip's own settings (PIP_INDEX_URL, proxies) apply as usual.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${RAWTRACE_VENV:-$ROOT/.venv}"
REQ="$ROOT/scripts/requirements-interop.txt"
MARKER="$VENV/.rawtrace-requirements"

PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  if command -v python3.11 >/dev/null 2>&1; then PY=python3.11; else PY=python3; fi
fi
if ! "$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null; then
  echo "python-env: $PY is missing or older than 3.10; set PYTHON to a Python 3.10+ interpreter" >&2
  exit 1
fi
PYVER="$("$PY" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')"
WANT="$( (cat "$REQ"; echo "python $PYVER") | sha256sum | cut -c1-16)"

if [ -x "$VENV/bin/python" ] && [ "$(cat "$MARKER" 2>/dev/null)" = "$WANT" ]; then
  echo "python-env: ${VENV#"$ROOT"/} is up to date (requirements $WANT, Python $PYVER)"
  exit 0
fi

start=$SECONDS
rm -rf "$VENV"
"$PY" -m venv "$VENV"
if ! "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --no-deps -r "$REQ" \
  >"$VENV/pip.log" 2>&1; then
  cat "$VENV/pip.log" >&2
  echo "python-env: pip install failed (log above); ${VENV#"$ROOT"/} left without a marker" >&2
  exit 1
fi
# Everything the checker needs must import: a missing dependency shows here, not in the middle of a test.
"$VENV/bin/python" -c 'import hta.trace_analysis, pandas, numpy, plotly.express, networkx, pydot, yaml, psutil'
echo "$WANT" >"$MARKER"
n=$(grep -cE '^[A-Za-z0-9]' "$REQ")
echo "python-env: created ${VENV#"$ROOT"/} with $n pinned packages (holistictraceanalysis 0.5.0, Python $PYVER) in $((SECONDS - start)) s"
