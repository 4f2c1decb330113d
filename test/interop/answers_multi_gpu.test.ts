/**
 * What HTA 0.5.0 and XProf 2.24.2 answer about a dump no bundled sample is like (test/interop/answers_dump.ts: one
 * process, two GPUs driven from two threads, kernels overlapping across streams, NCCL all-reduces under GEMMs, host
 * to device, device to host, device to device and peer copies, memsets, four ProfilerStep#N ranges), against the same
 * answers computed here from the list of records the dump was written from — never from rawtrace's output, whose
 * only figure used is the Chrome JSON's time base (baseTimeNanoseconds).
 *
 *  - HTA (test/interop/answers_check.py hta, include_last_profiler_step=True): per kernel name the sum, min, max and
 *    mean of its µs rows; the temporal breakdown; the idle time per stream and category; the communication /
 *    computation overlap; the steps. HTA's rules (test/interop/hta_rules.ts): µs rows (start rounded up, end down),
 *    one rank whatever the GPUs, idle gaps per stream id.
 *  - XProf (answers_check.py xprof): kernel_stats rows (kernel × launch shape: occurrences, total, average, min,
 *    max, registers), the overview's device count and each step's time (the device span of its work on both GPUs)
 *    and its device breakdown by XProf's event types (xprof/utils/event_span.h: at each instant the highest type
 *    present counts), with every launch on the step's thread and with GPU 1 driven from a second thread.
 *
 * XProf groups device work into a step through its launch call's nesting under the step marker (tsl
 * group_events.cc: intra-thread nesting, then launch → kernel by correlation_id); GPU 1's launches on the second
 * thread nest under nothing and reach their step through the context stats rawtrace adds (docs/xspace.md, step
 * links: without them XProf showed GPU 0's work alone).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { answersDump, MAIN, type AnswersDump, type Op } from "./answers_dump.js";
import { busy, htaRow, htaType, merged, type Row } from "./hta_rules.js";
import type { DeviceOp } from "./fidelity_records.js";
import { xprofPython } from "../helpers/interop.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CHECK = join(ROOT, "test/interop/answers_check.py");

interface HtaOut {
  kernels: Array<{ name: string; kernel_type: string; sum_us: number; max_us: number; min_us: number; mean_us: number }>;
  temporal: { idle_us: number; compute_us: number; non_compute_us: number; kernel_us: number };
  idle: Array<{ stream: number; category: string; idle_us: number }>;
  overlap_pct: number;
  iterations: number[];
}
interface XprofOut {
  kernels: Array<{ name: string; regs: number; block: string; grid: string; occurrences: number; total_us: number; avg_us: number; min_us: number; max_us: number }>;
  steps: Array<{ step: string; step_ms: number; parts: Record<string, number> }>;
  device_core_count: string;
}

const work = mkdtempSync(join(tmpdir(), "rawtrace-answers-"));
test.after(() => rmSync(work, { recursive: true, force: true }));

async function convert(bytes: Uint8Array, format: "chrome" | "xspace"): Promise<Buffer> {
  const parts: Buffer[] = [];
  await (await createEngine()).convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format });
  return Buffer.concat(parts);
}
function run<T>(python: string, ...args: string[]): T {
  return JSON.parse(execFileSync(python, [CHECK, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 << 20 })) as T;
}
const near = (a: number, b: number, tol: number, what: string) => assert.ok(Math.abs(a - b) <= tol, `${what}: client ${a}, records ${b}`);

// ---- HTA ------------------------------------------------------------------------------------------------------------

/** The name HTA shows for an op: the kernel's, else Kineto's copy / fill name with its memory kinds. */
function htaName(o: Op): string {
  if (o.kind === "kernel") return o.name;
  if (o.kind === "memset") return "Memset (Device)";
  const kind = (k: number) => (k === 2 ? "Pinned" : "Device");
  return `${o.name} (${kind(o.copyKind === 1 ? 2 : 3)} -> ${kind(o.copyKind === 2 ? 2 : 3)})`;
}

