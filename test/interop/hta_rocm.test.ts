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
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { fakeRocmDump } from "../helpers/rocm_fake.js";
import { htaRankMatching, runHta, type HtaRank, type HtaReport, type StreamRow } from "../helpers/interop.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

let ours: Record<string, StreamRow[]>;
let report: HtaReport;
let work = "";

test.before(async () => {
  work = mkdtempSync(join(tmpdir(), "rawtrace-hta-rocm-"));
  const dumps: Record<string, Uint8Array> = {
    sample: new Uint8Array(readFileSync(join(ROOT, "samples/mi250_minitoy_rocprof.rawtrace"))),
    "fake-0.5": fakeRocmDump("0.5", 12).dump,
    "fake-1.0": fakeRocmDump("1.0", 12).dump,
  };
  const original = gunzipSync(readFileSync(join(ROOT, "../shared/data/real/kineto-rocm/minitoy_mi250.json.gz")));
  ({ report, ours } = await runHta(work, dumps, { original }));
});

test.after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

for (const dir of ["sample", "fake-0.5", "fake-1.0"]) {
  test(`HTA ${dir}: every GPU row found, kernel breakdown = the kernels' own sum`, () => {
    const hta = htaRankMatching(report, dir, ours[dir]);
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
