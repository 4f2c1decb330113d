// SPDX-License-Identifier: MIT
/**
 * XSpace output opened by the real consumer: XProf 2.24.2 (the TensorBoard profile plugin's converters), pinned in
 * scripts/requirements-xprof.txt and installed into the ignored .venv-xprof/ by scripts/xprof-env.sh on first run.
 * test/interop/xprof_check.py runs trace_viewer, trace_viewer@, kernel_stats, overview_page and tool_names on each
 * file and compares what XProf shows with what the dump holds (rows, times to the ns, flows, kernel launch shapes).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { XSpaceSchema, XPlaneSchema, XLineSchema, XEventSchema, XEventMetadataSchema, type XSpace } from "../../src/gen/xplane_pb.js";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { xspaceProfilePath } from "../../src/node/convert.js";
import { RawtraceWriter } from "../../src/format/writer.js";
import * as C from "../../src/tools/cupti_records.js";
import { sampleDump, T0, TID } from "../helpers/sample_dump.js";
import { xprofPython } from "../helpers/interop.js";

const REAL_KINETO = "../shared/data/real/kineto-cuda/alexnet_a100_rank0.json.gz";
const KINETO_TOOL = "src/tools/kineto_to_rawtrace.ts";

interface DeviceEvent {
  plane: string;
  row_prefix: string;
  name: string;
  ts_ns: number;
  dur_ns: number;
  correlation: number;
  kernel: { regs: number; shmem: number; block: string; grid: string } | null;
}
interface Launch {
  name: string;
  tid: number;
  ts_ns: number;
  dur_ns: number;
  correlation: number;
  device: number;
  plane: string;
}
interface Expect {
  device_events: DeviceEvent[];
  launches: Launch[];
  /** Per plane, the row names that must each be exactly one trace-viewer row (no two lines sharing a display id). */
  rows?: Record<string, string[]>;
}
/** What XProf logged (its C++ log lines on the checker's stderr). */
interface XProfLog {
  /** "Found derived XLine with clashing display ID" warnings. */
  clashing: number;
  /** "Exceeding the range of derived line ids" warnings (too many stream lines for XProf's derived-line ids). */
  exceeding: number;
}
interface CheckResult {
  ok: boolean;
  failures: string[];
  summary: Record<string, unknown>;
  log: XProfLog;
}

const work = mkdtempSync(join(tmpdir(), "rawtrace-xprof-"));

/** Runs the checker on `file` (inside a plugins/profile/<run>/ directory) with expectations `e`. */
function check(file: string, e: Expect): CheckResult {
  const ef = join(dirname(file), "expect.json");
  writeFileSync(ef, JSON.stringify(e));
  const r = spawnSync(xprofPython(), ["test/interop/xprof_check.py", file, ef], { encoding: "utf8", maxBuffer: 64 << 20, timeout: 300_000 });
  const last = r.stdout.trim().split("\n").pop() ?? "";
  let res: CheckResult;
  try {
    res = JSON.parse(last);
  } catch {
    throw new Error(`checker printed no result (rc ${r.status}):\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-4000)}`);
  }
  if (!res.ok) console.log(res.failures.join("\n"));
  const count = (re: RegExp) => r.stderr.split("\n").filter((l) => re.test(l)).length;
  res.log = { clashing: count(/Found derived XLine with clashing display ID/), exceeding: count(/Exceeding the range of derived line ids/) };
  return res;
}

/** Converts dump bytes to XSpace in the TensorBoard layout under a fresh log directory; returns the file. */
async function writeXSpace(bytes: Uint8Array, name: string): Promise<string> {
  const engine = await createEngine();
  const parts: Buffer[] = [];
  const r = await engine.convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
  const file = xspaceProfilePath(join(work, name), r.baseTimeNs, r.info.hostname);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, Buffer.concat(parts));
  return file;
}

type KinetoTool = typeof import("../../src/tools/kineto_to_rawtrace.js");

