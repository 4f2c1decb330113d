/**
 * HTA's answers about launches, queues and copies, computed by HTA 0.5.0 from rawtrace's Chrome JSON, against the
 * same answers computed independently from the raw records (test/interop/fidelity_records.ts reads the container and
 * the CUPTI records itself; nothing here comes from our emitters but the Chrome time base, baseTimeNanoseconds), on
 * the bundled real H100 PyTorch sample (steps: ^train_step$) and the real H100 JAX dump (no steps, many syncs and
 * memsets). test/interop/hta_answers_check.py loads each JSON with `TraceAnalysis(trace_dir)` as a user would and prints:
 *
 *  - get_cuda_kernel_launch_stats: per runtime launch call (cudaLaunchKernel, cudaLaunchKernelExC, cudaMemcpyAsync,
 *    cudaMemsetAsync) joined by correlation with its GPU row: cpu_duration, gpu_duration, launch_delay — exact.
 *  - get_queue_length_time_series / get_queue_length_summary: per stream, +1 at each launch call's start (the calls
 *    above and cuLaunchKernel, when HTA linked them to a GPU row), −1 at its GPU row's start, summed in time order —
 *    the series exact, its describe() within float rounding (1e-9 relative).
 *  - get_memory_bw_time_series / get_memory_bw_summary: per memory kind ("Memcpy HtoD", …, "Memset"), +bandwidth at
 *    each memcpy/memset's start, −bandwidth at its end, summed in time order, and describe() of the positive values.
 *    Bandwidth is bytes / ns of the record; rawtrace writes it to 9 decimals (docs/chrome_json.md), so each value
 *    may be off by 5e-10 GB/s: the series and the summary are compared within 1e-8 GB/s (+1e-9 relative).
 *
 * HTA's rules are applied to the records as HTA defines the answers (hta/analyzers/cuda_kernel_analysis.py,
 * trace_counters.py, common/trace.py, trace_parser.py): times in whole µs (starts rounded up, ends down, so a
 * sub-µs op can last 0 or −1 µs), a "GPU row" is any event with a stream (HTA ignores the stream in launch stats),
 * with two ProfilerSteps or more every CPU event starting at or after the last step's start is dropped with the GPU
 * work it launched, and a memcpy/memset of 0 µs counts as 1 µs in the bandwidth series. Within one µs HTA orders the
 * series with numpy's unstable sort, which nobody can predict: the series are compared as multisets of (time, step)
 * per stream or kind, and the summaries are computed from the records' steps put in the order HTA chose.
 *
 * Kineto's own JSON of two of the dumps (test/fixtures/kineto) must pass the same check, and a corrupted copy of ours
 * (one call's duration, one kernel's stream, one memset's bandwidth) must be caught.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { stepPattern } from "../../src/core/engine.js";
import { toChrome } from "../helpers/convert.js";
import { readDump, stepsOf, type DeviceOp } from "./fidelity_records.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PYTHON = join(ROOT, ".venv/bin/python");
const CHECK = join(ROOT, "test/interop/hta_answers_check.py");

const FILES: Array<{ file: string; steps?: string }> = [
  { file: "samples/h100_torch_train_nvtx.rawtrace", steps: "^train_step$" },
  { file: "test/fixtures/real/h100/jax_step.rawtrace" },
];

type Stats = { count: number; mean: number; std: number | null; min: number; "25%": number; "50%": number; "75%": number; max: number };
interface HtaAnswers {
  hta_version: string;
  min_ts: number;
  launch: Array<[number, number, number, number]>;
  queue: Array<[number, number, number]>;
  queue_summary: Array<{ stream: number } & Stats>;
  membw: Array<[number, string, number]>;
  membw_summary: Array<{ name: string } & Stats>;
}

// ---- HTA's view of the records --------------------------------------------------------------------------------------

/** A row as HTA holds it: µs on the trace's scale, start rounded up, end (start + duration) rounded down. */
interface HRow { ts: number; end: number; corr: number }
interface CpuRow extends HRow { name: string }
interface GpuRow extends HRow { stream: number; op: DeviceOp }
interface View {
  cpu: CpuRow[];
  gpu: GpuRow[];
  /** Correlations with a GPU row before the step filter: a launch call's `index_correlation > 0` in HTA. */
  linked: Set<number>;
}

