/**
 * Holistic Trace Analysis reads rawtrace's Chrome JSON of ROCm dumps: the bundled sample
 * (samples/mi250_minitoy_rocprof.rawtrace, the real MI250 Kineto trace as rocprofiler-sdk 1.0 records) and dumps of
 * the ROCm collector under the rocprofiler-sdk test double in the SDK 0.5 and 1.0 layouts. Each output goes into its
 * own trace directory and test/interop/hta_check.py loads it with `TraceAnalysis` and runs the GPU kernel breakdown.
 * HTA must find every GPU row of our JSON (same names, categories and counts); its kernel breakdown must equal the
 * kernels' own sum as HTA parsed them, per name and in total, and the kernels' durations in our JSON to HTA's integer
 * µs (HTA truncates timestamps and durations to whole µs: at most 2 µs per event). For the sample, HTA's breakdown
 * must also be the one it computes from the original Kineto trace.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { gunzipSync } from "node:zlib";
import { fakeRocmDump } from "../helpers/rocm_fake.js";
import { gpuStreamRows } from "../helpers/interop.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PYTHON = join(ROOT, ".venv/bin/python");

interface Row { name: string; cat: string; count: number; sum_us: number }
interface HtaRank { kernels: Row[]; breakdown: Array<{ name: string; kernel_type: string; sum_us: number }> }
interface HtaReport { hta_version: string; traces: Record<string, { ranks: Record<string, HtaRank> }> }


const ours: Record<string, Row[]> = {};
let report: HtaReport;
let work = "";

test.before(async () => {
  execFileSync("bash", [join(ROOT, "scripts/python-env.sh")], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  work = mkdtempSync(join(tmpdir(), "rawtrace-hta-rocm-"));
  const dumps: Record<string, Uint8Array> = {
    sample: new Uint8Array(readFileSync(join(ROOT, "samples/mi250_minitoy_rocprof.rawtrace"))),
    "fake-0.5": fakeRocmDump("0.5", 12).dump,
    "fake-1.0": fakeRocmDump("1.0", 12).dump,
  };
  const engine = await createEngine();
  for (const [dir, bytes] of Object.entries(dumps)) {
    const parts: Buffer[] = [];
    await engine.convert(memorySource(bytes, `${dir}.rawtrace`), (b) => parts.push(Buffer.from(b)));
    const json = Buffer.concat(parts).toString("utf8");
    mkdirSync(join(work, dir));
    writeFileSync(join(work, dir, "rank-0.json"), json);
    ours[dir] = gpuStreamRows(json);
  }
  mkdirSync(join(work, "original"));
  writeFileSync(join(work, "original", "rank-0.json"),
    gunzipSync(readFileSync(join(ROOT, "../shared/data/real/kineto-rocm/minitoy_mi250.json.gz"))));
  const out = execFileSync(PYTHON, [join(ROOT, "test/interop/hta_check.py"), ...[...Object.keys(dumps), "original"].map((d) => join(work, d))], {
    encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 << 20,
  });
  const raw = JSON.parse(out) as HtaReport;
  report = { hta_version: raw.hta_version, traces: {} };
  for (const [d, t] of Object.entries(raw.traces)) report.traces[d.slice(work.length + 1)] = t;
});

test.after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

for (const dir of ["sample", "fake-0.5", "fake-1.0"]) {
  test(`HTA ${dir}: every GPU row found, kernel breakdown = the kernels' own sum`, () => {
    const ranks = Object.values(report.traces[dir].ranks);
    assert.is(ranks.length, 1);
    const hta = ranks[0];
    const shape = (k: Row[]) => k.map((r) => `${r.cat} ×${r.count} ${r.name}`).sort();
    assert.equal(shape(hta.kernels), shape(ours[dir]), "HTA's GPU rows differ from rawtrace's");
    const kernels = ours[dir].filter((r) => r.cat === "kernel");
    assert.ok(kernels.length > 0);
    const breakdown = new Map(hta.breakdown.map((b) => [b.name, b]));
    let htaTotal = 0;
    let ownTotal = 0;
    let events = 0;
    for (const r of kernels) {
      const b = breakdown.get(r.name);
      assert.ok(b, `${r.name} missing from HTA's kernel breakdown`);
      const parsed = hta.kernels.find((k) => k.name === r.name && k.cat === "kernel")!;
      assert.is(b!.sum_us, parsed.sum_us, `${r.name}: breakdown ${b!.sum_us} µs, HTA's kernel rows ${parsed.sum_us} µs`);
      assert.ok(Math.abs(b!.sum_us - r.sum_us) <= 2 * r.count, `${r.name}: HTA sums ${b!.sum_us} µs, the kernels ${r.sum_us} µs`);
      htaTotal += b!.sum_us;
      ownTotal += r.sum_us;
      events += r.count;
    }
    assert.ok(Math.abs(htaTotal - ownTotal) <= 2 * events, `total: HTA ${htaTotal} µs, kernels ${ownTotal} µs`);
    if (dir === "sample") {
      const orig = Object.values(report.traces.original.ranks)[0];
      const byName = (rows: HtaRank["breakdown"]) => rows.map((x) => `${x.kernel_type} ${x.sum_us} ${x.name}`).sort();
      assert.equal(byName(hta.breakdown), byName(orig.breakdown), "HTA's breakdown of the sample = of the original Kineto trace");
    }
    console.log(`hta rocm ${dir}: ${events} kernels, ${kernels.length} names, breakdown ${htaTotal} µs, kernels ${ownTotal.toFixed(3)} µs`);
  });
}

test.run();
