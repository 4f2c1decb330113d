/**
 * Holistic Trace Analysis reads rawtrace's Chrome JSON of Intel XPU (PTI) dumps: the bundled sample
 * (samples/xpu_train_pti.rawtrace, `_v2` records of PTI 1.2) and the same trace as PTI 0.17 v1 records. Each output
 * goes into its own trace directory and test/interop/hta_check.py loads it with `TraceAnalysis` and runs the GPU
 * kernel breakdown. HTA must find every GPU row of our JSON, and its kernel breakdown must equal, per name and in
 * total, the kernels' own durations read from the dump's records by an independent reader (test/interop/pti_reader.ts),
 * to HTA's integer µs (HTA truncates timestamps and durations to whole µs: at most 2 µs per event).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { kinetoToPti } from "../../src/tools/kineto_to_pti.js";
import { readKinetoTrace } from "../../src/tools/kineto_to_rawtrace.js";
import { htaRankMatching, runHta, type HtaReport, type StreamRow } from "../helpers/interop.js";
import { kernelSums, ptiKernels } from "./pti_reader.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

const dumps: Record<string, Uint8Array> = {};
let ours: Record<string, StreamRow[]>;
let report: HtaReport;
let work = "";

test.before(async () => {
  work = mkdtempSync(join(tmpdir(), "rawtrace-hta-xpu-"));
  dumps["sample-1.2"] = new Uint8Array(readFileSync(join(ROOT, "samples/xpu_train_pti.rawtrace")));
  dumps["pti-0.17"] = kinetoToPti(readKinetoTrace(join(ROOT, "test/fixtures/xpu/kineto_xpu_train.json")), { pti: "0.17" }).bytes;
  ({ report, ours } = await runHta(work, dumps));
});

test.after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

for (const dir of ["sample-1.2", "pti-0.17"]) {
  test(`HTA ${dir}: every GPU row found, kernel breakdown = the kernel records' own durations`, () => {
    const hta = htaRankMatching(report, dir, ours[dir]);
    const own = kernelSums(ptiKernels(dumps[dir]));
    assert.is(own.size, 5);
    const breakdown = new Map(hta.breakdown.map((b) => [b.name, b]));
    let htaTotal = 0;
    let ownTotal = 0;
    let events = 0;
    for (const [name, k] of own) {
      const b = breakdown.get(name);
      assert.ok(b, `${name} missing from HTA's kernel breakdown`);
      assert.ok(Math.abs(b!.sum_us - k.us) <= 2 * k.count, `${name}: HTA sums ${b!.sum_us} µs, the records ${k.us} µs`);
      htaTotal += b!.sum_us;
      ownTotal += k.us;
      events += k.count;
    }
    assert.is(events, 18);
    assert.ok(Math.abs(htaTotal - ownTotal) <= 2 * events, `total: HTA ${htaTotal} µs, records ${ownTotal} µs`);
    console.log(`hta xpu ${dir} (HTA ${report.hta_version}): ${events} kernels, ${own.size} names, breakdown ${htaTotal} µs, records ${ownTotal.toFixed(3)} µs`);
  });
}

test.run();