/** The Chrome JSON's base (µs 0), the one figure taken from our output. */
const baseOf = (json: string) => BigInt(/"baseTimeNanoseconds":\s*(\d+)/.exec(json.slice(0, 65536))![1]);

function htaView(bytes: Uint8Array, steps: string | undefined, base: bigint): View {
  const dump = readDump(bytes);
  const row = (start: bigint, end: bigint, corr: number): HRow => {
    const ts = Number(start - base) / 1000;
    return { ts: Math.ceil(ts), end: Math.floor(ts + Number(end - start) / 1000), corr };
  };
  let cpu: CpuRow[] = dump.apis.map((a) => ({ ...row(a.start, a.end, a.correlation), name: a.name }));
  // Device ops with a stream (a sync without one is -1 in the JSON); CUDA event records (cuda_event rows, JAX)
  // are not read: their correlation is a (hidden) cuEventRecord's, never a launch call's.
  let gpu: GpuRow[] = dump.ops.filter((o) => o.stream !== 0xffffffff).map((o) => ({ ...row(o.start, o.end, o.correlation), stream: o.stream, op: o }));
  const linked = new Set(dump.ops.map((o) => o.correlation));
  // hta/common/trace.py _filter_irrelevant_gpu_kernels (include_last_profiler_step=False): with two ProfilerSteps
  // or more, CPU rows starting before the last step's start, and the GPU rows of their correlations (once per CPU
  // row: it is an inner merge).
  const ranges = stepsOf(dump, stepPattern(steps)).map((s) => s.range);
  if (ranges.length >= 2) {
    const lastStart = Math.max(...ranges.map((r) => row(r.start, r.end, -1).ts));
    cpu = cpu.filter((c) => c.ts < lastStart);
    const n = new Map<number, number>();
    for (const c of cpu) n.set(c.corr, (n.get(c.corr) ?? 0) + 1);
    gpu = gpu.flatMap((g) => Array<GpuRow>(n.get(g.corr) ?? 0).fill(g));
  }
  return { cpu, gpu, linked };
}

function byCorr(rows: GpuRow[]): Map<number, GpuRow[]> {
  const m = new Map<number, GpuRow[]>();
  for (const g of rows) m.set(g.corr, [...(m.get(g.corr) ?? []), g]);
  return m;
}

/**
 * get_cuda_kernel_launch_stats: the runtime launch calls' correlations, every CPU row × GPU row of each. HTA knows
 * only these runtime names: driver launches (jax_step's 1,027 cuLaunchKernel and 175 cuLaunchKernelEx, as Kineto
 * names them too) are not in its answer.
 */
function launchStats(v: View): Array<[number, number, number, number]> {
  const LAUNCH = new Set(["cudaLaunchKernel", "cudaLaunchKernelExC", "cudaMemcpyAsync", "cudaMemsetAsync"]);
  const corrs = new Set(v.cpu.filter((c) => LAUNCH.has(c.name)).map((c) => c.corr));
  const gpu = byCorr(v.gpu);
  return v.cpu.filter((c) => corrs.has(c.corr)).flatMap((c) => (gpu.get(c.corr) ?? []).map((g): [number, number, number, number] =>
    [c.corr, c.end - c.ts, g.end - g.ts, Math.max(0, g.ts - c.ts - (c.end - c.ts))]));
}

/** A step of a counter series: at `ts` (µs), the series of `key` changes by `d`. */
interface Step { key: string; ts: number; d: number }

/**
 * get_queue_length_time_series: +1 at a linked launch call's start, −1 at its GPU row's start, on the GPU row's
 * stream. HTA's list has cuLaunchKernel but not cuLaunchKernelEx (jax_step's 175 are not queued).
 */
function queueSteps(v: View): Step[] {
  const QUEUE = new Set(["cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cudaMemcpyAsync", "cudaMemsetAsync"]);
  const gpu = byCorr(v.gpu);
  const out: Step[] = [];
  for (const c of v.cpu) {
    if (!QUEUE.has(c.name) || !v.linked.has(c.corr)) continue;
    for (const g of gpu.get(c.corr) ?? []) out.push({ key: String(g.stream), ts: c.ts, d: 1 }, { key: String(g.stream), ts: g.ts, d: -1 });
  }
  return out;
}

