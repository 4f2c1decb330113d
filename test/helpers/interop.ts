/** Shared pieces of the interop tests with the real Python clients (XProf, HTA). */
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as assert from "uvu/assert";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema, type XPlane, type XSpace } from "../../src/gen/xplane_pb.js";
import { statOf } from "../../src/tools/xspace_to_kineto.js";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { xspaceProfilePath } from "../../src/node/convert.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

let python = "";

/** The pinned XProf's python (scripts/xprof-env.sh creates .venv-xprof on first use; later calls reuse it). */
export function xprofPython(): string {
  if (python) return python;
  const r = spawnSync("bash", ["scripts/xprof-env.sh"], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 900_000 });
  assert.is(r.status, 0, "scripts/xprof-env.sh failed");
  python = r.stdout.trim().split("\n").pop()!;
  assert.ok(existsSync(python), python);
  return python;
}

/** Rows of a Chrome JSON that HTA counts as GPU work, per (name, category), with summed durations (µs). */
export interface StreamRow {
  name: string;
  cat: string;
  count: number;
  sum_us: number;
}

/**
 * The rows HTA counts as GPU kernels in a Chrome JSON: X events whose `args.stream` is a stream (not -1), summed per
 * (name, category), sorted by name then category.
 */
export function gpuStreamRows(json: string): StreamRow[] {
  const t = JSON.parse(json) as { traceEvents: Array<{ ph: string; cat: string; name: string; dur?: number; args?: { stream?: number } }> };
  const rows = new Map<string, StreamRow>();
  for (const e of t.traceEvents) {
    const s = e.args?.stream;
    if (e.ph !== "X" || typeof s !== "number" || s === -1) continue;
    const key = `${e.name}\0${e.cat}`;
    const r = rows.get(key) ?? { name: e.name, cat: e.cat, count: 0, sum_us: 0 };
    r.count++;
    r.sum_us += e.dur ?? 0;
    rows.set(key, r);
  }
  return [...rows.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.cat < b.cat ? -1 : 1));
}

/**
 * GPU rows of a Chrome JSON that have a launch call in it: X events with `args.stream` ≥ 0 and `args.correlation` > 0
 * whose correlation some X event without a stream (a host call) also carries. HTA must join each to its call.
 */
export function linkedGpuRows(json: string): number {
  const t = JSON.parse(json) as { traceEvents: Array<{ ph: string; args?: { stream?: number; correlation?: number } }> };
  const calls = new Set<number>();
  const gpu: number[] = [];
  for (const e of t.traceEvents) {
    const c = e.args?.correlation;
    if (e.ph !== "X" || typeof c !== "number" || c <= 0) continue;
    const s = e.args?.stream;
    if (typeof s === "number" && s >= 0) gpu.push(c);
    else calls.add(c);
  }
  return gpu.filter((c) => calls.has(c)).length;
}

/** What test/interop/xprof_check.py compares (see its docstring). Times in ns after the profile start. */
export interface XprofExpect {
  device_events: Array<{
    plane: string; row_prefix: string; name: string; ts_ns: number; dur_ns: number; correlation: number;
    kernel: { regs: number; shmem: number; block: string; grid: string } | null;
  }>;
  launches: Array<{ name: string; tid: number; ts_ns: number; dur_ns: number; correlation: number; device: number; plane: string }>;
  /**
   * Optional: rows expected in the trace viewer (per plane, the display name of each line), and events checked by
   * their stats only (xprof_check.py).
   */
  rows?: Record<string, string[]>;
  stats_only?: unknown[];
  /** Optional: counter tracks of trace_viewer@ per plane and name, samples [ts_ns, value]. */
  counters?: Array<{ plane: string; name: string; samples: number[][] }>;
}

/** What test/interop/xprof_check.py found: ok, the failed comparisons, and what XProf showed. */
export interface XprofResult {
  ok: boolean;
  failures: string[];
  summary: Record<string, unknown>;
}

/**
 * Converts `bytes` to XSpace in the TensorBoard log-directory layout under `join(work, name)`; returns the file, its
 * profile start (Unix ns, the `profile_start_time` stat of the Task Environment plane) and the parsed XSpace.
 */
export async function writeXprofSpace(
  bytes: Uint8Array, work: string, name: string,
): Promise<{ file: string; start: bigint; space: XSpace }> {
  const parts: Buffer[] = [];
  const r = await (await createEngine()).convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
  const file = xspaceProfilePath(join(work, name), r.baseTimeNs, r.info.hostname);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, Buffer.concat(parts));
  const space = fromBinary(XSpaceSchema, readFileSync(file));
  const env = space.planes.find((p) => p.name === "Task Environment")!;
  const id = Object.values(env.statMetadata).find((m) => m.name === "profile_start_time")!.id;
  return { file, start: env.stats.find((x) => x.metadataId === id)!.value.value as bigint, space };
}

/** Runs test/interop/xprof_check.py on `file` (an XSpace from {@link writeXprofSpace}) with expectations `e`. */
export function xprofCheck(file: string, e: XprofExpect): XprofResult {
  const ef = join(dirname(file), "expect.json");
  writeFileSync(ef, JSON.stringify(e));
  const r = spawnSync(xprofPython(), ["test/interop/xprof_check.py", file, ef], { encoding: "utf8", maxBuffer: 64 << 20, timeout: 300_000 });
  const last = r.stdout.trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(last);
  } catch {
    throw new Error(`checker printed no result (rc ${r.status}):\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-4000)}`);
  }
}

