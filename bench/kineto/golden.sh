#!/usr/bin/env bash
# Writes the golden Kineto JSON of test/interop/kineto_golden.test.ts: for each real H100 dump named, what Kineto's
# ChromeTraceLogger writes for its CUPTI records (build/kineto/kineto_writer, made by bench/kineto/build.sh), with
# Kineto's time base set to the one rawtrace uses for the dump (bench/kineto/fixed_now.c: Kineto takes it from the wall
# clock when it runs and clamps earlier times to 0), gzipped into test/fixtures/kineto/<name>.kineto.json.gz.
#   bash bench/kineto/golden.sh [cuda_sample torch_graph torch_nvtx jax_step]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
W="$ROOT/build/kineto/kineto_writer"
[ -x "$W" ] || { echo "golden.sh: $W missing (bash bench/kineto/build.sh)" >&2; exit 2; }
gcc -O2 -shared -fPIC -o "$ROOT/build/kineto/fixed_now.so" "$ROOT/bench/kineto/fixed_now.c"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$ROOT/test/fixtures/kineto"
for n in "${@:-cuda_sample torch_graph torch_nvtx jax_step}"; do
  for name in $n; do
    dump="$ROOT/test/fixtures/real/h100/$name.rawtrace"
    node "$ROOT/dist/node/cli.js" convert "$dump" -o "$TMP/r.json" --force >/dev/null
    base=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).baseTimeNanoseconds)' "$TMP/r.json")
    KDIFF_NOW_NS=$base LD_PRELOAD="$ROOT/build/kineto/fixed_now.so" "$W" "$dump" "$TMP/$name.kineto.json" >/dev/null 2>&1
    gzip -9n < "$TMP/$name.kineto.json" > "$ROOT/test/fixtures/kineto/$name.kineto.json.gz"
    echo "test/fixtures/kineto/$name.kineto.json.gz"
  done
done