/** CUPTI's CUpti_ActivityMemcpyKind, as Kineto spells it in "Memcpy HtoD (…)": HTA keeps the name's first 11 characters. */
const COPY_KIND: Record<number, string> = { 1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD", 7: "DtoA", 8: "DtoD", 9: "HtoH", 10: "PtoP" };

/**
 * get_memory_bw_time_series: per kind, +bytes/ns at the op's start, −bytes/ns at start + µs duration (0 → 1). HTA
 * mends only 0 µs: an op lying inside one µs lasts −1 µs, its −bandwidth comes first and the summary never sees it
 * (jax_step: 79 of 631 memsets and 4 of 37 HtoD copies are missing from get_memory_bw_summary's counts for that).
 * Memsets are one more kind to HTA ("Memset": bytes set / ns), as Kineto's JSON has them.
 */
function membwSteps(v: View): Step[] {
  const out: Step[] = [];
  for (const g of v.gpu) {
    if (g.op.kind !== "memcpy" && g.op.kind !== "memset") continue;
    const key = g.op.kind === "memset" ? "Memset" : `Memcpy ${COPY_KIND[g.op.copyKind] ?? "Unknown"}`;
    const ns = g.op.end - g.op.start;
    const bw = ns > 0n ? Number(g.op.bytes) / Number(ns) : 0;
    const dur = g.end - g.ts === 0 ? 1 : g.end - g.ts;
    out.push({ key, ts: g.ts, d: bw }, { key, ts: g.ts + dur, d: -bw });
  }
  return out;
}

// ---- Comparisons (each returns the differences found, empty when none) ----------------------------------------------

const near = (a: number, b: number, abs: number) => Math.abs(a - b) <= abs + 1e-9 * Math.abs(b);
const fmt = (xs: unknown[]) => xs.slice(0, 5).map((x) => JSON.stringify(x)).join("; ") + (xs.length > 5 ? `; … (${xs.length})` : "");

function compareLaunch(got: HtaAnswers["launch"], want: HtaAnswers["launch"]): string[] {
  const key = (r: number[]) => r.join(",");
  const g = got.map(key).sort();
  const w = want.map(key).sort();
  const ws = new Set(w);
  const gs = new Set(g);
  const extra = g.filter((r) => !ws.has(r));
  const missing = w.filter((r) => !gs.has(r));
  const out: string[] = [];
  if (g.length !== w.length) out.push(`HTA has ${g.length} launch rows, the records ${w.length}`);
  if (extra.length) out.push(`HTA's rows not in the records [correlation, cpu, gpu, delay]: ${fmt(extra)}`);
  if (missing.length) out.push(`the records' rows HTA lacks: ${fmt(missing)}`);
  return out;
}

/**
 * HTA's series (rows of key, ts, running value in HTA's order) against the records' steps: per key the rows in time
 * order, and the steps (value minus the previous one) the same multiset of (ts, step) within `tol`. Returns the
 * differences and, per key, the records' steps put in HTA's row order (for the summaries).
 */
function compareSeries(got: Array<[string, number, number]>, want: Step[], tol: number): { diffs: string[]; ordered: Map<string, number[]> } {
  const diffs: string[] = [];
  const ordered = new Map<string, number[]>();
  const gotBy = new Map<string, Array<{ ts: number; d: number; i: number }>>();
  const last = new Map<string, { ts: number; value: number }>();
  for (const [key, ts, value] of got) {
    const rows = gotBy.get(key) ?? [];
    const prev = last.get(key);
    if (prev && ts < prev.ts) diffs.push(`${key}: HTA's rows go back in time at ${ts}`);
    rows.push({ ts, d: value - (prev?.value ?? 0), i: rows.length });
    gotBy.set(key, rows);
    last.set(key, { ts, value });
  }
  const wantBy = new Map<string, Step[]>();
  for (const s of want) wantBy.set(s.key, [...(wantBy.get(s.key) ?? []), s]);
  for (const key of new Set([...gotBy.keys(), ...wantBy.keys()])) {
    const g = [...(gotBy.get(key) ?? [])].sort((a, b) => a.ts - b.ts || a.d - b.d);
    const w = [...(wantBy.get(key) ?? [])].sort((a, b) => a.ts - b.ts || a.d - b.d);
    if (g.length !== w.length) {
      diffs.push(`${key}: HTA has ${g.length} rows, the records ${w.length}`);
      continue;
    }
    const bad = g.flatMap((x, j) => (x.ts === w[j].ts && near(x.d, w[j].d, tol) ? [] : [{ hta: [x.ts, x.d], records: [w[j].ts, w[j].d] }]));
    if (bad.length) diffs.push(`${key}: ${bad.length} of ${g.length} steps differ [ts, step]: ${fmt(bad)}`);
    const seq = new Array<number>(g.length);
    g.forEach((x, j) => (seq[x.i] = w[j].d));
    ordered.set(key, seq);
  }
  return { diffs, ordered };
}

/** pandas' describe() of `xs`: count, mean, std (n − 1), min, quartiles (linear interpolation), max. */
function describe(xs: number[]): Stats {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  const mean = s.reduce((a, b) => a + b, 0) / n;
  const q = (p: number) => {
    const pos = (n - 1) * p;
    const lo = Math.floor(pos);
    return lo + 1 < n ? s[lo] + (s[lo + 1] - s[lo]) * (pos - lo) : s[lo];
  };
  const std = n > 1 ? Math.sqrt(s.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1)) : null;
  return { count: n, mean, std, min: s[0], "25%": q(0.25), "50%": q(0.5), "75%": q(0.75), max: s[n - 1] };
}