/**
 * What XProf must show for a round-tripped Kineto trace: every device op on its GPU plane and stream row, every
 * runtime launch with its flow. `base`: the XSpace's profile start (Unix ns). A rank of a host merge: `corrHi` is
 * its correlation range (index × 2^32) and `label` the prefix of its device rows.
 */
function roundTripExpect(K: KinetoTool, trace: Parameters<KinetoTool["expectedRoundTripView"]>[0], base: bigint, corrHi = 0, label = ""): Expect {
  const view = K.expectedRoundTripView(trace);
  const copyName: Record<string, string> = { HtoD: "MemcpyHToD", DtoH: "MemcpyDToH", DtoD: "MemcpyDToD", PtoP: "MemcpyP2P" };
  const memKind: Record<string, number> = {
    Pageable: 1, Pinned: 2, Device: 3, Array: 4, Managed: 5, "Device Static": 6, "Managed Static": 7,
  };
  const e: Expect = { device_events: [], launches: [] };
  const corrDevice = new Map<number, number>();
  for (const op of view.ops) {
    let name = op.name;
    if (op.cat === "gpu_memcpy") name = copyName[/^Memcpy (\w+)/.exec(op.name)?.[1] ?? ""] ?? "MemcpyOther";
    if (op.cat === "gpu_memset") name = `Memset ${memKind[/^Memset \((.*)\)$/.exec(op.name)?.[1] ?? ""] ?? 0}`;
    e.device_events.push({
      plane: `/device:GPU:${op.pid}`, row_prefix: `${label}Stream #${op.tid}(`, name, ts_ns: Number(op.ts - base), dur_ns: Number(op.dur),
      correlation: corrHi + op.correlation,
      kernel: op.cat === "kernel"
        ? { regs: op.registersPerThread ?? 0, shmem: op.sharedMemory ?? 0, block: (op.block ?? [1, 1, 1]).join(","), grid: (op.grid ?? [1, 1, 1]).join(",") }
        : null,
    });
    corrDevice.set(op.correlation, op.pid);
  }
  for (const a of view.api) {
    const d = corrDevice.get(a.correlation);
    if (d === undefined || a.cat !== "cuda_runtime") continue;
    e.launches.push({
      name: a.name, tid: a.tid, ts_ns: Number(a.ts - base), dur_ns: Number(a.dur), correlation: corrHi + a.correlation,
      device: d, plane: `/device:GPU:${d}`,
    });
  }
  return e;
}

/** profile_start_time of an XSpace file (Unix ns). */
function profileStart(file: string): bigint {
  const s = fromBinary(XSpaceSchema, readFileSync(file));
  const t = s.planes.find((p) => p.name === "Task Environment")!;
  const id = Object.values(t.statMetadata).find((m) => m.name === "profile_start_time")!.id;
  return t.stats.find((x) => x.metadataId === id)!.value.value as bigint;
}

