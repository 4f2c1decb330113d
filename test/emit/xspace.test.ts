// SPDX-License-Identifier: MIT
/**
 * XSpace output (assembly/emit/xspace.ts): dumps from test/helpers/sample_dump.ts and hand-built records are
 * converted with `format: "xspace"`, decoded with protobuf-es (`fromBinary(XSpaceSchema, …)`) and with Debian's
 * `protoc --decode`, and checked field by field against what XLA writes and XProf reads (docs/xspace.md).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema, type XSpace, type XPlane, type XLine, type XEvent, type XStat } from "../../src/gen/xplane_pb.js";
import { Engine, memorySource, Output, type ConvertOptions, type ConvertResult } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { xspaceProfilePath } from "../../src/node/convert.js";
import { RawtraceWriter } from "../../src/format/writer.js";
import * as C from "../../src/tools/cupti_records.js";
import { sampleDump, T0, PID, TID } from "../helpers/sample_dump.js";
import { chunkSpans } from "../helpers/dump_chunks.js";

// ---- Helpers -------------------------------------------------------------------------------------------------------

let shared: Engine | null = null;

/** Converts dump bytes to XSpace; returns the raw bytes, the decoded message and the conversion result. */
async function toXSpace(bytes: Uint8Array, opts: ConvertOptions = {}): Promise<{ raw: Buffer; space: XSpace; result: ConvertResult }> {
  shared ??= await createEngine();
  const parts: Buffer[] = [];
  const result = await shared.convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { ...opts, format: "xspace" });
  const raw = Buffer.concat(parts);
  return { raw, space: fromBinary(XSpaceSchema, raw), result };
}

function plane(s: XSpace, name: string): XPlane {
  const p = s.planes.find((x) => x.name === name);
  assert.ok(p, `plane ${name}`);
  return p!;
}
function line(p: XPlane, name: string): XLine {
  const l = p.lines.find((x) => x.name === name);
  assert.ok(l, `line ${name} in ${p.name}: ${p.lines.map((x) => x.name).join(" | ")}`);
  return l!;
}
const eventName = (p: XPlane, e: XEvent) => p.eventMetadata[String(e.metadataId)]?.name;
const statName = (p: XPlane, s: XStat) => p.statMetadata[String(s.metadataId)]?.name;

/** Stats of an event or plane as {name: [case, value]}, refs resolved to the referenced metadata's name. */
function stats(p: XPlane, list: XStat[]): Record<string, [string, unknown]> {
  const out: Record<string, [string, unknown]> = {};
  for (const s of list) {
    const name = statName(p, s);
    assert.ok(name !== undefined, `stat metadata ${s.metadataId} exists`);
    assert.not.ok(name! in out, `one stat per metadata id (${name})`);
    const v = s.value;
    out[name!] = v.case === "refValue" ? ["ref", p.statMetadata[String(v.value)]?.name] : [v.case ?? "none", v.value];
  }
  return out;
}

/** Absolute start of an event, Unix ns (profile start + line timestamp + offset). */
function startNs(s: XSpace, l: XLine, e: XEvent): bigint {
  const t = stats(plane(s, "Task Environment"), plane(s, "Task Environment").stats);
  assert.is(e.data.case, "offsetPs");
  const off = e.data.value as bigint;
  assert.is(off % 1000n, 0n, "offsets are whole ns");
  return (t.profile_start_time[1] as bigint) + l.timestampNs + off / 1000n;
}

const L: C.CuptiLayout = "cuda13";
const A100 = {
  id: 0, multiprocessors: 108, globalMemoryBytes: 80n << 30n, memoryBandwidth: 2039000000000n, coreClockKhz: 1410000,
  ccMajor: 8, ccMinor: 0, maxThreadsPerBlock: 1024, maxThreadsPerMultiprocessor: 2048, regsPerBlock: 65536,
  regsPerMultiprocessor: 65536, warpSize: 32, sharedMemPerBlock: 49152, sharedMemPerMultiprocessor: 167936,
  sharedMemPerBlockOptin: 166912, maxBlocksPerMultiprocessor: 32, name: "NVIDIA A100-SXM4-80GB",
};

/** A dump with the HEADER/CLOCK/KIND_SIZES preamble, `names` as STRINGS, optional devices, then `buffers`. */
function dump(buffers: Uint8Array[], o: { devices?: boolean; names?: Array<[bigint, string]>; apis?: Array<[number, number, string]> } = {}): Uint8Array {
  const w = RawtraceWriter.inMemory();
  w.header({ vendor: 1, vendorVersion: C.LAYOUT_VERSION[L], runtimeVersion: 12080, driverVersion: 12080, pid: PID, startNs: T0, hostname: "h", commandLine: "x" });
  w.clock({ which: 0, vendorNs: T0, realtimeNs: T0, monotonicNs: 1n, monotonicRawNs: 1n, boottimeNs: 1n });
  w.kindSizes(Object.entries(C.SIZES[L]).map(([k, s]) => [Number(k), s] as const));
  w.apiNames(o.apis ?? [[2, 211, "cudaLaunchKernel_v7000"], [1, 307, "cuLaunchKernel"]]);
  w.strings(o.names ?? [[0x1000n, "kernel_a"], [0x2000n, "kernel_b"], [0x3000n, "kernel_a"]]);
  if (o.devices ?? true) w.devices([A100]);
  for (const b of buffers) w.activity(b);
  w.end();
  return w.bytes();
}

