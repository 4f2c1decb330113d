#!/usr/bin/env bash
# Installs the pinned npm packages and builds everything the tests and the CLI need: the WebAssembly core
# (release + debug), the Node bundle, and the C writer. Idempotent and quiet when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -d node_modules/assemblyscript ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
fi
echo "setup: building the WebAssembly core"
npx --no-install asc assembly/index.ts --target release
npx --no-install asc assembly/index.ts --target debug
node scripts/build.mjs
if [ -f collectors/Makefile ]; then
  echo "setup: building C collectors and tools"
  make -s -C collectors common
fi