test("two GPUs, two threads: HTA's kernel breakdown, temporal breakdown, idle time, overlap and steps equal the records'", async () => {
  const d = answersDump();
  const json = await convert(d.bytes, "chrome");
  const base = BigInt(/"baseTimeNanoseconds":\s*(\d+)/.exec(json.subarray(0, 65536).toString())![1]);
  const dir = join(work, "hta");
  mkdirSync(dir);
  writeFileSync(join(dir, "trace.json"), json);
  execFileSync("bash", [join(ROOT, "scripts/python-env.sh")], { stdio: ["ignore", "ignore", "inherit"] });
  const hta = run<HtaOut>(join(ROOT, ".venv/bin/python"), "hta", dir);

  const rows: Row[] = d.ops.map((o) => htaRow(o as unknown as DeviceOp, base, htaName(o)));
  const opOf = (r: Row) => r.op as unknown as Op;
  // Per name: HTA's sum, min, max, mean of row durations.
  const byName = new Map<string, number[]>();
  for (const r of rows) byName.set(r.name, [...(byName.get(r.name) ?? []), r.end - r.ts]);
  assert.equal(hta.kernels.map((k) => k.name).sort(), [...byName.keys()].sort(), "kernel breakdown names");
  for (const k of hta.kernels) {
    const v = byName.get(k.name)!;
    const want = { name: k.name, kernel_type: htaType(k.name), sum_us: v.reduce((a, b) => a + b, 0), max_us: Math.max(...v), min_us: Math.min(...v) };
    assert.equal({ ...k, mean_us: undefined }, { ...want, mean_us: undefined }, k.name);
    near(k.mean_us, want.sum_us / v.length, 1e-9, `${k.name} mean`);
  }
  // Temporal breakdown: one rank, both GPUs' rows merged.
  const all = merged(rows);
  const kernelUs = all[all.length - 1][1] - all[0][0];
  const idleUs = kernelUs - busy(all);
  const comp = merged(rows.filter((r) => r.type === "COMPUTATION"));
  const computeUs = busy(comp);
  assert.equal(hta.temporal, { idle_us: idleUs, compute_us: computeUs, non_compute_us: kernelUs - computeUs - idleUs, kernel_us: kernelUs }, "temporal breakdown");
  // Idle time per stream id: the gap before each op is host wait when its launch started after the previous op
  // ended, kernel wait when under 30 µs, else other.
  const launchUs = new Map(d.apis.map((a) => [a.correlation, Math.ceil(Number(a.start - base) / 1000)]));
  const idle = new Map<string, number>();
  for (const st of new Set(d.ops.map((o) => o.stream))) {
    const s = rows.filter((r) => opOf(r).stream === st).sort((a, b) => a.ts - b.ts);
    for (let i = 1; i < s.length; i++) {
      const gap = s[i].ts - s[i - 1].end;
      const cat = launchUs.get(opOf(s[i]).correlation)! > s[i - 1].end ? "host_wait" : gap < 30 ? "kernel_wait" : "other";
      idle.set(`${st} ${cat}`, (idle.get(`${st} ${cat}`) ?? 0) + gap);
    }
  }
  const got = new Map(hta.idle.filter((r) => r.idle_us !== 0).map((r) => [`${r.stream} ${r.category}`, r.idle_us]));
  assert.equal(Object.fromEntries([...got].sort()), Object.fromEntries([...idle].filter(([, v]) => v !== 0).sort()), "idle time per stream");
  // Communication / computation overlap: the merged NCCL time under merged compute time, over the NCCL time.
  const comm = merged(rows.filter((r) => r.type === "COMMUNICATION"));
  let under = 0;
  for (const [a, b] of comm) for (const [c, e] of comp) under += Math.max(0, Math.min(b, e) - Math.max(a, c));
  near(hta.overlap_pct, Math.round((10000 * under) / busy(comm)) / 100, 1e-9, "comm/comp overlap %");
  assert.equal(hta.iterations, d.steps.map((s) => s.num), "steps");
  console.log(`HTA: ${hta.kernels.length} names, temporal ${JSON.stringify(hta.temporal)}, overlap ${hta.overlap_pct}%: as the records`);
});

// ---- XProf ----------------------------------------------------------------------------------------------------------