test("sample dump through the CLI: rows, ns times, launch→kernel flows, kernel stats, overview, tool names", () => {
  const dump = join(work, "sample.rawtrace");
  writeFileSync(dump, sampleDump());
  const logdir = join(work, "cli_logdir");
  const r = spawnSync(process.execPath, ["--import", "tsx", "src/cli.ts", "convert", dump, "--format", "xspace", "-o", logdir], { encoding: "utf8" });
  assert.is(r.status, 0, r.stderr);
  const runs = readdirSync(join(logdir, "plugins", "profile"));
  assert.equal(runs, ["2026_05_28_20_26_40"], "run named after the profile start (UTC)");
  const file = join(logdir, "plugins", "profile", runs[0], "gpu-node-1.xplane.pb");
  assert.ok(existsSync(file));
  const kernelName =
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)";
  const gpu = "/device:GPU:0";
  const res = check(file, {
    device_events: [
      { plane: gpu, row_prefix: "Stream #7(", name: kernelName, ts_ns: 7000, dur_ns: 2501, correlation: 5, kernel: { regs: 16, shmem: 3072, block: "128,1,1", grid: "130,2,1" } },
      { plane: gpu, row_prefix: "Stream #7(", name: "MemcpyHToD", ts_ns: 10000, dur_ns: 2000, correlation: 8, kernel: null },
      { plane: gpu, row_prefix: "Stream #7(", name: 'b"\\\n\t\u0001\ufffd\u007fz', ts_ns: 13000, dur_ns: 500, correlation: 9, kernel: { regs: 0, shmem: 0, block: "1,1,1", grid: "1,1,1" } },
      { plane: gpu, row_prefix: "Stream #9(Memset)", name: "Memset 3", ts_ns: 12100, dur_ns: 100, correlation: 11, kernel: null },
    ],
    launches: [
      { name: "cudaLaunchKernel", tid: TID, ts_ns: 1000, dur_ns: 4000, correlation: 5, device: 0, plane: gpu },
      { name: "cudaMemcpyAsync", tid: TID, ts_ns: 5500, dur_ns: 400, correlation: 8, device: 0, plane: gpu },
    ],
  });
  assert.ok(res.ok, res.failures.join("\n"));
  assert.is(res.summary.flow_arrows, 2);
  assert.is(res.summary.kernel_stats_rows, 2);
  assert.ok((res.summary.processes as string[]).includes("/host:CPU"));
});

test("two GPUs, two threads: every kernel on its own device plane and stream row, flows from the right thread", async () => {
  const L: C.CuptiLayout = "cuda13";
  const w = RawtraceWriter.inMemory();
  w.header({ vendor: 1, vendorVersion: C.LAYOUT_VERSION[L], runtimeVersion: 12080, driverVersion: 12080, pid: 500, startNs: T0, hostname: "two-gpu-host", commandLine: "x" });
  w.clock({ which: 0, vendorNs: T0, realtimeNs: T0, monotonicNs: 1n, monotonicRawNs: 1n, boottimeNs: 1n });
  w.kindSizes(Object.entries(C.SIZES[L]).map(([k, s]) => [Number(k), s] as const));
  w.apiNames([[2, 211, "cudaLaunchKernel_v7000"]]);
  w.strings([[0x10n, "gemm_kernel"], [0x20n, "relu_kernel"]]);
  const dev = (id: number) => ({
    id, multiprocessors: 108, globalMemoryBytes: 40n << 30n, memoryBandwidth: 1555000000000n, coreClockKhz: 1410000,
    ccMajor: 8, ccMinor: 0, maxThreadsPerBlock: 1024, maxThreadsPerMultiprocessor: 2048, regsPerBlock: 65536,
    regsPerMultiprocessor: 65536, warpSize: 32, sharedMemPerBlock: 49152, sharedMemPerMultiprocessor: 167936,
    sharedMemPerBlockOptin: 166912, maxBlocksPerMultiprocessor: 32, name: "NVIDIA A100-SXM4-40GB",
  });
  w.devices([dev(0), dev(1)]);
  w.threadNames([[500, 10, "worker0"], [500, 11, "worker1"]]);
  const api: Uint8Array[] = [];
  const ker: Uint8Array[] = [];
  const e: Expect = { device_events: [], launches: [] };
  for (let i = 0; i < 8; i++) {
    const d = i < 4 ? 0 : 1;
    const tid = 10 + d;
    const stream = d === 0 ? 3 : 5;
    const ts = 2000 + i * 10000;
    const ks = ts + 3000;
    const kd = 1000 + i * 37;
    const name = i % 2 ? "relu_kernel" : "gemm_kernel";
    api.push(C.apiRecord(L, { kind: 5, cbid: 211, start: T0 + BigInt(ts), end: T0 + BigInt(ts + 1500), processId: 500, threadId: tid, correlationId: i + 1 }));
    ker.push(C.kernelRecord(L, {
      start: T0 + BigInt(ks), end: T0 + BigInt(ks + kd), deviceId: d, contextId: d + 1, streamId: stream, correlationId: i + 1,
      namePtr: i % 2 ? 0x20n : 0x10n, gridX: 64 * (d + 1), gridY: 2, blockX: 256, registersPerThread: 64, staticSharedMemory: 1024, dynamicSharedMemory: 8192,
    }));
    e.device_events.push({ plane: `/device:GPU:${d}`, row_prefix: `Stream #${stream}(Compute)`, name, ts_ns: ks, dur_ns: kd, correlation: i + 1, kernel: { regs: 64, shmem: 9216, block: "256,1,1", grid: `${64 * (d + 1)},2,1` } });
    e.launches.push({ name: "cudaLaunchKernel", tid, ts_ns: ts, dur_ns: 1500, correlation: i + 1, device: d, plane: `/device:GPU:${d}` });
  }
  w.activity(C.concat(api));
  w.activity(C.concat(ker));
  w.end();
  const file = await writeXSpace(w.bytes(), "two_gpu");
  const res = check(file, e);
  assert.ok(res.ok, res.failures.join("\n"));
  assert.is(res.summary.flow_arrows, 8);
  assert.ok((res.summary.processes as string[]).includes("/device:GPU:1"));
});