/**
 * A real XSpace file (../shared/data/real/xspace/) through test/interop/xprof_check.py with no expectations, laid out
 * as a log directory under `work`: what XProf shows of it (its summary's `kernel_stats` rows).
 */
export function xprofCheckReal(work: string, path: string): XprofResult {
  const dir = join(work, "real", "plugins", "profile", "run");
  mkdirSync(dir, { recursive: true });
  copyFileSync(path, join(dir, "host.xplane.pb"));
  return xprofCheck(join(dir, "host.xplane.pb"), { device_events: [], launches: [] });
}

/** The plane stats XProf reads a GPU's capabilities from, as text: `keys` (default all of them) that `p` has. */
export function planeCapabilities(
  p: XPlane, keys = ["device_vendor", "clock_rate", "core_count", "memory_bandwidth", "memory_size", "compute_cap_major", "compute_cap_minor"],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of keys) {
    const v = statOf(p, p, k);
    if (v !== undefined) out[k] = String(v);
  }
  return out;
}

/**
 * xprof_check.py's kernel_stats rows ([name, grid, block, regs, shmem, occurrences, total ns]) summed per name, launch
 * shape and registers (and shared memory with `shmem`): XProf splits a real file's rows further by the framework op
 * the kernels ran under (TensorFlow's, XLA's annotations), which no vendor record holds.
 */
export function summedKernelStats(rows: unknown, shmem: boolean): Array<[string, [number, number]]> {
  const m = new Map<string, [number, number]>();
  for (const [name, grid, block, regs, sh, n, ns] of rows as Array<[string, string, string, number, number, number, number]>) {
    const k = `${name} grid ${grid} block ${block} regs ${regs}${shmem ? ` shmem ${sh}` : ""}`;
    const t = m.get(k) ?? [0, 0];
    m.set(k, [t[0] + n, t[1] + ns]);
  }
  return [...m].sort();
}

/** One rank of test/interop/hta_check.py's report: HTA's GPU rows and its kernel breakdown (µs). */
export interface HtaRank {
  /** GPU rows HTA joined to their launch call (index_correlation > 0). */
  linked_gpu: number;
  kernels: StreamRow[];
  breakdown: Array<{ name: string; kernel_type: string; sum_us: number }>;
}
/** test/interop/hta_check.py's report, traces keyed by directory name (relative to the work directory). */
export interface HtaReport {
  hta_version: string;
  /** Per directory; `expected_linked`: {@link linkedGpuRows} of our JSON, set by {@link runHta} for converted dumps. */
  traces: Record<string, { ranks: Record<string, HtaRank>; expected_linked?: number }>;
}

/**
 * Converts each dump of `dumps` to Chrome JSON as `<work>/<dir>/rank-0.json`, writes each of `extra` (ready Chrome
 * JSON text) the same way, and runs test/interop/hta_check.py (the .venv HTA) on all those directories. Returns the
 * report and, per dump, the GPU rows of our JSON ({@link gpuStreamRows}).
 */
export async function runHta(
  work: string, dumps: Record<string, Uint8Array>, extra: Record<string, Uint8Array> = {},
): Promise<{ report: HtaReport; ours: Record<string, StreamRow[]> }> {
  execFileSync("bash", [join(ROOT, "scripts/python-env.sh")], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  const ours: Record<string, StreamRow[]> = {};
  const linked: Record<string, number> = {};
  const engine = await createEngine();
  for (const [dir, bytes] of Object.entries(dumps)) {
    const parts: Buffer[] = [];
    await engine.convert(memorySource(bytes, `${dir}.rawtrace`), (b) => parts.push(Buffer.from(b)));
    const json = Buffer.concat(parts).toString("utf8");
    mkdirSync(join(work, dir));
    writeFileSync(join(work, dir, "rank-0.json"), json);
    ours[dir] = gpuStreamRows(json);
    linked[dir] = linkedGpuRows(json);
  }
  for (const [dir, json] of Object.entries(extra)) {
    mkdirSync(join(work, dir));
    writeFileSync(join(work, dir, "rank-0.json"), json);
  }
  const dirs = [...Object.keys(dumps), ...Object.keys(extra)];
  const out = execFileSync(join(ROOT, ".venv/bin/python"), [join(ROOT, "test/interop/hta_check.py"), ...dirs.map((d) => join(work, d))], {
    encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 << 20,
  });
  const raw = JSON.parse(out) as HtaReport;
  const report: HtaReport = { hta_version: raw.hta_version, traces: {} };
  for (const [d, t] of Object.entries(raw.traces)) {
    const dir = d.slice(work.length + 1);
    report.traces[dir] = dir in linked ? { ...t, expected_linked: linked[dir] } : t;
  }
  return { report, ours };
}

/** The one rank HTA found in trace directory `dir`, after asserting that its GPU rows are `ours` (names, categories, counts). */
export function htaRankMatching(report: HtaReport, dir: string, ours: StreamRow[]): HtaRank {
  const ranks = Object.values(report.traces[dir].ranks);
  assert.is(ranks.length, 1);
  const hta = ranks[0];
  const shape = (k: StreamRow[]) => k.map((r) => `${r.cat} ×${r.count} ${r.name}`).sort();
  assert.equal(shape(hta.kernels), shape(ours), "HTA's GPU rows differ from rawtrace's");
  // Every GPU row whose launch call is in the JSON is joined to it (HTA read a link to the trace's first element,
  // index 0, as "no link": chrome_meta.ts chromeLead).
  const want = report.traces[dir].expected_linked;
  if (want !== undefined) assert.is(hta.linked_gpu, want, `${dir}: HTA joined ${hta.linked_gpu} GPU rows to their launch, the JSON links ${want}`);
  return hta;
}