/** A raw record of `kind` (size from the layout table) filled by `fill`. */
function rec(kind: number, fill: (dv: DataView) => void): Uint8Array {
  const b = new Uint8Array(C.SIZES[L][kind]);
  const dv = new DataView(b.buffer);
  dv.setUint32(0, kind, true);
  fill(dv);
  return b;
}

// ---- Structure -------------------------------------------------------------------------------------------------------

test("Output.XSPACE is sink 2 and format defaults to Chrome JSON", async () => {
  assert.is(Output.XSPACE, 2);
  shared ??= await createEngine();
  const parts: Buffer[] = [];
  await shared.convert(memorySource(sampleDump()), (b) => parts.push(Buffer.from(b)));
  assert.is(Buffer.concat(parts).subarray(0, 1).toString(), "{");
});

test("planes: /host:CPU, one /device:GPU:<n> per device (id = n), /host:metadata, Task Environment; hostnames", async () => {
  const { space, result } = await toXSpace(sampleDump());
  assert.equal(space.planes.map((p) => p.name), ["/host:CPU", "/device:GPU:0", "/host:metadata", "Task Environment"]);
  assert.is(plane(space, "/device:GPU:0").id, 0n);
  assert.equal(space.hostnames, ["gpu-node-1"]);
  assert.is(result.events, 10);
  // The reported base is the profile start: the collector start (T0) precedes the first event (an NVTX mark).
  assert.is(result.baseTimeNs, T0);
  const t = stats(plane(space, "Task Environment"), plane(space, "Task Environment").stats);
  assert.equal(t.profile_start_time, ["uint64Value", T0]);
  // The last event ends at T0 + 20 µs (the "step" range).
  assert.equal(t.profile_stop_time, ["uint64Value", T0 + 20000n]);
});

test("host plane: API calls on the thread's line (id = tid), NVTX ranges on their own line, sorted, exact ps", async () => {
  const { space } = await toXSpace(sampleDump());
  const host = plane(space, "/host:CPU");
  const api = line(host, "pt_main_thread");
  assert.is(api.id, BigInt(TID));
  assert.is(api.displayName, `thread ${TID} (pt_main_thread)`);
  assert.is(api.timestampNs, 1000n, "line starts at its first event, ns after the profile start");
  assert.equal(api.events.map((e) => eventName(host, e)), ["cudaLaunchKernel", "cudaMemcpyAsync"]);
  assert.equal(api.events.map((e) => [e.data.value, e.durationPs]), [[0n, 4000000n], [4500000n, 400000n]]);
  assert.is(startNs(space, api, api.events[1]), T0 + 5500n);
  const nvtx = line(host, "pt_main_thread/NVTX");
  assert.is(nvtx.id, 0x40000000n + BigInt(TID));
  assert.equal(nvtx.events.map((e) => eventName(host, e)), ["NVTX:step", "NVTX:my_domain:forward"]);
  assert.equal(nvtx.events.map((e) => host.eventMetadata[String(e.metadataId)].displayName), ["step", "forward"]);
  assert.equal(nvtx.events.map((e) => e.durationPs), [19500000n, 5400000n]);
  assert.is(startNs(space, nvtx, nvtx.events[0]), T0 + 500n);
  assert.is(startNs(space, nvtx, nvtx.events[1]), T0 + 600n);
  // No unnamed thread: the name comes from THREAD_NAMES.
  assert.ok(host.lines.every((l) => l.name.startsWith("pt_main_thread")));
});

test("launches carry device_id and correlation_id (uint64); the device events carry the same correlation_id", async () => {
  const { space } = await toXSpace(sampleDump());
  const host = plane(space, "/host:CPU");
  const gpu = plane(space, "/device:GPU:0");
  const launch = line(host, "pt_main_thread").events[0];
  assert.equal(stats(host, launch.stats), { device_id: ["uint64Value", 0n], correlation_id: ["uint64Value", 5n] });
  const kernel = line(gpu, "Stream #7(Compute,MemcpyH2D)").events[0];
  assert.equal(stats(gpu, kernel.stats).correlation_id, ["uint64Value", 5n]);
  const copy = line(host, "pt_main_thread").events[1];
  assert.equal(stats(host, copy.stats), { device_id: ["uint64Value", 0n], correlation_id: ["uint64Value", 8n] });
  const memcpy = line(gpu, "Stream #7(Compute,MemcpyH2D)").events[1];
  assert.equal(stats(gpu, memcpy.stats).correlation_id, ["uint64Value", 8n]);
});

