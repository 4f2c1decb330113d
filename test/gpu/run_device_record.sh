#!/usr/bin/env bash
# Real-GPU checks of `rawtrace record` and of workloads beyond test/gpu/run_device.sh, run on a GPU machine from
# the repository root (the `device` tool runs it with $OUT set; elsewhere OUT defaults to out/gpu-record).
# Needs: python3 with torch and jax, the built CLI (dist/node) and CUDA collector (build/c/cuda/cu13), and node
# (when the machine has none, .gpu/node.xz — an xz-compressed copy of this machine's node binary — is unpacked).
#   4. `rawtrace record` (vendor auto-detected, NVTX through the collector: no variables set by hand) on the
#      PyTorch loop with NVTX ranges named ProfilerStep#N
#      → torch_profilerstep.rawtrace; the program's exit code passes through record
#   5. a jitted JAX training step under the collector → jax_step.rawtrace, and the same program under JAX's own
#      profiler → jax_step_jaxprofiler.xplane.pb (kernel names and counts to compare with)
#   6. a PyTorch forward pass replayed from a CUDA graph → torch_graph.rawtrace
#   7. what `record` costs: median step time of torch_step.py plain, under `record` (NVTX through the collector, its
#      default) and under `record` with RAWTRACE_ACTIVITIES=default (no NVTX kinds) → record_overhead.json
set -uo pipefail
OUT=${OUT:-out/gpu-record}
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
TMP=$(mktemp -d)
NODE=node
if ! command -v node >/dev/null; then xz -dc .gpu/node.xz > "$TMP/node" && chmod +x "$TMP/node"; NODE=$TMP/node; fi
RT() { "$NODE" dist/node/cli.js "$@"; }
LIB=$PWD/build/c/cuda/cu13/librawtrace_cuda.so
PY=python3
CUPTI=$($PY -c 'import glob,os,nvidia; print(sorted(sum((glob.glob(os.path.join(p,"*","lib","libcupti.so*")) for p in nvidia.__path__),[]))[-1])')
nvidia-smi -L; echo "node $("$NODE" --version), CUPTI $CUPTI"
$PY -c 'import torch, jax; print("torch", torch.__version__, "jax", jax.__version__)'

STAGES=${STAGES:-4 5 6 7}
has() { [[ " $STAGES " == *" $1 "* ]]; }
if has 4; then
echo "libraries seen by record: $(ldconfig -p | grep -E -o 'lib(cuda|cupti|rocprofiler-sdk|amdhip64|pti_view|Synapse)\.so[^ ]*' | sort -u | tr '\n' ' ')"
echo "== 4. rawtrace record (auto) on PyTorch with ProfilerStep#N ranges"
RAWTRACE_LOG=info RT record -o "$TMP/rec" -- $PY test/gpu/torch_step.py --steps 6 --warmup 2 --range-name 'ProfilerStep#{i}'
echo "record exit $?"
ls -la "$TMP/rec"
cp "$(ls "$TMP"/rec/*.rawtrace | head -1)" "$OUT/torch_profilerstep.rawtrace"
RT stats "$OUT/torch_profilerstep.rawtrace" --steps '^ProfilerStep#\d+$' | head -40
RT convert "$OUT/torch_profilerstep.rawtrace" -o "$TMP/ps.json" && grep -o '"name": *"ProfilerStep#[0-9]*"' "$TMP/ps.json" | sort | uniq -c
echo "== 4b. exit code passes through"
RT record --vendor cuda -o "$TMP/rec2" -- $PY -c 'import sys, torch; torch.zeros(1, device="cuda"); sys.exit(3)'
echo "record exit $? (expect 3)"
fi

if has 5; then
echo "== 5. JAX under the collector, then under JAX's profiler"
CUDA_INJECTION64_PATH=$LIB RAWTRACE_LOG=info RAWTRACE_OUTPUT="$OUT/jax_step.rawtrace" $PY test/gpu/jax_step.py --steps 10
$PY test/gpu/jax_step.py --steps 10 --xspace "$TMP/jaxprof"
find "$TMP/jaxprof" -name '*.xplane.pb' -exec ls -la {} \; -exec cp {} "$OUT/jax_step_jaxprofiler.xplane.pb" \;
RT info "$OUT/jax_step.rawtrace" | head -30
RT stats "$OUT/jax_step.rawtrace" | head -30
fi

if has 6; then
echo "== 6. CUDA graph replay"
CUDA_INJECTION64_PATH=$LIB RAWTRACE_LOG=info RAWTRACE_OUTPUT="$OUT/torch_graph.rawtrace" $PY test/gpu/torch_graph.py --replays 10
RT stats "$OUT/torch_graph.rawtrace" | head -30
fi
if has 7; then
echo "== 7. record overhead (median step, 3 runs × 50 steps each, alternating)"
run_mode() { # <mode> <i>
  case $1 in
    plain) $PY test/gpu/torch_step.py --steps 50 --times "$TMP/plain$2.json" >/dev/null ;;
    nvtx) RT record --vendor cuda -o "$TMP/o$2" -- $PY test/gpu/torch_step.py --steps 50 --times "$TMP/nvtx$2.json" >/dev/null 2>&1 ;;
    nonvtx) RAWTRACE_ACTIVITIES=default RT record --vendor cuda -o "$TMP/p$2" -- $PY test/gpu/torch_step.py --steps 50 \
      --times "$TMP/nonvtx$2.json" >/dev/null 2>&1 ;;
  esac
}
# the order rotates run by run, so that no mode always runs first or last
run_mode plain 1; run_mode nvtx 1; run_mode nonvtx 1
run_mode nvtx 2; run_mode nonvtx 2; run_mode plain 2
run_mode nonvtx 3; run_mode plain 3; run_mode nvtx 3
$PY - "$TMP" "$OUT/record_overhead.json" <<'PY'
import json, sys, statistics as st
d, out = sys.argv[1], sys.argv[2]
r = {}
for mode in ("plain", "nvtx", "nonvtx"):
    steps = sum((json.load(open(f"{d}/{mode}{i}.json"))["step_s"] for i in (1, 2, 3)), [])
    r[mode] = {"median_ms": st.median(steps) * 1e3, "n": len(steps)}
for m in ("nvtx", "nonvtx"):
    r[m]["overhead_pct"] = (r[m]["median_ms"] / r["plain"]["median_ms"] - 1) * 100
json.dump(r, open(out, "w"), indent=1)
print(json.dumps(r))
PY
fi
ls -la "$OUT"
