#!/usr/bin/env bash
# Installs the pinned npm packages and builds everything the tests and the CLI need: the WebAssembly core
# (release + debug), the Node bundle, and the C writer. Idempotent and quiet when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."

# npm ci only when the lockfile's content changed since the last install (a hash marker, not mtimes: a fresh
# checkout makes the lockfile newer than any install, and npm ci empties node_modules before it refills it).
lock_hash=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -d node_modules/assemblyscript ] || [ "$(cat node_modules/.rawtrace-lock 2>/dev/null)" != "$lock_hash" ]; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
  echo "$lock_hash" > node_modules/.rawtrace-lock
fi
echo "setup: building the WebAssembly core"
npx --no-install asc assembly/index.ts --target release
npx --no-install asc assembly/index.ts --target debug
npx --no-install asc assembly/deflate/index.ts --target deflate  # the gzip encoder (build/deflate.wasm)
npx --no-install asc assembly/keep/index.ts --target keep  # the viewer's kept-bytes codec (build/keep.wasm)
npx --no-install asc assembly/inflate/index.ts --target inflate  # the viewer's gzip reader (build/inflate.wasm)
node scripts/build.mjs
if [ -f collectors/Makefile ]; then
  echo "setup: building C collectors and tools"
  make -s -C collectors common
  if [ "$(uname -m)" = x86_64 ]; then make -s -C collectors hpu; fi  # what `rawtrace record --vendor hpu` preloads
fi