test("device plane: stream lines named as XLA (Stream #<id>(<types>)), kernels with every stat and its type", async () => {
  const { space } = await toXSpace(sampleDump());
  const gpu = plane(space, "/device:GPU:0");
  assert.equal(gpu.lines.map((l) => [l.id, l.name]), [
    [7n, "Stream #7(Compute,MemcpyH2D)"],
    [9n, "Stream #9(Memset)"],
    [0x40000007n, "Synchronization (Stream #7)"],
    [0x7fffffffn, "Synchronization (context)"],
  ]);
  const s7 = line(gpu, "Stream #7(Compute,MemcpyH2D)");
  assert.is(s7.timestampNs, 7000n);
  const [k, m, k2] = s7.events;
  assert.is(
    eventName(gpu, k),
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
  );
  assert.is(gpu.eventMetadata[String(k.metadataId)].displayName, "");
  assert.is(k.data.value, 0n);
  assert.is(k.durationPs, 2501000n);
  assert.is(startNs(space, s7, k), T0 + 7000n);
  assert.equal(stats(gpu, k.stats), {
    correlation_id: ["uint64Value", 5n],
    nvtx_range: ["ref", "forward"],
    context_id: ["strValue", "$$1"],
    cuda_graph_id: ["uint64Value", 3n],
    cuda_graph_node_id: ["uint64Value", 9n],
    theoretical_occupancy_pct: ["doubleValue", 100],
    occupancy_min_grid_size: ["int64Value", 264n],
    occupancy_suggested_block_size: ["int64Value", 1024n],
    kernel_details: ["ref", "regs:16 static_shared:1024 dynamic_shared:2048 grid:130,2,1 block:128,1,1 occ_pct:100"],
  });
  assert.is(eventName(gpu, m), "MemcpyHToD");
  assert.is(startNs(space, s7, m), T0 + 10000n);
  assert.equal(stats(gpu, m.stats), {
    correlation_id: ["uint64Value", 8n],
    nvtx_range: ["ref", "forward"],
    context_id: ["strValue", "$$1"],
    memcpy_details: ["ref", "kind_src:pinned kind_dst:device size:4096 dest:0 async:1"],
  });
  // A kernel launched with default shape (1 thread) on an H100: 32 resident blocks of one warp = 32/2048 threads.
  assert.equal(stats(gpu, k2.stats).kernel_details, ["ref", "regs:0 static_shared:0 dynamic_shared:0 grid:1,1,1 block:1,1,1 occ_pct:1.5625"]);
  assert.is(eventName(gpu, k2), 'b"\\\n\t\u0001\ufffd\u007fz', "invalid UTF-8 replaced: strings stay valid");
  const [ms] = line(gpu, "Stream #9(Memset)").events;
  assert.is(eventName(gpu, ms), "Memset 3");
  assert.equal(stats(gpu, ms.stats), {
    correlation_id: ["uint64Value", 11n],
    context_id: ["strValue", "$$1"],
    Memset_details: ["ref", "kind:device num_bytes:256 async:0"],
  });
  const sync = line(gpu, "Synchronization (Stream #7)").events[0];
  assert.is(eventName(gpu, sync), "Stream Sync");
  assert.equal(stats(gpu, sync.stats), { context_id: ["strValue", "$$1"] });
});

test("nvtx_range: the innermost NVTX range open on the launching thread when the launch started", async () => {
  const api = (s: bigint, corr: number, tid = 5) =>
    C.apiRecord(L, { kind: 5, cbid: 211, start: T0 + s, end: T0 + s + 100n, processId: PID, threadId: tid, correlationId: corr });
  const ker = (s: bigint, corr: number) =>
    C.kernelRecord(L, { start: T0 + s + 1000n, end: T0 + s + 1100n, deviceId: 0, contextId: 1, streamId: 1, correlationId: corr, namePtr: 0x1000n });
  const m = (flags: number, ts: bigint, id: number, name = 0n, tid = 5) => C.markerRecord(L, flags, T0 + ts, id, PID, tid, name);
  const { space } = await toXSpace(dump([
    // outer [100, 10000) holds inner [200, 3000); ranges arrive when they end, after the API records.
    C.concat([api(150n, 1), api(500n, 2), api(4000n, 3), api(20000n, 4), api(600n, 5, 6)]),
    C.concat([m(2, 100n, 1, 0x4000n), m(2, 200n, 2, 0x5000n), m(4, 3000n, 2), m(4, 10000n, 1)]),
    C.concat([ker(150n, 1), ker(500n, 2), ker(4000n, 3), ker(20000n, 4), ker(600n, 5)]),
  ], { names: [[0x1000n, "k"], [0x4000n, "outer"], [0x5000n, "inner"]] }));
  const gpu = plane(space, "/device:GPU:0");
  const got = gpu.lines[0].events.map((e) => [stats(gpu, e.stats).correlation_id[1], stats(gpu, e.stats).nvtx_range?.[1]]);
  assert.equal(got, [[1n, "outer"], [2n, "inner"], [5n, undefined], [3n, "outer"], [4n, undefined]]);
  // Launches keep their own stats only (XLA moves the range to the device side).
  const host = plane(space, "/host:CPU");
  assert.not.ok(host.lines.some((l) => l.events.some((e) => "nvtx_range" in stats(host, e.stats))));
});

