#!/usr/bin/env bash
# `npm run bench` on the lent GPU machine (16 quiet cores, used here only for its CPUs), from the repository root:
# the `device` tool runs it with $OUT set and carries build/, dist/ and .gpu/ (made by `bash test/gpu/run_bench.sh
# --pack` here: .gpu/node.xz, this machine's node binary; .gpu/nm.tar, the tsx loader the bench runs under).
#   BENCH_ARGS="--sizes 1e6 --tasks floor,chrome,xspace --repeat 5" bash test/gpu/run_bench.sh
set -euo pipefail
if [ "${1:-}" = "--pack" ]; then
  mkdir -p .gpu
  [ -f .gpu/node.xz ] || xz -T2 -6 -c "$(readlink -f "$(command -v node)")" > .gpu/node.xz
  tar cf .gpu/nm.tar node_modules/tsx node_modules/esbuild node_modules/@esbuild
  ls -la .gpu
  exit 0
fi
OUT=${OUT:-out/bench-device}
mkdir -p "$OUT" bench/results
NODE_DIR=$(mktemp -d)
if command -v node >/dev/null; then ln -s "$(command -v node)" "$NODE_DIR/node"; else xz -dc .gpu/node.xz > "$NODE_DIR/node"; chmod +x "$NODE_DIR/node"; fi
export PATH=$NODE_DIR:$PATH
[ -d node_modules/tsx ] || tar xf .gpu/nm.tar
echo "$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
# shellcheck disable=SC2086
node --import tsx bench/run.ts ${BENCH_ARGS:---sizes 1e6 --tasks floor,chrome,xspace --repeat 5} 2>&1 | tee "$OUT/bench.txt"