test("two GPUs: XProf's kernel_stats rows (occurrences, total, average, min, max per kernel and launch shape) equal the records'", async () => {
  const d = answersDump();
  const path = join(work, "stats.xplane.pb");
  writeFileSync(path, await convert(d.bytes, "xspace"));
  const x = run<XprofOut>(xprofPython(), "xprof", path);
  const want = new Map<string, number[]>();
  const regs = new Map<string, number>();
  for (const o of d.ops.filter((op) => op.kind === "kernel")) {
    const key = `${o.name} grid:${o.grid} block:${o.block}`;
    want.set(key, [...(want.get(key) ?? []), Number(o.end - o.start) / 1000]);
    regs.set(key, o.regs!);
  }
  const got = new Map(x.kernels.map((k) => [`${k.name} grid:${k.grid} block:${k.block}`, k]));
  assert.equal([...got.keys()].sort(), [...want.keys()].sort(), "one row per kernel and launch shape, both GPUs together");
  for (const [key, us] of want) {
    const k = got.get(key)!;
    const total = us.reduce((a, b) => a + b, 0);
    assert.is(k.occurrences, us.length, `${key} occurrences`);
    assert.is(k.regs, regs.get(key), `${key} registers`);
    near(k.total_us, total, 1e-6, `${key} total`);
    near(k.min_us, Math.min(...us), 1e-6, `${key} min`);
    near(k.max_us, Math.max(...us), 1e-6, `${key} max`);
    near(k.avg_us, total / us.length, 1e-3, `${key} average (XProf rounds to 3 decimals)`);
  }
  assert.is(x.device_core_count, "2", "both GPUs counted");
});

/** XProf's event type of a device op (xprof/convert/xplane_to_step_events.cc ClassifyGpuEvent, event_span.h). */
function xprofType(o: Op): number {
  if (o.kind === "memcpy" && o.copyKind === 1) return 80; // HOST_TO_DEVICE
  if (o.kind === "memcpy" && o.copyKind === 2) return 130; // DEVICE_TO_HOST
  if (o.kind === "memcpy" && o.copyKind === 8) return 120; // DEVICE_TO_DEVICE
  if (o.name.toLowerCase().startsWith("nccl")) return 100; // DEVICE_COLLECTIVES
  return 140; // DEVICE_COMPUTE_32 (peer copies, memsets and kernels alike)
}

/** ns per XProf event type over `ops`, the highest type present counting at each instant. */
function breakdownNs(ops: Op[]): Map<number, number> {
  const points = [...new Set(ops.flatMap((o) => [o.start, o.end]))].sort((a, b) => (a < b ? -1 : 1));
  const out = new Map<number, number>();
  for (let i = 1; i < points.length; i++) {
    const [a, b] = [points[i - 1], points[i]];
    const top = Math.max(0, ...ops.filter((o) => o.start <= a && o.end >= b).map(xprofType));
    out.set(top, (out.get(top) ?? 0) + Number(b - a));
  }
  return out;
}

/** The ops launched inside each step range, on any thread. */
const stepOps = (d: AnswersDump) => d.steps.map((s) => {
  const corr = new Set(d.apis.filter((a) => a.start >= s.start && a.start < s.end).map((a) => a.correlation));
  return d.ops.filter((o) => corr.has(o.correlation));
});

/** XProf's overview steps of `d` as XSpace: every step shown, each one's time and device breakdown the records'. */
async function assertSteps(d: AnswersDump, name: string): Promise<void> {
  const path = join(work, `${name}.xplane.pb`);
  writeFileSync(path, await convert(d.bytes, "xspace"));
  const x = run<XprofOut>(xprofPython(), "xprof", path);
  const steps = stepOps(d);
  assert.is(x.steps.length, steps.length, "every step shown");
  const COLUMN: Record<number, string> = { 140: "deviceComputeTimeMs", 130: "outfeedTimeMs", 120: "deviceToDeviceTimeMs", 100: "deviceCollectivesTimeMs", 80: "infeedTimeMs", 0: "otherTimeMs" };
  steps.forEach((ops, i) => {
    const got = x.steps[i];
    const span = ops.reduce((m, o) => (o.end > m ? o.end : m), 0n) - ops.reduce((m, o) => (o.start < m ? o.start : m), ops[0].start);
    near(got.step_ms, Number(span) / 1e6, 1e-6, `step ${i} time`);
    const want = breakdownNs(ops);
    for (const [type, column] of Object.entries(COLUMN)) near(got.parts[column], (want.get(Number(type)) ?? 0) / 1e6, 1e-6, `step ${i} ${column}`);
    assert.ok(got.parts.deviceToDeviceTimeMs > 0 && got.parts.deviceCollectivesTimeMs > 0, `step ${i}: every type present`);
  });
}

test("two GPUs launched from the step's thread: XProf's steps, step times and device breakdown equal the records'", async () => {
  await assertSteps(answersDump({ sideTid: MAIN }), "steps");
});

test("GPU 1 launched only from another thread: XProf's steps still hold both GPUs' work (step links; docs/xspace.md)", async () => {
  // Step 0: 0.405429 ms of device compute on both GPUs together (GPU 0 alone: 0.387415 ms), GPU 1's all-reduce among
  // the collectives and its device-to-device copy.
  await assertSteps(answersDump(), "side");
});

test.run();