test("nvtx_range over sparse correlation ids (the map keyed by rank among the device ops' ids) and on graph launches (keyed by id), at every budget", async () => {
  // One outer range around 200 inner ones; launches with ids ≈ 30 apart (hidden calls between them), a kernel per
  // launch, every 7th launch a graph launch instead (GRAPH_TRACE: pass 1 does not note its id); every 10th group of
  // launches outside the inner ranges.
  let x = 11;
  const rnd = () => ((x = (x * 1103515245 + 12345) >>> 0) >>> 8);
  const names: Array<[bigint, string]> = [[0x1000n, "k"], [0x4000n, "outer"]];
  const calls: Uint8Array[] = [C.markerRecord(L, 2, T0 + 1n, 1, PID, 5, 0x4000n)];
  const device: Uint8Array[] = [];
  const want = new Map<bigint, string>(); // correlation id → range name
  let id = 100;
  let t = 100n;
  for (let r = 0; r < 200; r++) {
    const inner = r % 10 !== 9;
    if (inner) {
      names.push([0x10000n + BigInt(r), `r${r}`]);
      calls.push(C.markerRecord(L, 2, T0 + t, r + 2, PID, 5, 0x10000n + BigInt(r)));
    }
    t += 10n;
    for (let k = 0; k < 1 + (rnd() % 4); k++) {
      id += 1 + (rnd() % 30);
      calls.push(C.apiRecord(L, { kind: 5, cbid: 17, start: T0 + t, end: T0 + t + 5n, processId: PID, threadId: 5, correlationId: id }));
      id += 1 + (rnd() % 30);
      const graph = id % 7 === 0;
      calls.push(C.apiRecord(L, { kind: 5, cbid: graph ? 311 : 211, start: T0 + t + 10n, end: T0 + t + 50n, processId: PID, threadId: 5, correlationId: id }));
      const ks = T0 + t + 1000n;
      device.push(graph
        ? C.graphTraceRecord(L, { correlationId: id, start: ks, end: ks + 50n, deviceId: 0, graphId: 3, contextId: 1, streamId: 1 })
        : C.kernelRecord(L, { start: ks, end: ks + 50n, deviceId: 0, contextId: 1, streamId: 1, correlationId: id, namePtr: 0x1000n }));
      want.set(BigInt(id), inner ? `r${r}` : "outer");
      t += 100n;
    }
    if (inner) calls.push(C.markerRecord(L, 4, T0 + t, r + 2, PID, 5, 0n));
    t += 10n;
  }
  calls.push(C.markerRecord(L, 4, T0 + t + 10_000n, 1, PID, 5, 0n));
  const bytes = dump([C.concat(device), C.concat(calls)], {
    names, apis: [[2, 211, "cudaLaunchKernel_v7000"], [2, 17, "cudaGetDevice_v3020"], [2, 311, "cudaGraphLaunch_v10000"]],
  });
  let graphs = 0;
  for (const budget of [0, 1]) {
    shared ??= await createEngine();
    shared.pagedBudgetBytes = budget;
    let space: XSpace;
    try {
      space = (await toXSpace(bytes)).space;
    } finally {
      shared.pagedBudgetBytes = 0;
    }
    const gpu = plane(space, "/device:GPU:0");
    let n = 0;
    for (const l of gpu.lines) for (const e of l.events) {
      const st = stats(gpu, e.stats);
      const corr = st.correlation_id?.[1] as bigint | undefined;
      if (corr === undefined || !want.has(corr)) continue;
      assert.is(st.nvtx_range?.[1], want.get(corr), `budget ${budget}: correlation ${corr} (${eventName(gpu, e)})`);
      if (budget === 0 && corr % 7n === 0n) graphs++;
      n++;
    }
    assert.is(n, want.size, `budget ${budget}: every kernel and graph launch`);
  }
  assert.ok(graphs > 10, `${graphs} graph launches`);
});

test("device capabilities as plane stats with XLA's integer types; CUDA/CUPTI versions on /host:metadata", async () => {
  const { space } = await toXSpace(sampleDump());
  const gpu = plane(space, "/device:GPU:0");
  assert.equal(stats(gpu, gpu.stats), {
    device_vendor: ["strValue", "Nvidia"],
    gpu_device_name: ["strValue", "NVIDIA H100 80GB HBM3"],
    clock_rate: ["int64Value", 1980000n],
    core_count: ["int64Value", 132n],
    memory_bandwidth: ["uint64Value", 3350000000000n],
    memory_size: ["uint64Value", 80n << 30n],
    compute_cap_major: ["int64Value", 9n],
    compute_cap_minor: ["int64Value", 0n],
  });
  const meta = plane(space, "/host:metadata");
  assert.equal(stats(meta, meta.stats), {
    cuda_version: ["strValue", "12080"],
    cuda_runtime_version: ["strValue", "12080"],
    cuda_driver_version: ["strValue", "12080"],
    cupti_version: ["strValue", "130001"],
  });
});

