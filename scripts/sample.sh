#!/usr/bin/env bash
# The main job on the bundled sample: installs and builds everything (scripts/setup.sh), then converts
# samples/h100_torch_train_nvtx.rawtrace — a PyTorch training run recorded on an H100 by rawtrace's CUDA collector
# (test/gpu/run_device.sh), NVTX ranges included — to Chrome Trace JSON in out/sample.json and XSpace under
# out/sample_xprof/, and prints a summary. (samples/alexnet_a100_rank0.rawtrace is a second sample: the GPU side of a
# real 8× A100 Kineto trace as raw CUPTI 13 records.)
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
mkdir -p out
sample=samples/h100_torch_train_nvtx.rawtrace
node dist/node/cli.js info "$sample"
node dist/node/cli.js convert "$sample" -o out/sample.json --force
rm -rf out/sample_xprof
node dist/node/cli.js convert "$sample" --format xspace -o out/sample.xplane.pb --force
node -e '
const t = JSON.parse(require("fs").readFileSync("out/sample.json", "utf8"));
const by = {};
for (const e of t.traceEvents) { const k = e.ph === "X" ? e.cat : e.ph === "s" || e.ph === "f" ? "flow " + e.ph : null; if (k) by[k] = (by[k] || 0) + 1; }
console.log("out/sample.json: " + t.traceEvents.length + " trace events: " + Object.entries(by).map(([k, n]) => k + " " + n).join(", "));
const top = {};
for (const e of t.traceEvents) if (e.cat === "kernel") top[e.name] = (top[e.name] || 0) + e.dur;
console.log("top kernels by GPU time:");
for (const [n, d] of Object.entries(top).sort((a, b) => b[1] - a[1]).slice(0, 5)) console.log("  " + d.toFixed(1).padStart(9) + " us  " + (n.length > 100 ? n.slice(0, 97) + "..." : n));
console.log("open out/sample.json in https://ui.perfetto.dev (Open trace file) or load it with HTA;");
console.log("out/sample.xplane.pb opens in XProf/TensorBoard (rawtrace convert --format xspace writes the plugins/profile layout).");
'
