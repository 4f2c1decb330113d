/**
 * Fidelity with the real clients, for every bundled sample (samples/*.rawtrace) and the real H100 dump recorded by
 * `rawtrace record` with PyTorch-named steps (test/fixtures/real/h100/torch_profilerstep.rawtrace): what HTA and XProf *compute* from
 * rawtrace's output must equal the same figures computed independently from the raw records
 * (test/interop/fidelity_records.ts reads the container and the CUPTI records itself and demangles with c++filt;
 * nothing comes from our emitters but the Chrome time base).
 *
 *  - HTA (test/interop/fidelity_check.py hta, `include_last_profiler_step=True`): the kernel breakdown per kernel
 *    name and the memory total, the temporal breakdown (idle, compute, non-compute, kernel time), the idle time
 *    breakdown per stream and category, and the steps it found. HTA's own rules are applied to the records: times
 *    rounded to µs (start up, end down), GPU rows = events with a stream, and with two steps or more only the GPU
 *    work launched by the time the last step ends.
 *  - XProf (fidelity_check.py xprof): overview_page (steps and step time), kernel_stats (count and total time per
 *    kernel) and trace_viewer (rows: one CUPTI overhead row, the device rows' events, the derived Steps row).
 *
 * Today's h100 kernel_stats (60 rows — kernel × launch shape — of 43 kernel names, 442 occurrences, 8,353.221 µs)
 * is pinned too.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { memorySource, stepPattern } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { readDump, demangleAll, deviceSpan, stepsOf, type DeviceOp, type Dump, type Step } from "./fidelity_records.js";
import { busy, htaLabel, htaRow, merged } from "./hta_rules.js";
import { computeStepStats, percentile, unionNs } from "../../src/core/step_stats.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const HTA_PY = join(ROOT, ".venv/bin/python");
const CHECK = join(ROOT, "test/interop/fidelity_check.py");

/** The step pattern each sample is converted with (a sample without NVTX ranges has no steps). */
const STEPS: Record<string, string | undefined> = { "h100_torch_train_nvtx.rawtrace": "^train_step$" };

interface HtaOut {
  kernels: Array<{ name: string; kernel_type: string; sum_us: number }>;
  kernel_types: Array<{ kernel_type: string; sum_us: number }>;
  temporal: { idle_us: number; compute_us: number; non_compute_us: number; kernel_us: number };
  idle: Array<{ stream: number; category: string; idle_us: number }>;
  iterations: number[];
}
interface XprofOut {
  steps: Array<{ step: string; step_ms: number; compute_ms: number; parts_ms: number; parts: Record<string, number> }>;
  kernels: Array<{ name: string; occurrences: number; total_us: number }>;
  rows: Array<{ process: string; thread: string; events: number; durations_us: number[]; names: string[] }>;
}

let work = "";
let xprofPy = "";

test.before(() => {
  execFileSync("bash", [join(ROOT, "scripts/python-env.sh")], { stdio: ["ignore", "ignore", "inherit"] });
  execFileSync("bash", [join(ROOT, "scripts/xprof-env.sh")], { stdio: ["ignore", "ignore", "inherit"], timeout: 900_000 });
  xprofPy = join(ROOT, ".venv-xprof/bin/python");
  work = mkdtempSync(join(tmpdir(), "rawtrace-fidelity-"));
});
test.after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

async function convert(bytes: Uint8Array, format: "chrome" | "xspace", steps: string | undefined): Promise<Buffer> {
  const parts: Buffer[] = [];
  await (await createEngine()).convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format, steps });
  return Buffer.concat(parts);
}

function run<T>(python: string, ...args: string[]): T {
  return JSON.parse(execFileSync(python, [CHECK, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 256 << 20 })) as T;
}

// ---- HTA's rules applied to the records ----------------------------------------------------------------------------

interface HtaExpect {
  perKernel: Map<string, number>;
  memoryUs: number;
  temporal: HtaOut["temporal"];
  idle: Map<string, number>;
  iterations: number[];
}