test("metadata is de-duplicated per plane: ids from 1, unique names, one kernel_details string per launch shape", async () => {
  const k = (corr: number, name: bigint, stream: number, t: bigint, blockX = 256) =>
    C.kernelRecord(L, { start: T0 + t, end: T0 + t + 100n, deviceId: 0, contextId: 1, streamId: stream, correlationId: corr, namePtr: name, blockX, registersPerThread: 32 });
  const { space } = await toXSpace(dump([C.concat([
    k(1, 0x1000n, 1, 1000n), k(2, 0x2000n, 1, 2000n), k(3, 0x1000n, 2, 3000n),
    // Same bytes under another pointer: the same metadata.
    k(4, 0x3000n, 2, 4000n),
    k(5, 0x2000n, 1, 5000n, 512),
  ])]));
  const gpu = plane(space, "/device:GPU:0");
  const names = Object.values(gpu.eventMetadata).map((m) => m.name).sort();
  assert.equal(names, ["kernel_a", "kernel_b"]);
  for (const [key, m] of Object.entries(gpu.eventMetadata)) assert.is(String(m.id), key);
  const ids = Object.keys(gpu.statMetadata).map(Number).sort((a, b) => a - b);
  assert.equal(ids, ids.map((_, i) => i + 1), "stat metadata ids 1..n");
  const statNames = Object.values(gpu.statMetadata).map((m) => m.name);
  assert.is(new Set(statNames).size, statNames.length, "stat metadata names unique");
  assert.is(statNames.filter((n) => n.startsWith("regs:")).length, 2, "two launch shapes, two kernel_details strings");
  const refs = gpu.lines.flatMap((l) => l.events).map((e) => stats(gpu, e.stats).kernel_details[1]);
  assert.equal(refs.map((r) => (r as string).match(/block:(\d+)/)![1]), ["256", "256", "512", "256", "256"]);
});

test("theoretical occupancy from the device table: registers and shared memory limits (A100)", async () => {
  const k = (corr: number, regs: number, block: number, dyn: number) =>
    C.kernelRecord(L, { start: T0 + BigInt(corr) * 1000n, end: T0 + BigInt(corr) * 1000n + 10n, deviceId: 0, contextId: 1, streamId: 1, correlationId: corr, namePtr: 0x1000n, blockX: block, registersPerThread: regs, dynamicSharedMemory: dyn });
  const { space } = await toXSpace(dump([C.concat([k(1, 128, 256, 0), k(2, 32, 128, 49152), k(3, 32, 1024, 0)])]));
  const gpu = plane(space, "/device:GPU:0");
  const got = gpu.lines[0].events.map((e) => stats(gpu, e.stats));
  // 128 registers × 256 threads: 16 warps per SM fit the register file → 2 blocks → 25 %.
  assert.equal(got[0].theoretical_occupancy_pct, ["doubleValue", 25]);
  assert.ok((got[0].kernel_details[1] as string).endsWith(" occ_pct:25"));
  // 48 KiB dynamic + 1 KiB reserved per block of 164 KiB per SM → 3 blocks of 128 threads → 18.75 %.
  assert.equal(got[1].theoretical_occupancy_pct, ["doubleValue", 18.75]);
  assert.ok((got[1].kernel_details[1] as string).endsWith(" occ_pct:18.75"));
  // 32 registers × 1024 threads: 2 blocks → 100 %, and 1024 is the suggested block size (2 × 108 SMs).
  assert.equal(got[2].theoretical_occupancy_pct, ["doubleValue", 100]);
  assert.equal(got[2].occupancy_suggested_block_size, ["int64Value", 1024n]);
  assert.equal(got[2].occupancy_min_grid_size, ["int64Value", 216n]);
});

test("occupancy without device properties: 0, as XLA writes it", async () => {
  const { space } = await toXSpace(dump([C.kernelRecord(L, { start: T0 + 10n, end: T0 + 20n, deviceId: 0, contextId: 1, streamId: 1, correlationId: 1, namePtr: 0x1000n, blockX: 128 })], { devices: false }));
  const gpu = plane(space, "/device:GPU:0");
  const s = stats(gpu, gpu.lines[0].events[0].stats);
  assert.equal(s.theoretical_occupancy_pct, ["doubleValue", 0]);
  assert.equal(s.occupancy_min_grid_size, ["int64Value", 0n]);
  assert.equal(s.occupancy_suggested_block_size, ["int64Value", 0n]);
  assert.is(s.kernel_details[1], "regs:0 static_shared:0 dynamic_shared:0 grid:1,1,1 block:128,1,1 occ_pct:0");
  assert.equal(stats(gpu, gpu.stats), { device_vendor: ["strValue", "Nvidia"] });
});

test("AMD kernels: occupancy 0, as XLA's ROCm tracer writes it (NVIDIA's rules are not theirs: every MI250 kernel read 100 % in XProf before)", async () => {
  const { space } = await toXSpace(new Uint8Array(readFileSync("samples/mi250_minitoy_rocprof.rawtrace")));
  const gpus = space.planes.filter((p) => p.name.startsWith("/device:GPU:"));
  let kernels = 0;
  for (const gpu of gpus) {
    for (const e of gpu.lines.flatMap((l) => l.events)) {
      const s = stats(gpu, e.stats);
      if (!s.kernel_details) continue;
      kernels++;
      assert.equal(s.theoretical_occupancy_pct, ["doubleValue", 0]);
      assert.ok((s.kernel_details[1] as string).endsWith(" occ_pct:0"), String(s.kernel_details[1]));
    }
  }
  assert.is(kernels, 14);
});