test("real trace: PyTorch AlexNet on A100 (Kineto) → rawtrace → XSpace opens in XProf with every kernel in place", async () => {
  if (!existsSync(KINETO_TOOL)) {
    console.log(`  skipped: ${KINETO_TOOL} is not there yet`);
    return;
  }
  assert.ok(existsSync(REAL_KINETO), REAL_KINETO);
  const K = await import("../../src/tools/kineto_to_rawtrace.js");
  const trace = K.readKinetoTrace(REAL_KINETO);
  const { bytes } = K.convertKineto(trace, { layout: "cuda13" });
  const file = await writeXSpace(bytes, "alexnet");
  const e = roundTripExpect(K, trace, profileStart(file));
  const kernels = e.device_events.filter((d) => d.kernel).length;
  assert.is(kernels, 79, "the trace's 79 kernels");
  const res = check(file, e);
  assert.ok(res.ok, res.failures.join("\n"));
  assert.is(res.summary.flow_arrows, e.launches.length);
  console.log(`  alexnet: ${e.device_events.length} device events (${kernels} kernels), ${e.launches.length} launches with flows, ${res.summary.kernel_stats_rows} kernel_stats rows`);
});

test("eight real DLRM ranks on one host → one XSpace: every rank's kernels on its GPU, every launch's flow, one kernel_stats", async () => {
  const K = await import("../../src/tools/kineto_to_rawtrace.js");
  const { dlrmRanks } = await import("../helpers/dlrm.js");
  const { merge } = await import("../../src/node/merge.js");
  const ranks = dlrmRanks();
  const dir = join(work, "dlrm");
  mkdirSync(dir, { recursive: true });
  const paths = ranks.map((r) => {
    const p = join(dir, `rank${r.rank}.rawtrace`);
    writeFileSync(p, r.bytes);
    return p;
  });
  const m = await merge(paths, join(dir, "logdir"), { format: "xspace", jobs: 2 });
  assert.is(new Set(m.outputs).size, 1, "one XSpace for the one host");
  const file = m.outputs[0];
  assert.match(file, /\/roundtrip\.xplane\.pb$/);
  const base = profileStart(file);
  const e: Expect = { device_events: [], launches: [] };
  ranks.forEach((r, k) => {
    const x = roundTripExpect(K, r.original, base, k * 2 ** 32, `rank ${r.rank}: `);
    e.device_events.push(...x.device_events);
    e.launches.push(...x.launches);
  });
  const res = check(file, e);
  assert.ok(res.ok, res.failures.join("\n"));
  assert.is(res.summary.flow_arrows, e.launches.length);
  const planes = (res.summary.processes as string[]).filter((p) => p.startsWith("/device:GPU:"));
  assert.is(planes.length, 8, "eight GPU planes");
  console.log(`  dlrm merged: ${e.device_events.length} device events, ${e.launches.length} launches with flows, ` +
    `${res.summary.kernel_stats_rows} kernel_stats rows, ${res.summary.trace_viewer_events} trace_viewer events`);
});