function htaExpect(dump: Dump, steps: Step[], names: Map<string, string>, base: bigint): HtaExpect {
  const apiTs = new Map<number, number>();
  for (const a of dump.apis) apiTs.set(a.correlation, Math.ceil(Number(a.start - base) / 1000));
  // HTA's last-step filter (two steps or more): GPU work whose CPU launch starts by the last step's end.
  const lastEnd = Math.max(...steps.map((s) => Math.floor(Number(s.range.start - base) / 1000 + Number(s.range.end - s.range.start) / 1000)));
  const keep = (op: DeviceOp) => steps.length < 2 || (apiTs.has(op.correlation) && apiTs.get(op.correlation)! <= lastEnd);
  const rows = dump.ops.filter((op) => !(op.kind === "sync" && op.stream === 0xffffffff) && keep(op)).map((op) => htaRow(op, base, htaLabel(op, names)));
  const perKernel = new Map<string, number>();
  let memoryUs = 0;
  for (const r of rows) {
    // Every GPU row with a stream is a "kernel" to HTA: a "Stream Wait Event" sync is one of its computation kernels.
    if (r.op.kind !== "memcpy" && r.op.kind !== "memset" && (r.type === "COMPUTATION" || r.type === "COMMUNICATION")) perKernel.set(r.name, (perKernel.get(r.name) ?? 0) + r.end - r.ts);
    else if (r.op.kind === "memcpy" || r.op.kind === "memset") memoryUs += r.end - r.ts;
  }
  const all = merged(rows);
  const kernelUs = all[all.length - 1][1] - all[0][0];
  const idleUs = kernelUs - busy(all);
  const computeUs = busy(merged(rows.filter((r) => r.type === "COMPUTATION")));
  // Idle time per stream: kernels, memcpys and memsets in start order; the gap before each is host wait when its
  // launch started after the previous op ended, kernel wait when shorter than 30 µs, else other.
  const idle = new Map<string, number>();
  const streams = new Set(rows.filter((r) => r.op.kind !== "sync").map((r) => r.op.stream));
  for (const st of streams) {
    const s = rows.filter((r) => r.op.kind !== "sync" && r.op.stream === st).sort((a, b) => a.ts - b.ts);
    for (let i = 1; i < s.length; i++) {
      const gap = s[i].ts - s[i - 1].end;
      const rt = apiTs.get(s[i].op.correlation);
      const cat = rt !== undefined && rt > s[i - 1].end ? "host_wait" : gap < 30 ? "kernel_wait" : "other";
      idle.set(`${st} ${cat}`, (idle.get(`${st} ${cat}`) ?? 0) + gap);
    }
  }
  return {
    perKernel, memoryUs, idle,
    temporal: { idle_us: idleUs, compute_us: computeUs, non_compute_us: kernelUs - computeUs - idleUs, kernel_us: kernelUs },
    iterations: steps.map((s) => s.num),
  };
}

// ---- XProf's rules applied to the records --------------------------------------------------------------------------

/** XProf's step time on a GPU (ns): the device span of the step's work (the host marker's span without any). */
function stepTimeNs(s: Step): bigint {
  const [a, b] = deviceSpan(s);
  return a < 0n ? s.range.end - s.range.start : b - a;
}

/** The same names on both sides; the differences (shortened) when not. */
function sameNames(got: string[], want: string[], what: string): void {
  const g = new Set(got);
  const w = new Set(want);
  const short = (n: string) => n.slice(0, 100);
  assert.equal([...g].filter((n) => !w.has(n)).map(short), [], `${what}: names not in the records`);
  assert.equal([...w].filter((n) => !g.has(n)).map(short), [], `${what}: the records' names missing`);
  assert.is(got.length, g.size, `${what}: each name once`);
}

// ---- The tests ------------------------------------------------------------------------------------------------------