test("events on a line are sorted by start, parents before children (records arrive in end order)", async () => {
  const api = (kind: 4 | 5, cbid: number, s: bigint, e: bigint, corr: number) =>
    C.apiRecord(L, { kind, cbid, start: T0 + s, end: T0 + e, processId: PID, threadId: 77, correlationId: corr });
  const { space } = await toXSpace(dump([C.concat([
    api(4, 307, 1500n, 2000n, 2), api(5, 211, 1000n, 5000n, 1), api(4, 307, 6000n, 6500n, 3), api(5, 211, 6000n, 9000n, 4),
  ])]), { allApi: true });
  const host = plane(space, "/host:CPU");
  const l = line(host, "thread 77");
  assert.is(l.displayName, "");
  assert.equal(l.events.map((e) => [eventName(host, e), startNs(space, l, e) - T0, e.durationPs]), [
    ["cudaLaunchKernel", 1000n, 4000000n],
    ["cuLaunchKernel", 1500n, 500000n],
    ["cudaLaunchKernel", 6000n, 3000000n],
    ["cuLaunchKernel", 6000n, 500000n],
  ]);
  // No device work for these correlations: no device_id, so XProf does not count them as launches.
  assert.equal(stats(host, l.events[0].stats), { correlation_id: ["uint64Value", 1n] });
});

test("graph executions, event records and tracing overhead (host and device)", async () => {
  const graph = rec(C.CK.GRAPH_TRACE, (dv) => {
    dv.setUint32(4, 21, true);
    dv.setBigUint64(8, T0 + 1000n, true);
    dv.setBigUint64(16, T0 + 3000n, true);
    dv.setUint32(24, 0, true);
    dv.setUint32(28, 3, true);
    dv.setUint32(32, 1, true);
    dv.setUint32(36, 5, true);
  });
  const event = rec(C.CK.CUDA_EVENT, (dv) => {
    dv.setUint32(4, 22, true);
    dv.setUint32(8, 1, true);
    dv.setUint32(12, 5, true);
    dv.setUint32(16, 9, true);
    dv.setUint32(24, 0, true);
    dv.setBigUint64(40, T0 + 4000n, true);
  });
  const overhead = (objKind: number, id0: number, id1: number, s: bigint) => rec(C.CK.OVERHEAD, (dv) => {
    dv.setUint32(4, 0x10000, true);
    dv.setUint32(8, objKind, true);
    dv.setUint32(12, id0, true);
    dv.setUint32(16, id1, true);
    dv.setBigUint64(24, T0 + s, true);
    dv.setBigUint64(32, T0 + s + 50n, true);
  });
  const { space } = await toXSpace(dump([C.concat([graph, event, overhead(2, PID, 88, 100n), overhead(3, 0, 1, 200n)])]));
  const gpu = plane(space, "/device:GPU:0");
  const s5 = line(gpu, "Stream #5(CudaGraph)");
  assert.is(eventName(gpu, s5.events[0]), "CudaGraphExec:3");
  assert.equal(stats(gpu, s5.events[0].stats), {
    correlation_id: ["uint64Value", 21n], context_id: ["strValue", "$$1"], cuda_graph_id: ["uint64Value", 3n],
    cuda_graph_exec_id: ["uint64Value", 3n],
  });
  const rec5 = line(gpu, "Synchronization (Stream #5)").events[0];
  assert.is(eventName(gpu, rec5), "Event Record");
  assert.is(rec5.durationPs, 0n);
  const dev = line(gpu, "CUPTI overhead");
  assert.is(dev.id, 0x7ffffffen);
  assert.is(eventName(gpu, dev.events[0]), "Buffer Flush");
  const host = plane(space, "/host:CPU");
  const ho = line(host, "CUPTI overhead");
  assert.is(ho.id, 0x20000000n, "one host overhead line for every thread");
  assert.is(ho.events[0].durationPs, 50000n);
});

test("dropped records and decode warnings go to XSpace.warnings; a dump without END or cut says so in XSpace.errors", async () => {
  const { space } = await toXSpace(sampleDump());
  assert.equal(space.errors, []);
  assert.equal(space.warnings, [
    "Detected GPU events dropped on gpu-node-1: Profiler has collected 4 driver events and 6 device events. 7 events dropped because the collector reported lost records.",
    `rawtrace DROPPED_RECORDS: 1 occurrence (first at file offset ${chunkSpans(sampleDump()).find((c) => c.type === 8)!.off}, detail 7)`,
  ]);
  // No END chunk: the collector did not finish, its last buffers may be lost (a loss, as --strict counts it).
  const open = await toXSpace(sampleDump({ end: false }));
  assert.ok(open.space.errors.some((w) => w.startsWith("rawtrace NO_END: 1 occurrence")), open.space.errors.join("\n"));
  // A cut file loses data: that is an error.
  const bytes = sampleDump();
  const cut = await toXSpace(bytes.subarray(0, bytes.length - 5));
  assert.ok(cut.space.errors.some((w) => w.startsWith("rawtrace TRUNCATED")), cut.space.errors.join("\n"));
});

