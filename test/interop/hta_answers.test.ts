/**
 * HTA's answers about kernel launches, computed by HTA 0.5.0 from rawtrace's Chrome JSON, against the
 * same answers computed independently from the raw records (test/interop/fidelity_records.ts reads the container and
 * the CUPTI records itself; nothing here comes from our emitters but the Chrome time base, baseTimeNanoseconds), on
 * the bundled real H100 PyTorch sample (steps: ^train_step$) and the real H100 JAX dump (no steps, many syncs and
 * memsets). test/interop/hta_answers_check.py loads each JSON with `TraceAnalysis(trace_dir)` as a user would and prints:
 *
 *  - get_cuda_kernel_launch_stats: per runtime launch call (cudaLaunchKernel, cudaLaunchKernelExC, cudaMemcpyAsync,
 *    cudaMemsetAsync) joined by correlation with its GPU row: cpu_duration, gpu_duration, launch_delay — exact.
 *
 * HTA's rules are applied to the records as HTA defines the answers (hta/analyzers/cuda_kernel_analysis.py,
 * trace_counters.py, common/trace.py, trace_parser.py): times in whole µs (starts rounded up, ends down, so a
 * sub-µs op can last 0 or −1 µs), a "GPU row" is any event with a stream (HTA ignores the stream in launch stats),
 * and with two ProfilerSteps or more every CPU event starting at or after the last step's start is dropped with the
 * GPU work it launched.
 *
 * A corrupted copy of the JSON (one launch call's duration) must be caught.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
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

interface HtaAnswers {
  hta_version: string;
  min_ts: number;
  launch: Array<[number, number, number, number]>;
}

// ---- HTA's view of the records --------------------------------------------------------------------------------------

/** A row as HTA holds it: µs on the trace's scale, start rounded up, end (start + duration) rounded down. */
interface HRow { ts: number; end: number; corr: number }
interface CpuRow extends HRow { name: string }
interface GpuRow extends HRow { stream: number; op: DeviceOp }
interface View {
  cpu: CpuRow[];
  gpu: GpuRow[];
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
  return { cpu, gpu };
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

// ---- Comparisons (each returns the differences found, empty when none) ----------------------------------------------

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

/** Every difference between HTA's answers and the records'. */
function differences(hta: HtaAnswers, v: View): { launch: string[] } {
  const launch = compareLaunch(hta.launch, launchStats(v));
  return { launch };
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
  test(`${file}: HTA's kernel launch stats equal the records'`, async () => {
    const bytes = new Uint8Array(readFileSync(join(ROOT, file)));
    const { text } = await toChrome(bytes, { steps });
    const hta = runHta(file.replace(/\//g, "_"), text);
    assert.is(hta.hta_version, "0.5.0");
    const v = htaView(bytes, steps, baseOf(text));
    const d = differences(hta, v);
    assert.equal(d.launch, [], "get_cuda_kernel_launch_stats");
    assert.ok(hta.launch.length > 0, "launch rows");
    const negative = hta.launch.filter((r) => r[2] < 0).length;
    console.log(`${file}: ${hta.launch.length} launches (${negative} of −1 µs on the GPU by HTA's rounding): as the records`);
  });
}

test("a corrupted JSON (a launch call's duration) is caught", async () => {
  const { file, steps } = FILES[0];
  const bytes = new Uint8Array(readFileSync(join(ROOT, file)));
  const { text, trace } = await toChrome(bytes, { steps });
  const v = htaView(bytes, steps, baseOf(text));
  const launches = new Set(launchStats(v).map((r) => r[0]));
  const call = trace.traceEvents.find((e) => e.name === "cudaLaunchKernel" && launches.has(e.args.correlation))!;
  call.dur += 5;
  const d = differences(runHta("corrupted", JSON.stringify(trace)), v);
  assert.ok(d.launch.some((x) => x.includes(`"${call.args.correlation},`)), `launch stats: ${d.launch}`);
  console.log(`corrupted JSON caught: ${d.launch.length} launch differences`);
});

test.run();