const allSamples = readdirSync(join(ROOT, "samples")).filter((f) => f.endsWith(".rawtrace")).sort();
/** HEADER vendor of a sample (docs/format.md: the first chunk after the 16-byte preamble, u32 vendor at payload 0). */
const vendorOf = (f: string) => {
  const b = readFileSync(join(ROOT, "samples", f));
  return b.readUInt16LE(16 + 4) === 1 ? b.readUInt32LE(16 + 24 + 0) : -1;
};
/** CUDA samples: this test's independent reader decodes CUPTI records. */
const samples = allSamples.filter((f) => vendorOf(f) === 1);

test("every bundled sample is covered", () => {
  assert.ok(samples.length >= 2, `samples: ${samples}`);
  for (const s of Object.keys(STEPS)) assert.ok(samples.includes(s), s);
  // The ROCm sample is the real MI250 Kineto trace as rocprofiler-sdk records: test/interop/hta_rocm.test.ts holds
  // HTA's kernel breakdown of our JSON equal to HTA's of the original trace, xprof_rocm.test.ts every kernel and
  // copy on its XProf row to the ns; the XPU sample is held by hta_xpu.test.ts and xprof_xpu.test.ts the same way,
  // the Habana sample by hta_synapse.test.ts and xprof_synapse.test.ts. Every other sample must be named by one of them.
  const rocmTests = ["hta_rocm.test.ts", "xprof_rocm.test.ts", "hta_xpu.test.ts", "xprof_xpu.test.ts", "hta_synapse.test.ts",
    "xprof_synapse.test.ts"].map((t) => readFileSync(join(ROOT, "test/interop", t), "utf8")).join("\n");
  for (const f of allSamples.filter((x) => !samples.includes(x))) assert.ok(rocmTests.includes(f), `${f}: covered by a vendor interop test`);
});

/** Real dumps checked like the samples: `rawtrace record` on an H100, PyTorch ProfilerStep#N ranges, default steps. */
const REAL = ["test/fixtures/real/h100/torch_profilerstep.rawtrace"];

/**
 * A step's device time by XProf's event types, ns: the highest type present counts at each instant (device compute
 * 10 > device to host 9 > device to device 8 > host to device 4). Kernels, fills and copies of other kinds are device
 * compute; copies by CUPTI copy kind 1, 2, 8 are host to device, device to host and device to device. `h2d` is the
 * host-to-device time no device type above it covers (host calls may still cover it).
 */
function deviceBreakdownNs(ops: DeviceOp[]): { compute: number; d2h: number; d2d: number; h2d: number } {
  const type = (o: DeviceOp) => (o.kind !== "memcpy" ? 10 : o.copyKind === 1 ? 4 : o.copyKind === 2 ? 9 : o.copyKind === 8 ? 8 : 10);
  const edges: Array<[bigint, number, number]> = [];
  for (const o of ops) {
    if (o.kind === "sync" || o.end <= o.start) continue;
    edges.push([o.start, type(o), 1], [o.end, type(o), -1]);
  }
  edges.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const open = new Map<number, number>();
  const sum = new Map<number, number>();
  let at = 0n;
  for (const [t, ty, d] of edges) {
    const top = Math.max(0, ...[...open].filter(([, n]) => n > 0).map(([k]) => k));
    if (top) sum.set(top, (sum.get(top) ?? 0) + Number(t - at));
    at = t;
    open.set(ty, (open.get(ty) ?? 0) + d);
  }
  return { compute: sum.get(10) ?? 0, d2h: sum.get(9) ?? 0, d2d: sum.get(8) ?? 0, h2d: sum.get(4) ?? 0 };
}
const pathOf = (f: string) => (f.includes("/") ? join(ROOT, f) : join(ROOT, "samples", f));

