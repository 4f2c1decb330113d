/**
 * Holistic Trace Analysis reads rawtrace's Chrome JSON of Intel XPU (PTI) dumps: the bundled sample
 * (samples/xpu_train_pti.rawtrace, `_v2` records of PTI 1.2) and the same trace as PTI 0.17 v1 records. Each output
 * goes into its own trace directory and test/interop/hta_check.py loads it with `TraceAnalysis` and runs the GPU
 * kernel breakdown. HTA must find every GPU row of our JSON, and its kernel breakdown must equal, per name and in
 * total, the kernels' own durations read from the dump's records by an independent reader (test/interop/pti_reader.ts),
 * to HTA's integer µs (HTA truncates timestamps and durations to whole µs: at most 2 µs per event); its split by
 * kernel type must put the kernels under COMPUTATION and the copy and fill records under MEMORY.
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
import { kernelSums, ptiKernels, ptiTransfers } from "./pti_reader.js";

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

/**
 * Exclusive time (µs) of kernels alone ("COMPUTATION"), copies and fills alone ("MEMORY") and both at once
 * ("COMPUTATION overlapping MEMORY"), types with no time left out.
 */
function typeSplitUs(kernels: Array<{ start: bigint; end: bigint }>, moves: Array<{ start: bigint; end: bigint }>): Map<string, number> {
  const edges: Array<[bigint, number]> = [];
  for (const k of kernels) edges.push([k.start, 1], [k.end, -1]);
  for (const m of moves) edges.push([m.start, 1 << 16], [m.end, -(1 << 16)]);
  edges.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const out = new Map<string, number>();
  let open = 0;
  let at = 0n;
  for (const [t, d] of edges) {
    const k = (open & 0xffff) > 0;
    const m = open >> 16 > 0;
    const type = k && m ? "COMPUTATION overlapping MEMORY" : k ? "COMPUTATION" : m ? "MEMORY" : "";
    if (type && t > at) out.set(type, (out.get(type) ?? 0) + Number(t - at) / 1000);
    at = t;
    open += d;
  }
  return out;
}

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
    // HTA's split by kernel type (hta/analyzers/breakdown_analysis.py _get_gpu_kernel_type_time: each type's rows
    // merged into a union, time where two types overlap a type of its own; a row's type by its name, Memcpy…/Memset…
    // MEMORY): the kernel records are COMPUTATION, the copy, peer copy and fill records MEMORY.
    const moves = ptiTransfers(dumps[dir]);
    assert.ok(moves.length > 0 && moves.some((m) => m.kind === "fill"), "the trace has copies and fills");
    const kernels = ptiKernels(dumps[dir]);
    const want = typeSplitUs(kernels, moves);
    const types = new Map(report.traces[dir].kernel_types.map((t) => [t.kernel_type, t.sum_us]));
    assert.equal([...types.keys()].sort(), [...want.keys()].sort(), "HTA's kernel types");
    for (const [type, us] of want) {
      assert.ok(Math.abs(types.get(type)! - us) <= 2 * (kernels.length + moves.length), `${type}: HTA ${types.get(type)} µs, records ${us.toFixed(3)} µs`);
    }
    console.log(`hta xpu ${dir} (HTA ${report.hta_version}): ${events} kernels, ${own.size} names, breakdown ${htaTotal} µs, records ${ownTotal.toFixed(3)} µs`);
  });
}

test.run();