test("a dump with no events still gives a valid XSpace (empty host plane, no device plane)", async () => {
  const { space, result } = await toXSpace(dump([]));
  assert.is(result.events, 0);
  assert.equal(space.planes.map((p) => [p.name, p.lines.length]), [
    ["/host:CPU", 0], ["/host:metadata", 0], ["Task Environment", 0],
  ]);
  const t = stats(plane(space, "Task Environment"), plane(space, "Task Environment").stats);
  assert.equal(t.profile_start_time, ["uint64Value", T0]);
  assert.equal(t.profile_stop_time, ["uint64Value", T0]);
});

test("eight GPUs in DEVICES, activity on two: only those two get a plane, each with its own capabilities", async () => {
  const w = RawtraceWriter.inMemory();
  w.header({ vendor: 1, vendorVersion: C.LAYOUT_VERSION[L], runtimeVersion: 12080, driverVersion: 12080, pid: PID, startNs: T0, hostname: "h", commandLine: "x" });
  w.clock({ which: 0, vendorNs: T0, realtimeNs: T0, monotonicNs: 1n, monotonicRawNs: 1n, boottimeNs: 1n });
  w.kindSizes(Object.entries(C.SIZES[L]).map(([k, s]) => [Number(k), s] as const));
  w.strings([[0x1000n, "kernel_a"]]);
  // Devices 0..7, told apart by their SM count (100 + id).
  w.devices(Array.from({ length: 8 }, (_, id) => ({ ...A100, id, multiprocessors: 100 + id })));
  const k = (device: number, i: number) => C.kernelRecord(L, {
    start: T0 + BigInt(1000 + i * 100), end: T0 + BigInt(1050 + i * 100), deviceId: device, contextId: 1, streamId: 7,
    correlationId: i + 1, namePtr: 0x1000n, gridX: 1, blockX: 32,
  });
  w.activity(C.concat([k(5, 0), k(2, 1), k(5, 2)]));
  w.end();
  const { space } = await toXSpace(w.bytes());
  assert.equal(space.planes.map((p) => [p.name, p.id]), [
    ["/host:CPU", 0n], ["/device:GPU:2", 2n], ["/device:GPU:5", 5n], ["/host:metadata", 0n], ["Task Environment", 0n],
  ]);
  for (const [name, id, n] of [["/device:GPU:2", 2, 1], ["/device:GPU:5", 5, 2]] as const) {
    const p = plane(space, name);
    assert.equal(stats(p, p.stats).core_count, ["int64Value", BigInt(100 + id)]);
    assert.equal(p.lines.map((l) => [l.name, l.events.length]), [["Stream #7(Compute)", n]]);
  }
});

test("many events: varint sizes past one byte, several output windows, chunked line buffers", async () => {
  const recs: Uint8Array[] = [];
  const apis: Uint8Array[] = [];
  const N = 40000;
  for (let i = 0; i < N; i++) {
    const t = BigInt(i) * 3000n;
    apis.push(C.apiRecord(L, { kind: 5, cbid: 211, start: T0 + 100n + t, end: T0 + 900n + t, processId: PID, threadId: TID, correlationId: i + 1 }));
    recs.push(C.kernelRecord(L, {
      start: T0 + 1000n + t, end: T0 + 2000n + t + BigInt(i % 7), deviceId: 0, contextId: 1, streamId: 7 + (i % 3), correlationId: i + 1,
      namePtr: i % 2 ? 0x1000n : 0x2000n, gridX: 1 + (i % 300), blockX: 128, registersPerThread: 40,
    }));
  }
  const { space, raw } = await toXSpace(dump([C.concat(apis), C.concat(recs)]));
  const gpu = plane(space, "/device:GPU:0");
  assert.is(gpu.lines.reduce((n, l) => n + l.events.length, 0), N);
  assert.ok(Object.keys(gpu.statMetadata).length > 300, "stat ids beyond one varint byte");
  assert.ok(raw.length > 2 << 20, "more than one 1 MiB output window");
  const host = plane(space, "/host:CPU");
  const l = line(host, "thread " + TID);
  assert.is(l.events.length, N);
  const last = l.events[N - 1];
  assert.is(startNs(space, l, last), T0 + 100n + BigInt(N - 1) * 3000n);
  assert.equal(stats(host, last.stats), { device_id: ["uint64Value", 0n], correlation_id: ["uint64Value", BigInt(N)] });
  for (const dl of gpu.lines) {
    let prev = -1n;
    for (const e of dl.events) {
      assert.ok((e.data.value as bigint) >= prev, "sorted");
      prev = e.data.value as bigint;
    }
  }
});