for (const file of [...samples, ...REAL]) {
  test(`${file}: HTA's kernel breakdown, temporal breakdown, idle time and steps equal the records'`, async () => {
    const bytes = new Uint8Array(readFileSync(pathOf(file)));
    const dump = readDump(bytes);
    const steps = stepsOf(dump, stepPattern(STEPS[file]));
    const names = demangleAll(dump.ops.filter((o) => o.kind === "kernel").map((o) => o.name));
    const json = await convert(bytes, "chrome", STEPS[file]);
    const base = BigInt(/"baseTimeNanoseconds":\s*(\d+)/.exec(json.subarray(0, 65536).toString())![1]);
    const dir = join(work, `hta-${file.replace(/\//g, "_")}`);
    mkdirSync(dir);
    writeFileSync(join(dir, "trace.json"), json);
    const hta = run<HtaOut>(HTA_PY, "hta", dir);
    const want = htaExpect(dump, steps, names, base);

    const got = new Map(hta.kernels.filter((k) => k.kernel_type !== "MEMORY").map((k) => [k.name, k.sum_us]));
    sameNames([...got.keys()], [...want.perKernel.keys()], "HTA's kernel breakdown");
    for (const [name, us] of want.perKernel) assert.is(got.get(name), us, `HTA's time of ${name.slice(0, 80)}`);
    const memory = hta.kernels.filter((k) => k.kernel_type === "MEMORY").reduce((n, k) => n + k.sum_us, 0);
    assert.is(memory, want.memoryUs, "memcpy + memset time");
    assert.equal(hta.temporal, want.temporal, "temporal breakdown");
    const idle = new Map(hta.idle.filter((r) => r.idle_us !== 0).map((r) => [`${r.stream} ${r.category}`, r.idle_us]));
    const wantIdle = new Map([...want.idle].filter(([, v]) => v !== 0));
    assert.equal(Object.fromEntries([...idle].sort()), Object.fromEntries([...wantIdle].sort()), "idle time per stream and category");
    assert.equal(hta.iterations, want.iterations, "the steps HTA found");
    const total = [...want.perKernel.values()].reduce((a, b) => a + b, 0);
    console.log(`${file}: HTA kernels ${want.perKernel.size} names, ${total} µs; ${want.iterations.length} steps; ` +
      `idle ${want.temporal.idle_us} µs of ${want.temporal.kernel_us} µs, compute ${want.temporal.compute_us} µs`);
  });

  test(`${file}: XProf's overview steps, kernel_stats and trace_viewer rows equal the records'`, async () => {
    const bytes = new Uint8Array(readFileSync(pathOf(file)));
    const dump = readDump(bytes);
    const steps = stepsOf(dump, stepPattern(STEPS[file]));
    const names = demangleAll(dump.ops.filter((o) => o.kind === "kernel").map((o) => o.name));
    const path = join(work, `${file.replace(/\//g, "_")}.xplane.pb`);
    writeFileSync(path, await convert(bytes, "xspace", STEPS[file]));
    const x = run<XprofOut>(xprofPy, "xprof", path);

    // kernel_stats: every kernel with a duration, by name.
    const want = new Map<string, { n: number; ns: bigint }>();
    for (const op of dump.ops) {
      if (op.kind !== "kernel" || op.end <= op.start) continue;
      const k = want.get(names.get(op.name)!) ?? { n: 0, ns: 0n };
      k.n++;
      k.ns += op.end - op.start;
      want.set(names.get(op.name)!, k);
    }
    // XProf has a row per (kernel, launch shape): summed by name.
    const byName = new Map<string, { n: number; us: number }>();
    for (const k of x.kernels) {
      const b = byName.get(k.name) ?? { n: 0, us: 0 };
      b.n += k.occurrences;
      b.us += k.total_us;
      byName.set(k.name, b);
    }
    sameNames([...byName.keys()], [...want.keys()], "kernel_stats");
    for (const [name, k] of byName) {
      assert.is(k.n, want.get(name)!.n, `occurrences of ${name.slice(0, 80)}`);
      assert.ok(Math.abs(k.us - Number(want.get(name)!.ns) / 1000) < 1e-6, `total time of ${name.slice(0, 80)}: ${k.us} µs`);
    }

    // overview_page: the steps (XProf leaves out the first and the last when there are more than two), step time.
    const shown = steps.length > 2 ? steps.slice(1, -1) : steps;
    let inputSeen = 0;
    let inputRecords = 0;
    assert.is(x.steps.length, shown.length, "steps on the overview page");
    shown.forEach((s, i) => {
      const got = x.steps[i];
      assert.ok(Math.abs(got.step_ms - Number(stepTimeNs(s)) / 1e6) < 2e-6, `step ${s.num}: XProf ${got.step_ms} ms, records ${Number(stepTimeNs(s)) / 1e6} ms`);
      assert.ok(got.step_ms > 0 && got.compute_ms > 0, `step ${s.num} has time and device compute`);
      assert.ok(Math.abs(got.parts_ms - got.step_ms) < 1e-6, `step ${s.num}: the breakdown adds up to the step time`);
      // The device side of the breakdown, from the records by XProf's rule (xprof/utils/event_span.cc
      // ToNonOverlappedEvents: at each instant the highest event type present counts): kernels, fills and other copies
      // are device compute (10), above device-to-host copies (9), above device-to-device ones (8); host-to-device
      // copies (4) are input, but host calls (kernel launch, 5) rank above them, so input is only bounded here.
      const want = deviceBreakdownNs(s.ops);
      const near = (ms: number, ns: number, what: string) =>
        assert.ok(Math.abs(ms - ns / 1e6) < 2e-6, `step ${s.num} ${what}: XProf ${ms} ms, records ${ns / 1e6} ms`);
      near(got.parts.deviceComputeTimeMs, want.compute, "device compute");
      near(got.parts.outfeedTimeMs, want.d2h, "output (device to host copies)");
      near(got.parts.deviceToDeviceTimeMs, want.d2d, "device to device");
      assert.ok(got.parts.infeedTimeMs <= want.h2d / 1e6 + 2e-6, `step ${s.num} input: XProf ${got.parts.infeedTimeMs} ms, at most ${want.h2d / 1e6}`);
      inputSeen += got.parts.infeedTimeMs;
      inputRecords += want.h2d;
    });
    // Host-to-device copies are input, not device compute (XProf's names: MemcpyHToD, docs/xspace.md).
    if (inputRecords > 0) assert.ok(inputSeen > 0, `${file}: XProf shows input time for the steps' host-to-device copies`);

    // trace_viewer: one CUPTI overhead row per plane, the device rows hold every device op, the derived Steps row
    // holds each step's device span.
    for (const plane of new Set(x.rows.map((r) => r.process))) {
      assert.ok(x.rows.filter((r) => r.process === plane && r.thread === "CUPTI overhead").length <= 1, `${plane}: one CUPTI overhead row`);
    }
    const overheadRows = x.rows.filter((r) => r.thread === "CUPTI overhead").reduce((n, r) => n + r.events, 0);
    assert.is(overheadRows, dump.overhead, "every overhead record");
    const streamRows = x.rows.filter((r) => r.process.startsWith("/device:GPU") && r.thread.startsWith("Stream #"));
    assert.is(streamRows.reduce((n, r) => n + r.events, 0), dump.ops.filter((o) => o.kind !== "sync").length, "kernels, memcpys and memsets");
    const stepRow = x.rows.find((r) => r.thread === "Steps");
    if (steps.length === 0) assert.not.ok(stepRow, "no Steps row without steps");
    else {
      const spans = steps.filter((s) => s.ops.length > 0).map((s) => { const [a, b] = deviceSpan(s); return Number(b - a) / 1000; });
      assert.equal(stepRow!.durations_us.length, spans.length, "one Steps event per step with device work");
      stepRow!.durations_us.forEach((d, i) => assert.ok(Math.abs(d - spans[i]) < 1e-3, `Steps row ${i}: ${d} µs, records ${spans[i]} µs`));
      const markers = x.rows.filter((r) => r.process === "/host:CPU").flatMap((r) => r.names).filter((n) => n.startsWith("ProfilerStep#"));
      // A step range already named ProfilerStep#N is shown too, on its NVTX line, next to the marker.
      const named = steps.filter((s) => /^ProfilerStep#\d+$/.test(s.range.name)).length;
      assert.is(markers.length, steps.length + named, "a ProfilerStep marker per step on the host (plus ranges so named)");
    }
    const occ = x.kernels.reduce((n, k) => n + k.occurrences, 0);
    const us = x.kernels.reduce((n, k) => n + k.total_us, 0);
    if (REAL.includes(file)) assert.is(steps.length, 8, "ProfilerStep#0..7 found with the default step pattern");
    if (file === "h100_torch_train_nvtx.rawtrace") {
      assert.is(x.kernels.length, 60, "kernel_stats rows (kernel × launch shape)");
      assert.is(occ, 442);
      assert.ok(Math.abs(us - 8353.221) < 1e-6, `${us}`);
    }
    console.log(`${file}: XProf kernel_stats ${x.kernels.length} rows, ${byName.size} kernel names, ${occ} occurrences, ${us.toFixed(3)} µs; ` +
      `overview ${x.steps.length} steps${x.steps.length ? `, ${x.steps.map((s) => s.step_ms.toFixed(3)).join(" / ")} ms` : ""}`);
  });
}

test("rawtrace stats --steps: each step's time, busy shares and launch overhead equal the records' (and XProf's step time)", async () => {
  const file = "h100_torch_train_nvtx.rawtrace";
  const bytes = new Uint8Array(readFileSync(join(ROOT, "samples", file)));
  const dump = readDump(bytes);
  const steps = stepsOf(dump, stepPattern(STEPS[file]));
  const got = await computeStepStats(await createEngine(), memorySource(bytes), { steps: STEPS[file] });
  assert.equal(got.map((s) => s.step), steps.map((s) => s.num));
  const apiEnd = new Map(dump.apis.map((a) => [a.correlation, a.end]));
  for (const [i, s] of steps.entries()) {
    const g = got[i];
    const [a, b] = deviceSpan(s);
    assert.is(g.spanNs, Number(b - a), `step ${s.num} span`);
    assert.is(g.hostNs, Number(s.range.end - s.range.start), `step ${s.num} host time`);
    const work = s.ops.filter((o) => o.kind !== "sync").map((o): [number, number] => [Number(o.start - a), Number(o.end - a)]);
    const kernels = s.ops.filter((o) => o.kind === "kernel");
    const near = (x: number, y: number, what: string) => assert.ok(Math.abs(x - y) < 1e-9, `step ${s.num} ${what}: ${x} vs ${y}`);
    near(g.busyPct, (100 * unionNs(work)) / Number(b - a), "busy %");
    near(g.idlePct, 100 - (100 * unionNs(work)) / Number(b - a), "idle %");
    near(g.kernelPct, (100 * unionNs(kernels.map((o): [number, number] => [Number(o.start - a), Number(o.end - a)]))) / Number(b - a), "kernel %");
    assert.is(g.kernels, kernels.length);
    const launch = kernels.map((o) => Number(o.start - apiEnd.get(o.correlation)!));
    assert.is(g.launchP50Ns, percentile(launch, 50), `step ${s.num} launch p50`);
    assert.is(g.launchP99Ns, percentile(launch, 99), `step ${s.num} launch p99`);
  }
  // Where both compute the step time, rawtrace and XProf agree (XProf's overview leaves out the first and last).
  const path = join(work, "stats.xplane.pb");
  writeFileSync(path, await convert(bytes, "xspace", STEPS[file]));
  const x = run<XprofOut>(xprofPy, "xprof", path);
  x.steps.forEach((xs, i) => assert.ok(Math.abs(xs.step_ms - got[i + 1].spanNs / 1e6) < 2e-6, `step ${got[i + 1].step}: ${xs.step_ms} ms`));
  console.log(`stats --steps: ${got.map((g) => `#${g.step} ${(g.spanNs / 1e6).toFixed(3)} ms ${g.busyPct.toFixed(1)}% busy`).join(", ")}`);
});

test.run();