function compareSummary(got: Array<{ key: string } & Stats>, want: Map<string, Stats>, tol: number): string[] {
  const out: string[] = [];
  const g = new Map(got.map((r) => [r.key, r]));
  const keys = (m: Map<string, unknown>) => [...m.keys()].sort();
  if (keys(g).join() !== keys(want).join()) out.push(`summary rows: HTA ${keys(g)}, records ${keys(want)}`);
  for (const [key, w] of want) {
    const r = g.get(key);
    if (!r) continue;
    for (const stat of ["count", "mean", "std", "min", "25%", "50%", "75%", "max"] as const) {
      const a = r[stat];
      const b = w[stat];
      if (a === null || b === null ? a !== b : !near(a, b, tol)) out.push(`${key} ${stat}: HTA ${a}, records ${b}`);
    }
  }
  return out;
}

/** Running sums of `steps` (HTA's cumsum). */
const running = (steps: number[]) => { let v = 0; return steps.map((d) => (v += d)); };

/** Every difference between HTA's answers and the records'. */
function differences(hta: HtaAnswers, v: View): { launch: string[]; queue: string[]; membw: string[] } {
  const launch = compareLaunch(hta.launch, launchStats(v));

  const q = compareSeries(hta.queue.map(([ts, stream, len]) => [String(stream), ts, len]), queueSteps(v), 0);
  const qWant = new Map([...q.ordered].map(([k, steps]) => [k, describe(running(steps))]));
  const queue = [...q.diffs, ...compareSummary(hta.queue_summary.map((r) => ({ ...r, key: String(r.stream) })), qWant, 0)];

  const TOL = 1e-8; // GB/s: 9 decimals per value in our JSON, summed
  const m = compareSeries(hta.membw.map(([ts, name, bw]) => [name, ts, bw]), membwSteps(v), TOL);
  // describe() of the positive values; a value within TOL of 0 is a kind at rest (its float remainder is not a sample).
  const mWant = new Map<string, Stats>();
  for (const [k, steps] of m.ordered) {
    const positive = running(steps).filter((x) => x > TOL);
    if (positive.length) mWant.set(k, describe(positive));
  }
  const membw = [...m.diffs, ...compareSummary(hta.membw_summary.map((r) => ({ ...r, key: r.name })), mWant, TOL)];
  return { launch, queue, membw };
}

// ---- The tests ------------------------------------------------------------------------------------------------------

let work = "";
test.before(() => {
  execFileSync("bash", [join(ROOT, "scripts/python-env.sh")], { stdio: ["ignore", "ignore", "inherit"] });
  work = mkdtempSync(join(tmpdir(), "rawtrace-hta-answers-"));
});
test.after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Writes `json` as the one trace of a new directory and runs the checker on it. */
function runHta(name: string, json: string): HtaAnswers {
  const dir = join(work, name);
  mkdirSync(dir);
  writeFileSync(join(dir, "trace.json"), json);
  return JSON.parse(execFileSync(PYTHON, [CHECK, dir], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 << 20 })) as HtaAnswers;
}

