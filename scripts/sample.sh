#!/usr/bin/env bash
# The main job on the bundled sample: installs and builds everything (scripts/setup.sh), then converts
# samples/h100_torch_train_nvtx.rawtrace — a PyTorch training run recorded on an H100 by rawtrace's CUDA collector
# (test/gpu/run_device.sh), NVTX ranges included — to Chrome Trace JSON in out/sample.json and to XSpace in the log
# directory out/sample_xprof/ (plugins/profile/<run>/<host>.xplane.pb, the layout `xprof --logdir` and
# `tensorboard --logdir` list as a profile run), and prints a summary. (samples/alexnet_a100_rank0.rawtrace is a second
# sample: the GPU side of a real 8× A100 Kineto trace as raw CUPTI 13 records.) Then the ROCm sample,
# samples/mi250_minitoy_rocprof.rawtrace (a real PyTorch step on an AMD MI250, Kineto's trace turned into
# rocprofiler-sdk 1.0 records by src/tools/kineto_to_rocprof.ts --arch gfx90a), to out/sample_rocm.json and
# out/sample_rocm_xprof/. Then the Habana sample, samples/gaudi2_mlp_synapse.rawtrace (Synapse profiler buffers of a
# small MLP trained on one Gaudi2, synthetic and deterministic: src/tools/gaudi2_sample.ts), to out/sample_hpu.json and
# out/sample_hpu_xprof/.
#
#   bash scripts/sample.sh [--no-setup] [out-dir]
# --no-setup skips scripts/setup.sh (dist/ already built); out-dir (default out) receives sample.json and sample_xprof/.
# test/interop/xprof_logdir.test.ts runs it and opens out-dir/sample_xprof with XProf's own server code.
set -euo pipefail
cd "$(dirname "$0")/.."

setup=1
if [ "${1:-}" = "--no-setup" ]; then
  setup=0
  shift
fi
out="${1:-out}"
[ "$setup" = 1 ] && bash scripts/setup.sh
mkdir -p "$out"
sample=samples/h100_torch_train_nvtx.rawtrace
node dist/node/cli.js info "$sample"
node dist/node/cli.js convert "$sample" -o "$out/sample.json" --force
# A fresh log directory: XProf lists every run under plugins/profile, so an old run must not stay next to this one.
rm -rf "$out/sample_xprof" "$out/sample.xplane.pb"
node dist/node/cli.js convert "$sample" --format xspace -o "$out/sample_xprof" --force
# Every other vendor's sample: info, Chrome JSON and an XProf log directory, named out/sample_<tag>*.
convert_sample() { # <sample> <tag>
  node dist/node/cli.js info "$1"
  node dist/node/cli.js convert "$1" -o "$out/sample_$2.json" --force
  rm -rf "$out/sample_$2_xprof"
  node dist/node/cli.js convert "$1" --format xspace -o "$out/sample_$2_xprof" --force
}
convert_sample samples/mi250_minitoy_rocprof.rawtrace rocm
convert_sample samples/xpu_train_pti.rawtrace xpu
convert_sample samples/gaudi2_mlp_synapse.rawtrace hpu
OUT="$out" node -e '
const out = process.env.OUT;
const t = JSON.parse(require("fs").readFileSync(out + "/sample.json", "utf8"));
const by = {};
for (const e of t.traceEvents) { const k = e.ph === "X" ? e.cat : e.ph === "s" || e.ph === "f" ? "flow " + e.ph : null; if (k) by[k] = (by[k] || 0) + 1; }
console.log(out + "/sample.json: " + t.traceEvents.length + " trace events: " + Object.entries(by).map(([k, n]) => k + " " + n).join(", "));
const top = {};
for (const e of t.traceEvents) if (e.cat === "kernel") top[e.name] = (top[e.name] || 0) + e.dur;
console.log("top kernels by GPU time:");
for (const [n, d] of Object.entries(top).sort((a, b) => b[1] - a[1]).slice(0, 5)) console.log("  " + d.toFixed(1).padStart(9) + " us  " + (n.length > 100 ? n.slice(0, 97) + "..." : n));
console.log("open " + out + "/sample.json in https://ui.perfetto.dev (Open trace file) or load it with HTA;");
console.log("XSpace for XProf/TensorBoard: xprof --logdir " + out + "/sample_xprof (or tensorboard --logdir " + out + "/sample_xprof)");
const r = JSON.parse(require("fs").readFileSync(out + "/sample_rocm.json", "utf8"));
const rk = r.traceEvents.filter((e) => e.cat === "kernel");
console.log(out + "/sample_rocm.json (ROCm, MI250): " + rk.length + " kernels, " + r.traceEvents.filter((e) => e.cat === "cuda_runtime").length +
  " HIP calls, " + r.deviceProperties.length + " GPUs; XSpace: " + out + "/sample_rocm_xprof");
const x = JSON.parse(require("fs").readFileSync(out + "/sample_xpu.json", "utf8"));
const n = (c) => x.traceEvents.filter((e) => e.ph === "X" && e.cat === c).length;
console.log(out + "/sample_xpu.json (Intel XPU, PTI): " + n("kernel") + " kernels, " + n("xpu_runtime") + " SYCL/UR calls, " +
  n("xpu_driver") + " Level Zero calls, " + x.deviceProperties.length + " GPUs; XSpace: " + out + "/sample_xpu_xprof");
const h = JSON.parse(require("fs").readFileSync(out + "/sample_hpu.json", "utf8"));
const hc = (c) => h.traceEvents.filter((e) => e.ph === "X" && e.cat === c).length;
console.log(out + "/sample_hpu.json (Habana, Gaudi2): " + hc("kernel") + " TPC/MME kernels, " + hc("gpu_memcpy") + " DMA copies, " +
  hc("gpu_memset") + " memsets, " + hc("hpu_op") + " Synapse host calls, " + h.traceEvents.filter((e) => e.ph === "s").length +
  " recipe launches with arrows; XSpace: " + out + "/sample_hpu_xprof");
'
