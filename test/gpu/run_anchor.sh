#!/usr/bin/env bash
# Issue 17's anchor on one machine, in one run: Kineto's own JSON writer (PyTorch's `export_chrome_trace`) against
# `rawtrace convert` on the same program's trace, each on one pinned CPU; then `npm run bench` pinned to one core.
# Run on the lent GPU machine from the repository root (the `device` tool sets $OUT); the tool carries build/,
# dist/ and .gpu/ (made here by `bash test/gpu/run_bench.sh --pack`: node and the tsx loader).
#   A. test/gpu/kineto_anchor.py --iters $ITERS under torch.profiler, CUDA activities only (the same kinds of
#      events rawtrace writes) and CPU + CUDA (what a PyTorch user usually asks for, $CPU_ITERS iterations):
#      export_chrome_trace timed in $KREPEAT (3) profiled runs on CPU $PIN → kineto_cuda.json, kineto_cpu_cuda.json
#   B. the same program, $ITERS iterations, under `rawtrace record`; `rawtrace convert --jobs 1` of its dump under
#      `taskset -c $PIN`, $RUNS (3) fresh processes, wall clock and the CLI's own seconds → rawtrace.json; with
#      OLD_DIST=<folder of another build's dist/node>, that build's CLI alternates with this one
#   C. `npm run bench -- $BENCH_ARGS` under `taskset -c $PIN` → bench.txt
#   D. (not in the default STAGES) the same program at $SMALL_ITERS (2000) iterations under `rawtrace record` and
#      under Kineto → anchor_small.rawtrace, anchor_small_kineto.json.gz: small real fixtures of one program both ways
set -uo pipefail
OUT=${OUT:-out/gpu-anchor}
ITERS=${ITERS:-100000}
CPU_ITERS=${CPU_ITERS:-30000}
PIN=${PIN:-3}
STAGES=${STAGES:-A B C}
mkdir -p "$OUT" bench/results
exec > >(tee "$OUT/log.txt") 2>&1
TMP=$(mktemp -d)
NODE_DIR=$(mktemp -d)
if command -v node >/dev/null; then ln -s "$(command -v node)" "$NODE_DIR/node"; else xz -dc .gpu/node.xz > "$NODE_DIR/node"; chmod +x "$NODE_DIR/node"; fi
export PATH=$NODE_DIR:$PATH
[ -d node_modules/tsx ] || tar xf .gpu/nm.tar
PY=python3
echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), load $(cut -d' ' -f1-3 /proc/loadavg)"
nvidia-smi -L; echo "node $(node --version)"; $PY -c 'import torch; print("torch", torch.__version__, torch.version.cuda)'
has() { [[ " $STAGES " == *" $1 "* ]]; }
ms() { echo $(( $(date +%s%N) / 1000000 )); }

if has A; then
  echo "== A. Kineto: export_chrome_trace, $ITERS iterations, CUDA activities"
  timeout 240 $PY test/gpu/kineto_anchor.py --iters "$ITERS" --kineto cuda --trace "$TMP/k_cuda.json" --pin "$PIN" \
    --repeat "${KREPEAT:-3}" --result "$OUT/kineto_cuda.json"
  rm -f "$TMP/k_cuda.json"
  echo "== A2. Kineto: export_chrome_trace, $CPU_ITERS iterations, CPU + CUDA activities"
  timeout 240 $PY test/gpu/kineto_anchor.py --iters "$CPU_ITERS" --kineto cpu,cuda --trace "$TMP/k_cpu.json" \
    --pin "$PIN" --repeat "${KREPEAT:-3}" --result "$OUT/kineto_cpu_cuda.json"
  rm -f "$TMP/k_cpu.json"
fi

if has B; then
  echo "== B. rawtrace: record, then convert --jobs 1 on CPU $PIN"
  RAWTRACE_ACTIVITIES=default timeout 240 node dist/node/cli.js record --vendor cuda -o "$TMP/rec" -- \
    $PY test/gpu/kineto_anchor.py --iters "$ITERS"
  D=$(ls "$TMP"/rec/*.rawtrace | head -1); ls -la "$D"
  node dist/node/cli.js info "$D" | head -20
  # $OLD_DIST (a folder with another build's cli.js, e.g. carried in .gpu/) runs alternately with this build's
  BUILDS="new"; [ -n "${OLD_DIST:-}" ] && BUILDS="new old"
  for i in $(seq "${RUNS:-3}"); do
    for b in $BUILDS; do
      cli=dist/node/cli.js; [ "$b" = old ] && cli=$OLD_DIST/cli.js
      # A fresh output each time: replacing the last run's file (-f) frees its page cache inside rename(2), 0.1 s
      # per 274 MB on the 2-core VM, which is not the conversion's work.
      rm -f "$TMP/rt.json"
      t0=$(ms)
      taskset -c "$PIN" node "$cli" convert "$D" -o "$TMP/rt.json" -f --jobs 1 --json > "$TMP/sum-$b-$i.json"
      echo "$b $(( $(ms) - t0 ))" >> "$TMP/walls"
    done
  done
  $PY - "$TMP" "$OUT/rawtrace.json" "$D" <<'PY'
import json, os, statistics, subprocess, sys
d, out, dump = sys.argv[1:4]
walls, cli = {}, {}
for line in open(f"{d}/walls"):
    b, ms = line.split()
    walls.setdefault(b, []).append(int(ms) / 1e3)
for b in walls:
    cli[b] = [json.load(open(f"{d}/sum-{b}-{i}.json"))["files"][0]["seconds"] for i in range(1, len(walls[b]) + 1)]
c = json.loads(subprocess.check_output([sys.executable, "test/gpu/kineto_anchor.py", "--count", f"{d}/rt.json"]))
c = c[f"{d}/rt.json"]
r = {"dump_bytes": os.path.getsize(dump), "wall_s": walls, "cli_seconds": cli, **c,
     "events_per_s_wall": {b: c["events"] / statistics.median(w) for b, w in walls.items()},
     "events_per_s_cli": {b: c["events"] / statistics.median(w) for b, w in cli.items()}}
json.dump(r, open(out, "w"), indent=1)
print(json.dumps(r))
PY
fi

if has D; then
  echo "== D. small fixtures of the same program: rawtrace record and Kineto, ${SMALL_ITERS:-2000} iterations"
  RAWTRACE_ACTIVITIES=default node dist/node/cli.js record --vendor cuda -o "$TMP/small" -- \
    $PY test/gpu/kineto_anchor.py --iters "${SMALL_ITERS:-2000}"
  cp "$(ls "$TMP"/small/*.rawtrace | head -1)" "$OUT/anchor_small.rawtrace"
  $PY test/gpu/kineto_anchor.py --iters "${SMALL_ITERS:-2000}" --kineto cuda --trace "$TMP/k_small.json" --repeat 1
  gzip -9c "$TMP/k_small.json" > "$OUT/anchor_small_kineto.json.gz"
  node dist/node/cli.js stats "$OUT/anchor_small.rawtrace" | head -20
fi

if has C; then
  echo "== C. npm run bench on CPU $PIN"
  # shellcheck disable=SC2086
  taskset -c "$PIN" node --import tsx bench/run.ts ${BENCH_ARGS:---sizes 1e6,1.4e7 --tasks floor,chrome,chrome-file,xspace --repeat 3} 2>&1 | tee "$OUT/bench.txt"
fi
ls -la "$OUT"
