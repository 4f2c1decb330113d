#!/usr/bin/env bash
# Real-GPU check of the CUDA collector, run on a GPU machine from the repository root (the `device` tool runs it
# with $OUT set; elsewhere OUT defaults to out/gpu). Needs: nvcc, python3 with torch, and
# build/c/cuda/cu13/librawtrace_cuda.so built for that machine's architecture.
#   1. test/gpu/cuda_sample.cu under the collector with NVTX → cuda_sample.rawtrace
#   2. test/gpu/torch_step.py: plain, under the collector (the same 50 steps, toggled by SIGUSR2), and under
#      torch.profiler (Kineto) → torch.rawtrace, kineto.json.gz, step times in times.json
#   3. the same training with NVTX ranges recorded → torch_nvtx.rawtrace
set -uo pipefail
OUT=${OUT:-out/gpu}
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
LIB=$PWD/build/c/cuda/cu13/librawtrace_cuda.so
STEPS=${STEPS:-50}
nvidia-smi -L
nvcc --version | tail -2
PY=python3
CUPTI=$($PY -c 'import glob,os,nvidia; print(sorted(sum((glob.glob(os.path.join(p,"*","lib","libcupti.so*")) for p in nvidia.__path__),[]))[-1])')
echo "torch $($PY -c 'import torch; print(torch.__version__, torch.version.cuda)'), CUPTI $CUPTI"
TMP=$(mktemp -d)

echo "== 1. CUDA sample"
nvcc -O2 -arch=sm_90 -o "$TMP/cuda_sample" test/gpu/cuda_sample.cu -ldl || exit 1
CUDA_INJECTION64_PATH=$LIB NVTX_INJECTION64_PATH=$CUPTI RAWTRACE_ACTIVITIES=default,nvtx RAWTRACE_LOG=info \
  RAWTRACE_OUTPUT="$OUT/cuda_sample.rawtrace" "$TMP/cuda_sample" 20

echo "== 2. PyTorch: plain, rawtrace, Kineto (overhead and kernels)"
for i in 1 2; do
  $PY test/gpu/torch_step.py --steps $STEPS --times "$TMP/base$i.json"
  CUDA_INJECTION64_PATH=$LIB RAWTRACE_SIGNAL=USR2 RAWTRACE_LOG=info RAWTRACE_OUTPUT="$TMP/torch$i.rawtrace" \
    $PY test/gpu/torch_step.py --steps $STEPS --toggle-signal USR2 --times "$TMP/rawtrace$i.json"
  $PY test/gpu/torch_step.py --steps $STEPS --kineto "$TMP/kineto$i.json" --times "$TMP/kineto$i.json.times"
done
cp "$TMP/torch1.rawtrace" "$OUT/torch.rawtrace"
gzip -c "$TMP/kineto1.json" > "$OUT/kineto.json.gz"
$PY - "$TMP" "$OUT/times.json" <<'PY'
import json, sys, statistics as st
d, out = sys.argv[1], sys.argv[2]
r = {}
for mode, suffix in (("plain", "base{}.json"), ("rawtrace", "rawtrace{}.json"), ("kineto", "kineto{}.json.times")):
    steps = sum((json.load(open(f"{d}/" + suffix.format(i)))["step_s"] for i in (1, 2)), [])
    r[mode] = {"median_ms": st.median(steps) * 1e3, "mean_ms": st.mean(steps) * 1e3, "n": len(steps)}
for m in ("rawtrace", "kineto"):
    r[m]["overhead_pct"] = (r[m]["median_ms"] / r["plain"]["median_ms"] - 1) * 100
json.dump(r, open(out, "w"), indent=1)
print(json.dumps(r))
PY

echo "== 3. PyTorch with NVTX ranges"
CUDA_INJECTION64_PATH=$LIB NVTX_INJECTION64_PATH=$CUPTI RAWTRACE_ACTIVITIES=default,nvtx RAWTRACE_LOG=info \
  RAWTRACE_OUTPUT="$OUT/torch_nvtx.rawtrace" $PY test/gpu/torch_step.py --steps 5 --warmup 2
ls -la "$OUT"
