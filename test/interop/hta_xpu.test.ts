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
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { kinetoToPti } from "../../src/tools/kineto_to_pti.js";
import { readKinetoTrace } from "../../src/tools/kineto_to_rawtrace.js";
import { gpuStreamRows } from "../helpers/interop.js";
import { kernelSums, ptiKernels } from "./pti_reader.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PYTHON = join(ROOT, ".venv/bin/python");

interface Row { name: string; cat: string; count: number; sum_us: number }
interface HtaRank { kernels: Row[]; breakdown: Array<{ name: string; kernel_type: string; sum_us: number }> }
interface HtaReport { hta_version: string; traces: Record<string, { ranks: Record<string, HtaRank> }> }

const dumps: Record<string, Uint8Array> = {};
const ours: Record<string, Row[]> = {};
let report: HtaReport;
let work = "";

test.before(async () => {
  execFileSync("bash", [join(ROOT, "scripts/python-env.sh")], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  work = mkdtempSync(join(tmpdir(), "rawtrace-hta-xpu-"));
  dumps["sample-1.2"] = new Uint8Array(readFileSync(join(ROOT, "samples/xpu_train_pti.rawtrace")));
  dumps["pti-0.17"] = kinetoToPti(readKinetoTrace(join(ROOT, "test/fixtures/xpu/kineto_xpu_train.json")), { pti: "0.17" }).bytes;
  const engine = await createEngine();
  for (const [dir, bytes] of Object.entries(dumps)) {
    const parts: Buffer[] = [];
    await engine.convert(memorySource(bytes, `${dir}.rawtrace`), (b) => parts.push(Buffer.from(b)));
    const json = Buffer.concat(parts).toString("utf8");
    mkdirSync(join(work, dir));
    writeFileSync(join(work, dir, "rank-0.json"), json);
    ours[dir] = gpuStreamRows(json);
  }
  const out = execFileSync(PYTHON, [join(ROOT, "test/interop/hta_check.py"), ...Object.keys(dumps).map((d) => join(work, d))], {
    encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 << 20,
  });
  const raw = JSON.parse(out) as HtaReport;
  report = { hta_version: raw.hta_version, traces: {} };
  for (const [d, t] of Object.entries(raw.traces)) report.traces[d.slice(work.length + 1)] = t;
});

test.after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

for (const dir of ["sample-1.2", "pti-0.17"]) {
  test(`HTA ${dir}: every GPU row found, kernel breakdown = the kernel records' own durations`, () => {
    const ranks = Object.values(report.traces[dir].ranks);
    assert.is(ranks.length, 1);
    const hta = ranks[0];
    const shape = (k: Row[]) => k.map((r) => `${r.cat} ×${r.count} ${r.name}`).sort();
    assert.equal(shape(hta.kernels), shape(ours[dir]), "HTA's GPU rows differ from rawtrace's");
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
