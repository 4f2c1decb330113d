/**
 * HTA and XProf find the training steps of a ROCm dump: the real MI250 Kineto trace with its host annotations written as
 * ROCTx ranges (src/tools/kineto_to_rocprof.ts `roctx`, SDK 1.0 and 0.5) converts to Chrome JSON on which HTA 0.5.0
 * (test/interop/fidelity_check.py hta) finds iterations 1 and 2 and computes the same temporal breakdown and idle time
 * breakdown as on the original Kineto trace. (HTA's per-iteration figures are empty for both: its add_iteration
 * gives no iteration to GPU rows on stream 0, which every ROCm row is — docs/analysis.md.) XProf's overview page
 * (fidelity_check.py xprof) shows step 1 — step 2 launches no GPU work — with the step time `stats --steps` gives, and
 * the original trace's kernels as its device compute and its host-to-device copies as its input.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { kinetoToRocprof } from "../../src/tools/kineto_to_rocprof.js";
import { readKinetoTrace } from "../../src/tools/kineto_to_rawtrace.js";
import { computeStepStats, unionNs } from "../../src/core/step_stats.js";
import { xprofPython } from "../helpers/interop.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ORIGINAL = join(ROOT, "../shared/data/real/kineto-rocm/minitoy_mi250.json.gz");

let work = "";
test.before(() => {
  execFileSync("bash", [join(ROOT, "scripts/python-env.sh")], { stdio: ["ignore", "ignore", "inherit"] });
  work = mkdtempSync(join(tmpdir(), "rawtrace-hta-rocm-steps-"));
});
test.after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

const hta = (dir: string) => JSON.parse(execFileSync(join(ROOT, ".venv/bin/python"), [join(ROOT, "test/interop/fidelity_check.py"), "hta", dir],
  { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 << 20 })) as { temporal: unknown; iterations: number[]; idle: unknown };

test("HTA on ROCTx ProfilerStep ranges: iterations 1 and 2, the original trace's temporal and idle breakdowns", async () => {
  mkdirSync(join(work, "original"));
  writeFileSync(join(work, "original", "rank-0.json"), gunzipSync(readFileSync(ORIGINAL)));
  const want = hta(join(work, "original"));
  assert.equal(want.iterations, [1, 2]);
  const engine = await createEngine();
  for (const sdk of ["1.0", "0.5"] as const) {
    const { bytes } = kinetoToRocprof(readKinetoTrace(ORIGINAL), { sdk, arch: "gfx90a", roctx: true });
    const parts: Buffer[] = [];
    const r = await engine.convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)));
    assert.is(r.steps, 2);
    const dir = join(work, `roctx-${sdk}`);
    mkdirSync(dir);
    writeFileSync(join(dir, "rank-0.json"), Buffer.concat(parts));
    const got = hta(dir);
    assert.equal(got.iterations, [1, 2], `SDK ${sdk}: the steps HTA found`);
    assert.equal(got.temporal, want.temporal, `SDK ${sdk}: temporal breakdown`);
    assert.equal(got.idle, want.idle, `SDK ${sdk}: idle time breakdown`);
    console.log(`hta rocm steps SDK ${sdk}: iterations ${got.iterations.join(", ")}, ${JSON.stringify(got.temporal)}`);
  }
});

test("XProf's overview page on ROCTx steps: the step with GPU work, its step time = stats --steps'", async () => {
  const { bytes } = kinetoToRocprof(readKinetoTrace(ORIGINAL), { sdk: "1.0", arch: "gfx90a", roctx: true });
  const engine = await createEngine();
  const parts: Buffer[] = [];
  await engine.convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
  const path = join(work, "roctx.xplane.pb");
  writeFileSync(path, Buffer.concat(parts));
  const x = JSON.parse(execFileSync(xprofPython(), [join(ROOT, "test/interop/fidelity_check.py"), "xprof", path],
    { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 << 20 })) as {
    steps: Array<{ step_ms: number; parts: Record<string, number> }>; rows: Array<{ thread: string; events: number }>;
  };
  const ours = await computeStepStats(engine, memorySource(bytes), {});
  assert.equal(ours.map((s) => s.step), [1]);
  assert.is(x.steps.length, 1);
  assert.ok(Math.abs(x.steps[0].step_ms - ours[0].spanNs / 1e6) < 2e-6, `XProf ${x.steps[0].step_ms} ms, stats ${ours[0].spanNs / 1e6} ms`);
  assert.is(x.rows.filter((r) => r.thread === "Steps").reduce((n, r) => n + r.events, 0), 1, "the derived Steps row");
  // The step's breakdown from the original trace's GPU ops (all launched in step 1): its kernels are device compute,
  // its two host-to-device copies input — XProf tells copies apart by name (MemcpyHToD, docs/xspace.md); with XLA's
  // MemcpyH2D it counted them as device compute. No kernel overlaps a copy here, so each is its own union.
  const ops = (JSON.parse(gunzipSync(readFileSync(ORIGINAL)).toString()) as { traceEvents: Array<{ cat?: string; name: string; ts: number; dur: number }> })
    .traceEvents.filter((e) => e.cat === "kernel" || e.cat === "gpu_memcpy");
  const union = (cat: string) => unionNs(ops.filter((e) => e.cat === cat).map((e): [number, number] => [Math.round(e.ts * 1000), Math.round(e.ts * 1000) + Math.round(e.dur * 1000)]));
  assert.ok(ops.filter((e) => e.cat === "gpu_memcpy").every((e) => e.name.startsWith("Memcpy HtoD")));
  const p = x.steps[0].parts;
  assert.ok(Math.abs(p.deviceComputeTimeMs - union("kernel") / 1e6) < 2e-6, `device compute: XProf ${p.deviceComputeTimeMs} ms, kernels ${union("kernel") / 1e6} ms`);
  assert.ok(Math.abs(p.infeedTimeMs - union("gpu_memcpy") / 1e6) < 2e-6, `input: XProf ${p.infeedTimeMs} ms, host-to-device copies ${union("gpu_memcpy") / 1e6} ms`);
  console.log(`xprof rocm steps: step 1 ${x.steps[0].step_ms} ms, device compute ${p.deviceComputeTimeMs} ms, input ${p.infeedTimeMs} ms`);
});

test.run();
