/**
 * Per-step figures against HTA's (docs/analysis.md "Per-step statistics and HTA"): HTA 0.5.0's own temporal
 * breakdown (BreakdownAnalysis.get_temporal_breakdown, run by test/interop/fidelity_check.py hta-steps on the GPU
 * rows of each iteration) on our Chrome JSON of the bundled H100 sample, against
 *  1. the same figures computed from the raw records with HTA's rules (test/interop/fidelity_records.ts and
 *     hta_rules.ts, independent of our emitters): a GPU row belongs to the iteration whose ProfilerStep range
 *     contains its launch call's start, times in whole µs (start rounded up, end down) — exact;
 *  2. `rawtrace stats --steps` (src/core/step_stats.ts): where both compute the same thing — the step holds the same
 *     device ops under both rules, none of them a synchronization — step time = HTA's kernel time and idle = HTA's
 *     idle time up to HTA's µs rounding (≤ 2 µs on the span, ≤ 2 µs per row on busy time). Where they differ, the
 *     difference is the ops launched between two steps, which HTA leaves out of every iteration (counted here).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { memorySource, stepPattern } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { computeStepStats, unionNs } from "../../src/core/step_stats.js";
import { readDump, demangleAll, stepsOf, type DeviceOp } from "./fidelity_records.js";
import { busy, htaLabel, htaRow, merged } from "./hta_rules.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const FILE = "h100_torch_train_nvtx.rawtrace";
const STEPS = "^train_step$";

interface HtaStep { iteration: number; rows: number; kernel_us: number; idle_us: number; compute_us: number; non_compute_us: number }

let work = "";
test.before(() => {
  execFileSync("bash", [join(ROOT, "scripts/python-env.sh")], { stdio: ["ignore", "ignore", "inherit"] });
  work = mkdtempSync(join(tmpdir(), "rawtrace-steps-hta-"));
});
test.after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

test(`${FILE}: HTA's temporal breakdown per iteration = the records' under HTA's rules; = stats --steps where both compute the same`, async () => {
  const bytes = new Uint8Array(readFileSync(join(ROOT, "samples", FILE)));
  const parts: Buffer[] = [];
  const engine = await createEngine();
  await engine.convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { steps: STEPS });
  const json = Buffer.concat(parts);
  const base = BigInt(/"baseTimeNanoseconds":\s*(\d+)/.exec(json.subarray(0, 65536).toString())![1]);
  mkdirSync(join(work, "t"));
  writeFileSync(join(work, "t", "trace.json"), json);
  const hta = (JSON.parse(execFileSync(join(ROOT, ".venv/bin/python"), [join(ROOT, "test/interop/fidelity_check.py"), "hta-steps", join(work, "t")],
    { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 << 20 })) as { steps: HtaStep[] }).steps;

  // 1. HTA's rules on the records.
  const dump = readDump(bytes);
  const steps = stepsOf(dump, stepPattern(STEPS));
  const names = demangleAll(dump.ops.filter((o) => o.kind === "kernel").map((o) => o.name));
  const us = (ns: bigint) => Number(ns - base) / 1000;
  const apiTs = new Map(dump.apis.map((a) => [a.correlation, Math.ceil(us(a.start))]));
  const htaIter = (op: DeviceOp) => {
    const t = apiTs.get(op.correlation);
    let it = -1;
    if (t !== undefined) for (const s of steps) if (Math.ceil(us(s.range.start)) <= t && t < Math.floor(us(s.range.end))) it = s.num;
    return it;
  };
  const gpu = dump.ops.filter((op) => !(op.kind === "sync" && op.stream === 0xffffffff));
  const want = steps.map((s) => {
    const rows = gpu.filter((op) => htaIter(op) === s.num).map((op) => htaRow(op, base, htaLabel(op, names)));
    const all = merged(rows);
    const kernel = all[all.length - 1][1] - all[0][0];
    const idle = kernel - busy(all);
    const compute = busy(merged(rows.filter((r) => r.type === "COMPUTATION")));
    return { iteration: s.num, rows: rows.length, kernel_us: kernel, idle_us: idle, compute_us: compute, non_compute_us: kernel - compute - idle };
  });
  assert.equal(hta, want, "HTA's per-iteration temporal breakdown");

  // 2. Ours where both compute the same thing.
  const ours = await computeStepStats(engine, memorySource(bytes), { steps: STEPS });
  const report: string[] = [];
  let same = 0;
  for (const [i, s] of steps.entries()) {
    const o = ours[i];
    const h = hta[i];
    const htaOps = gpu.filter((op) => htaIter(op) === s.num);
    const between = s.ops.filter((op) => !htaOps.includes(op)).length;
    const identical = between === 0 && htaOps.every((op) => s.ops.includes(op)) && !s.ops.some((op) => op.kind === "sync");
    const oursIdleUs = (o.spanNs * o.idlePct) / 100 / 1000;
    report.push(`#${s.num}: step ${(o.spanNs / 1000).toFixed(3)} µs vs HTA ${h.kernel_us} µs, idle ${oursIdleUs.toFixed(3)} vs ${h.idle_us} µs` +
      `, ${s.ops.length} vs ${h.rows} ops (${between} launched between steps)`);
    if (!identical) {
      // The difference is exactly the ops launched between steps: without them our rule's step is HTA's iteration.
      const kept = s.ops.filter((op) => htaOps.includes(op));
      assert.is(kept.length + between, s.ops.length);
      assert.is(kept.length, h.rows, `step ${s.num}: every op of HTA's iteration is in ours`);
      const a = kept.reduce((m, op) => (op.start < m ? op.start : m), kept[0].start);
      const b = kept.reduce((m, op) => (op.end > m ? op.end : m), kept[0].end);
      assert.ok(Number(b - a) / 1000 - h.kernel_us >= 0 && Number(b - a) / 1000 - h.kernel_us <= 2, `step ${s.num} without the ops between steps`);
      const what = s.ops.filter((op) => !htaOps.includes(op)).map((op) => `${op.kind} ${htaLabel(op, names).slice(0, 40)}`);
      report[report.length - 1] += `: ${what.join(", ")}; without it ${(Number(b - a) / 1000).toFixed(3)} µs`;
      continue;
    }
    same++;
    assert.ok(o.spanNs / 1000 - h.kernel_us >= 0 && o.spanNs / 1000 - h.kernel_us <= 2, `step ${s.num}: span ${o.spanNs} ns, HTA ${h.kernel_us} µs`);
    const busyUs = unionNs(s.ops.map((op): [number, number] => [Number(op.start - base), Number(op.end - base)])) / 1000;
    assert.ok(Math.abs(busyUs - (h.kernel_us - h.idle_us)) <= 2 * h.rows, `step ${s.num}: busy ${busyUs} µs, HTA ${h.kernel_us - h.idle_us} µs`);
    assert.ok(Math.abs(oursIdleUs - h.idle_us) <= 2 * h.rows + 2, `step ${s.num}: idle ${oursIdleUs} µs, HTA ${h.idle_us} µs`);
  }
  assert.ok(same >= 1, "at least one step both compute the same way");
  console.log(`stats --steps vs HTA per iteration (${same} of ${steps.length} steps with the same ops):\n  ${report.join("\n  ")}`);
});

test.run();