for (const { file, steps } of FILES) {
  test(`${file}: HTA's launch stats, queue lengths and memory bandwidth equal the records'`, async () => {
    const bytes = new Uint8Array(readFileSync(join(ROOT, file)));
    const { text } = await toChrome(bytes, { steps });
    const hta = runHta(file.replace(/\//g, "_"), text);
    assert.is(hta.hta_version, "0.5.0");
    const v = htaView(bytes, steps, baseOf(text));
    const d = differences(hta, v);
    assert.equal(d.launch, [], "get_cuda_kernel_launch_stats");
    assert.equal(d.queue, [], "get_queue_length_time_series / summary");
    assert.equal(d.membw, [], "get_memory_bw_time_series / summary");
    assert.ok(hta.launch.length > 0 && hta.queue.length > 0 && hta.membw.length > 0, "every answer has rows");
    const negative = hta.launch.filter((r) => r[2] < 0).length;
    console.log(`${file}: ${hta.launch.length} launches (${negative} of −1 µs on the GPU by HTA's rounding), ${hta.queue.length} queue-length rows on ${hta.queue_summary.length} streams, ` +
      `${hta.membw.length} bandwidth rows of ${hta.membw_summary.map((r) => `${r.name} ×${r.count}`).join(", ")}: as the records`);
  });
}

// Kineto's own JSON of the same records (test/fixtures/kineto: Kineto's ChromeTraceLogger fed the dump's records by
// bench/kineto, see kineto_golden.test.ts) must pass the same check: the answers are the client's, not our writer's.
for (const name of ["jax_step", "torch_nvtx"]) {
  test(`${name}: HTA's answers on Kineto's own JSON of the same dump equal the records' too`, () => {
    const kineto = gunzipSync(readFileSync(join(ROOT, `test/fixtures/kineto/${name}.kineto.json.gz`))).toString("utf8");
    const bytes = new Uint8Array(readFileSync(join(ROOT, `test/fixtures/real/h100/${name}.rawtrace`)));
    const hta = runHta(`kineto-${name}`, kineto);
    const d = differences(hta, htaView(bytes, undefined, baseOf(kineto)));
    assert.equal([...d.launch, ...d.queue, ...d.membw], [], "Kineto's JSON");
    assert.ok(hta.launch.length > 0 && hta.queue.length > 0 && hta.membw.length > 0, "every answer has rows");
    console.log(`${name} (Kineto's JSON): ${hta.launch.length} launches, ${hta.queue.length} queue-length rows, ${hta.membw.length} bandwidth rows: as the records`);
  });
}

test("a corrupted JSON (a launch call's duration, a kernel's stream, a memset's bandwidth) is caught by each answer", async () => {
  const { file, steps } = FILES[0];
  const bytes = new Uint8Array(readFileSync(join(ROOT, file)));
  const { text, trace } = await toChrome(bytes, { steps });
  const v = htaView(bytes, steps, baseOf(text));
  const launches = new Set(launchStats(v).map((r) => r[0]));
  const call = trace.traceEvents.find((e) => e.name === "cudaLaunchKernel" && launches.has(e.args.correlation))!;
  call.dur += 5;
  const kernel = trace.traceEvents.find((e) => e.cat === "kernel" && launches.has(e.args.correlation) && e.args.correlation !== call.args.correlation)!;
  kernel.args.stream += 1000;
  const memset = trace.traceEvents.find((e) => e.cat === "gpu_memset" && launches.has(e.args.correlation))!;
  memset.args["memory bandwidth (GB/s)"] *= 2;
  const d = differences(runHta("corrupted", JSON.stringify(trace)), v);
  assert.ok(d.launch.some((x) => x.includes(`"${call.args.correlation},`)), `launch stats: ${d.launch}`);
  assert.ok(d.queue.some((x) => x.startsWith(`${kernel.args.stream}:`)), `queue length: ${d.queue}`);
  assert.ok(d.membw.some((x) => x.startsWith("Memset:")), `memory bandwidth: ${d.membw}`);
  console.log(`corrupted JSON caught: ${d.launch.length} launch, ${d.queue.length} queue, ${d.membw.length} bandwidth differences`);
});

test.run();