/**
 * An XSpace laid out as XLA's GPU tracer writes one (xprof's own derived_timeline tests build the same): planes
 * `/device:GPU:<n>` for `ids`, each with one stream line (id 0) holding one event. The yardstick for what XProf logs
 * whatever the producer: XProf 2.24.2 adds an empty Steps line (kThreadIdStepInfo) to every GPU plane before it
 * orders the lines, never orders that line, and its check tests `display_id() || id()` (a bool), so it logs
 * "clashing display ID: 1" once per GPU plane with a line, for this layout too.
 */
function xlaLayoutXSpace(name: string, ids: bigint[]): string {
  const planes = ids.map((id) => create(XPlaneSchema, {
    id, name: `/device:GPU:${id}`,
    lines: [create(XLineSchema, {
      id: 0n, name: "Stream #0(Compute)", timestampNs: 1000n,
      events: [create(XEventSchema, { metadataId: 1n, data: { case: "offsetPs", value: 0n }, durationPs: 5000n })],
    })],
    eventMetadata: { "1": create(XEventMetadataSchema, { id: 1n, name: "kernel" }) },
  }));
  const file = join(work, name, "plugins", "profile", "run", "host.xplane.pb");
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, toBinary(XSpaceSchema, create(XSpaceSchema, { planes, hostnames: ["host"] })));
  return file;
}

/** Per plane that XProf's trace viewer shows (host threads, GPUs), the display name of each line with events. */
function rowsOf(space: XSpace): Record<string, string[]> {
  const rows: Record<string, string[]> = {};
  for (const p of space.planes) {
    if (p.name !== "/host:CPU" && !p.name.startsWith("/device:GPU:")) continue;
    rows[p.name] = p.lines.filter((l) => l.events.length > 0).map((l) => l.displayName || l.name);
  }
  return rows;
}

test("every bundled sample: each of our lines its own trace-viewer row, and no clashing display id beyond XProf's own", async () => {
  const samples = readdirSync("samples").filter((f) => f.endsWith(".rawtrace")).sort();
  assert.ok(samples.length >= 2, samples.join(", "));
  for (const name of samples) {
    const file = await writeXSpace(readFileSync(join("samples", name)), `sample_${name}`);
    const space = fromBinary(XSpaceSchema, readFileSync(file));
    const rows = rowsOf(space);
    const res = check(file, { device_events: [], launches: [], rows });
    assert.ok(res.ok, `${name}: ${res.failures.join("\n")}`);
    const gpus = space.planes.filter((p) => p.name.startsWith("/device:GPU:") && p.lines.length > 0).map((p) => p.id);
    assert.ok(gpus.length > 0, `${name} has device planes`);
    const ref = check(xlaLayoutXSpace(`xla_layout_${name}`, gpus), { device_events: [], launches: [] });
    assert.is(res.log.exceeding, 0, `${name}: XProf ran out of derived line ids`);
    assert.ok(res.log.clashing <= ref.log.clashing,
      `${name}: ${res.log.clashing} clashing-display-id warnings, XLA's own layout with the same GPU planes gets ${ref.log.clashing}`);
    console.log(`  ${name}: ${res.summary.rows_checked} rows each shown once; clashing-display-id warnings: ours ${res.log.clashing}, ` +
      `XLA layout ${ref.log.clashing} (XProf's own Steps line)`);
  }
});

test.after(() => {
  rmSync(work, { recursive: true, force: true });
});

test.run();
