/**
 * Holistic Trace Analysis (HTA, PyTorch's trace analysis library) reads rawtrace's Chrome JSON: real Kineto traces
 * go through the round trip (src/tools/kineto_to_rawtrace.ts → `.rawtrace` → the engine), the output is put in a
 * trace directory and test/interop/hta_check.py loads it with `TraceAnalysis` and runs the GPU kernel breakdown.
 * HTA must find exactly the GPU rows of our JSON: the same names, categories and counts (HTA counts every event
 * with a stream as a kernel, so memcpys, memsets and syncs on a stream are in its list too), and its breakdown must
 * list every kernel, memcpy and memset with the same total time.
 *
 * The Python side lives in .venv/, made (once; later runs take a fraction of a second) by scripts/python-env.sh
 * with the pins of scripts/requirements-interop.txt; the first run needs PyPI.
 */
import { test } from "uvu";
import { untar } from "../helpers/dlrm.js";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { kinetoToRawtrace, parseKinetoJson } from "../../src/tools/kineto_to_rawtrace.js";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { gpuStreamRows } from "../helpers/interop.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DATA = join(ROOT, "../shared/data/real/kineto-cuda");
const PYTHON = join(ROOT, ".venv/bin/python");

interface HtaKernel { name: string; cat: string; count: number; sum_us: number }
interface HtaRank { kernels: HtaKernel[]; breakdown: Array<{ name: string; kernel_type: string; sum_us: number }> }
interface HtaReport { hta_version: string; traces: Record<string, { ranks: Record<string, HtaRank> }> }


/** Kineto JSON → `.rawtrace` (CUDA 13 layout) → rawtrace's Chrome JSON text. */
async function viaRawtrace(kinetoText: string): Promise<string> {
  const bytes = kinetoToRawtrace(parseKinetoJson(kinetoText), { layout: "cuda13" });
  const parts: Buffer[] = [];
  await (await createEngine()).convert(memorySource(bytes, "hta.rawtrace"), (b) => parts.push(Buffer.from(b)));
  return Buffer.concat(parts).toString("utf8");
}


/** HTA's view of one rank must equal our JSON's GPU rows, and its breakdown must cover every kernel/memcpy/memset. */
function assertSameKernels(label: string, hta: HtaRank, ours: HtaKernel[]): void {
  const shape = (k: HtaKernel[]) => k.map((r) => `${r.cat} ×${r.count} ${r.name}`).sort();
  assert.equal(shape(hta.kernels), shape(ours), `${label}: HTA's GPU kernels differ from rawtrace's`);
  const breakdown = new Map(hta.breakdown.map((b) => [b.name, b]));
  for (const r of ours) {
    if (r.cat !== "kernel" && r.cat !== "gpu_memcpy" && r.cat !== "gpu_memset") continue;
    const b = breakdown.get(r.name);
    assert.ok(b, `${label}: ${r.name} missing from HTA's kernel breakdown`);
    // HTA rounds ns-resolution times down to µs: allow 1 µs per event.
    assert.ok(Math.abs(b!.sum_us - r.sum_us) <= r.count, `${label}: ${r.name}: HTA sums ${b!.sum_us} µs, ours ${r.sum_us} µs`);
  }
  console.log(`hta ${label}: ${hta.kernels.length} GPU row names, ${hta.kernels.reduce((n, k) => n + k.count, 0)} rows, ` +
    `${hta.breakdown.length} names in the kernel breakdown: same as rawtrace's JSON`);
}

let report: HtaReport;
const ours: Record<string, Record<string, HtaKernel[]>> = {}; // dir → rank → rows
let work = "";

test.before(async () => {
  const env = execFileSync("bash", [join(ROOT, "scripts/python-env.sh")], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  console.log(env.trim());
  work = mkdtempSync(join(tmpdir(), "rawtrace-hta-"));
  const dirs: Record<string, Array<[number, string]>> = {
    alexnet: [[0, gunzipSync(readFileSync(join(DATA, "alexnet_a100_rank0.json.gz"))).toString("utf8")]],
    "dlrm-rank3": [],
    "dlrm-8ranks": [],
  };
  for (const [path, bytes] of untar(readFileSync(join(DATA, "dlrm_v100_8ranks.tar.gz")))) {
    const rank = Number(/worker(\d+)_/.exec(path)?.[1]);
    if (!path.endsWith(".json") || Number.isNaN(rank)) continue;
    dirs["dlrm-8ranks"].push([rank, bytes.toString("utf8")]);
    if (rank === 3) dirs["dlrm-rank3"].push([rank, bytes.toString("utf8")]);
  }
  assert.is(dirs["dlrm-8ranks"].length, 8);
  for (const [dir, traces] of Object.entries(dirs)) {
    mkdirSync(join(work, dir));
    ours[dir] = {};
    for (const [rank, text] of traces) {
      const json = await viaRawtrace(text);
      writeFileSync(join(work, dir, `rank-${rank}.json`), json);
      ours[dir][rank] = gpuStreamRows(json);
    }
  }
  const out = execFileSync(PYTHON, [join(ROOT, "test/interop/hta_check.py"), ...Object.keys(dirs).map((d) => join(work, d))], {
    encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 << 20,
  });
  const raw = JSON.parse(out) as HtaReport;
  report = { hta_version: raw.hta_version, traces: {} };
  for (const [d, t] of Object.entries(raw.traces)) report.traces[d.slice(work.length + 1)] = t;
  console.log(`HTA ${report.hta_version}`);
});

test.after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

test("HTA 0.5.0 is what the checker ran", () => {
  assert.is(report.hta_version, "0.5.0");
});

test("HTA finds every GPU kernel, memcpy, memset and sync of rawtrace's alexnet output", () => {
  const ranks = Object.values(report.traces.alexnet.ranks);
  assert.is(ranks.length, 1);
  assertSameKernels("alexnet", ranks[0], ours.alexnet[0]);
});

test("HTA finds every GPU kernel, memcpy and memset of rawtrace's dlrm rank 3 output", () => {
  const ranks = Object.values(report.traces["dlrm-rank3"].ranks);
  assert.is(ranks.length, 1);
  assertSameKernels("dlrm rank 3", ranks[0], ours["dlrm-rank3"][3]);
});

// HTA 0.5.0 finds a file's rank with the regex /"rank":\s+(\d+)/ on its lines (hta/common/trace_file.py): it needs
// the blank that Kineto writes after the colon; without it every file becomes rank 0 and all but one are dropped.
test("HTA reads each rank of an 8-rank rawtrace directory from distributedInfo", () => {
  const found = Object.keys(report.traces["dlrm-8ranks"].ranks).sort();
  assert.equal(found, ["0", "1", "2", "3", "4", "5", "6", "7"], "HTA must see all 8 ranks (distributedInfo.rank)");
  for (const r of found) assertSameKernels(`dlrm 8 ranks, rank ${r}`, report.traces["dlrm-8ranks"].ranks[r], ours["dlrm-8ranks"][Number(r)]);
});

test.run();