test("varints of every length: offsets and durations in ps past 2^42, CUDA graph node ids up to 2^64 - 1", async () => {
  // A line's offsets and durations grow from 0 through varints of 1 to 8 bytes (2^51 ps: 37 minutes; the decoder
  // drops events hours away); the kernels' graph node ids take 1 to 10 bytes.
  const apis: Uint8Array[] = [];
  const kernels: Uint8Array[] = [];
  const spans: bigint[] = [];
  for (let b = 0; b <= 51; b += 3) spans.push((1n << BigInt(b)) / 1000n + BigInt(b));
  const node = (i: number) => (i == 0 ? 1n : i == spans.length - 1 ? (1n << 64n) - 1n : (1n << BigInt(3 * i + 1)) - 1n);
  let t = 0n;
  spans.forEach((d, i) => {
    t += d;
    apis.push(C.apiRecord(L, { kind: 5, cbid: 211, start: T0 + t, end: T0 + t + d, processId: PID, threadId: TID, correlationId: i + 1 }));
    kernels.push(C.kernelRecord(L, {
      start: T0 + t, end: T0 + t + 1n + d, deviceId: 0, contextId: 1, streamId: 7, correlationId: i + 1, namePtr: 0x1000n,
      gridX: 1, blockX: 128, registersPerThread: 40, graphId: 1, graphNodeId: node(i),
    }));
  });
  const { space } = await toXSpace(dump([C.concat(apis), C.concat(kernels)]));
  const host = plane(space, "/host:CPU");
  const l = line(host, "thread " + TID);
  assert.is(l.events.length, spans.length);
  let t2 = 0n;
  spans.forEach((d, i) => {
    t2 += d;
    const e = l.events[i];
    assert.is(startNs(space, l, e), T0 + t2);
    assert.is(e.durationPs, d * 1000n);
  });
  const gpu = plane(space, "/device:GPU:0");
  const k = line(gpu, "Stream #7(Compute)");
  assert.is(k.events.length, spans.length);
  k.events.forEach((e, i) => {
    assert.is(e.durationPs, (spans[i] + 1n) * 1000n);
    assert.equal(stats(gpu, e.stats).cuda_graph_node_id, ["uint64Value", node(i)]);
  });
});

// ---- protoc ----------------------------------------------------------------------------------------------------------

/** Debian's protoc, installed on first use when missing (root + apt-get), as a fresh CI machine needs. */
function protoc(): string | null {
  if (spawnSync("protoc", ["--version"]).status === 0) return "protoc";
  if (process.getuid?.() === 0 && spawnSync("sh", ["-c", "command -v apt-get"]).status === 0) {
    const r = spawnSync("sh", ["-c", "(apt-get update -qq && apt-get install -y -qq protobuf-compiler) >/dev/null 2>&1"], { stdio: "inherit" });
    if (r.status === 0 && spawnSync("protoc", ["--version"]).status === 0) return "protoc";
  }
  return null;
}

test("protoc --decode tensorflow.profiler.XSpace reads the bytes with our .proto (no unknown fields)", async () => {
  const bin = protoc();
  assert.ok(bin, "protoc is installed (apt-get install -y protobuf-compiler)");
  const { raw } = await toXSpace(sampleDump());
  const r = spawnSync(bin!, ["--decode", "tensorflow.profiler.XSpace", "-I", "proto", "proto/xplane.proto"], { input: raw, maxBuffer: 64 << 20 });
  assert.is(r.status, 0, r.stderr?.toString());
  const text = r.stdout.toString();
  assert.ok(text.includes('name: "/device:GPU:0"'));
  assert.ok(text.includes('str_value: "$$1"'));
  assert.ok(text.includes('name: "Stream #7(Compute,MemcpyH2D)"'));
  assert.ok(text.includes('name: "regs:16 static_shared:1024 dynamic_shared:2048 grid:130,2,1 block:128,1,1 occ_pct:100"'));
  assert.ok(text.includes("hostnames: \"gpu-node-1\""));
  // Fields our schema does not know would print as bare numbers ("12: 34").
  assert.not.ok(/^\s*\d+: /m.test(text), "no unknown fields");
  // Re-encoding the text form gives the same bytes back: canonical field order and encoding.
  const back = spawnSync(bin!, ["--encode", "tensorflow.profiler.XSpace", "-I", "proto", "proto/xplane.proto"], { input: r.stdout, maxBuffer: 64 << 20 });
  assert.is(back.status, 0, back.stderr?.toString());
  assert.is(Buffer.compare(back.stdout, raw), 0, "byte-identical to protoc's own encoding");
});

test("run directory layout for TensorBoard/XProf: plugins/profile/<UTC start>/<host>.xplane.pb", () => {
  assert.is(xspaceProfilePath("logs", T0, "gpu-node-1"), "logs/plugins/profile/2026_05_28_20_26_40/gpu-node-1.xplane.pb");
  assert.is(xspaceProfilePath("/x", 0n, "a b/c"), "/x/plugins/profile/1970_01_01_00_00_00/a_b_c.xplane.pb");
  assert.is(xspaceProfilePath("/x", 0n, ""), "/x/plugins/profile/1970_01_01_00_00_00/unknown_host.xplane.pb");
  // A number of ns is taken as well (it threw "Cannot mix BigInt and other types"); what is not whole ns ≥ 0 is USAGE.
  assert.is(xspaceProfilePath("logs", Number(T0), "gpu-node-1"), "logs/plugins/profile/2026_05_28_20_26_40/gpu-node-1.xplane.pb");
  for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, -1n, "17" as unknown as bigint]) {
    let e: unknown = null;
    try {
      xspaceProfilePath("/x", bad, "h");
    } catch (x) {
      e = x;
    }
    assert.is((e as { code?: string })?.code, "USAGE", `${String(bad)}: ${String(e)}`);
  }
});

test.run();
