/**
 * Arithmetic on device-table and record values that can be 0 or huge (0x7fffffff, 0xffffffff, 2^63), and ids or
 * pointers that are missing or all ones: every output path (Chrome JSON, XSpace, timeline, stats) must convert such
 * dumps to a defined result, never trap, wrap, loop or read memory that is not the value.
 * The rules (docs/xspace.md, docs/errors.md): occupancy is 0 when the device table lacks a field or holds an
 * implausible value; sums saturate at 2^64 - 1; picosecond times saturate; rows keyed by 32-bit ids never collide.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { XPlane, XStat } from "../../src/gen/xplane_pb.js";
import * as C from "../../src/tools/cupti_records.js";
import {
  DEVICE_U32_FIELDS, H100, LAYOUT, T0, allOutputs, craftedDump, deviceAll, kernel, type AllOutputs,
} from "../helpers/crafted_dump.js";

const U64_MAX = 0xffffffffffffffffn;

/** Stats of an XSpace event as {name: value}, refs resolved to the referenced metadata's name. */
function xstats(p: XPlane, list: XStat[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of list) {
    const name = p.statMetadata[String(s.metadataId)]?.name;
    assert.ok(name !== undefined, `stat metadata ${s.metadataId}`);
    out[name!] = s.value.case === "refValue" ? p.statMetadata[String(s.value.value)]?.name : s.value.value;
  }
  return out;
}

function gpuPlane(o: AllOutputs, id = 0): XPlane {
  const p = o.xspace.planes.find((x) => x.name === `/device:GPU:${id}`);
  assert.ok(p, `/device:GPU:${id} in ${o.xspace.planes.map((x) => x.name).join(", ")}`);
  return p!;
}

/** The kernels of GPU plane `id`, as their stats, in start order. */
function xkernels(o: AllOutputs, id = 0): Array<Record<string, unknown>> {
  const p = gpuPlane(o, id);
  return p.lines.flatMap((l) => l.events).map((e) => xstats(p, e.stats)).filter((s) => "kernel_details" in s);
}

/** Checks that hold for every output of every dump here: finite times, every event on every path. */
function sane(o: AllOutputs): void {
  for (const e of o.chrome.traceEvents) {
    if (e.ph === "X") assert.ok(Number.isFinite(e.ts) && Number.isFinite(e.dur) && e.dur >= 0, `finite ts/dur: ${e.name}`);
    for (const v of Object.values(e.args ?? {})) if (typeof v === "number") assert.ok(Number.isFinite(v));
  }
  assert.is(o.timeline.meta.header.events, o.result.events, "timeline: every event");
  assert.is(o.timeline.events.length, o.timeline.meta.header.events);
  for (let i = 0; i < o.timeline.events.length; i++) assert.ok(o.timeline.events.dur(i) >= 0);
  for (const d of o.stats.devices) assert.ok(Number.isFinite(d.busyPercent) && d.busyNs >= 0);
}

const KERNELS = [kernel(1000n, 1), kernel(2000n, 2, { blockX: 1024 }), kernel(3000n, 3, { blockX: 96, dynamicSharedMemory: 100000 })];

for (const v of [0, 0x7fffffff, 0x80000000, 0xffffffff]) {
  test(`device table with every u32 field 0x${v.toString(16)}: all paths convert, occupancy 0`, async () => {
    const o = await allOutputs(craftedDump([deviceAll(v)], KERNELS));
    sane(o);
    const props = o.chrome.deviceProperties[0];
    assert.is(props.warpSize, v, "Chrome JSON deviceProperties: the table's values as they are");
    assert.is(props.numSms, v);
    const ks = o.chrome.traceEvents.filter((e) => e.cat === "kernel");
    assert.is(ks.length, 3);
    for (const k of ks) {
      if (v === 0) assert.not.ok("blocks per SM" in k.args, "no SM count: no per-SM figures");
      else assert.ok(k.args["blocks per SM"] >= 0 && k.args["warps per SM"] >= 0);
    }
    for (const s of xkernels(o)) {
      assert.is(s.theoretical_occupancy_pct, 0);
      assert.is(s.occupancy_min_grid_size, 0n);
      assert.is(s.occupancy_suggested_block_size, 0n);
      assert.match(s.kernel_details as string, / occ_pct:0$/);
    }
    assert.is(o.stats.devices[0].kernels, 3);
  });
}

// One field of a real table at a time. Occupancy of a 128-thread, 32-register block on an H100 is 100 % (16 blocks,
// limited by warps and registers): fields the calculation does not need, or whose limit does not bind, keep it;
// a missing (0) or implausible compute capability, warp size, max threads per block or per SM, or SM count beyond
// 65,536 makes it 0.
const NO_OCCUPANCY: Record<string, number[]> = {
  ccMajor: [0],
  warpSize: [0, 0x7fffffff, 0xffffffff],
  maxThreadsPerBlock: [0, 0x7fffffff, 0xffffffff],
  maxThreadsPerMultiprocessor: [0, 0x7fffffff, 0xffffffff],
  multiprocessors: [0x7fffffff, 0xffffffff],
};

test("device table with one hostile field: occupancy is the real one or 0, never a trap", async () => {
  let checked = 0;
  for (const field of DEVICE_U32_FIELDS) {
    for (const v of [0, 0x7fffffff, 0xffffffff]) {
      const o = await allOutputs(craftedDump([{ ...H100, [field]: v }], [kernel(1000n, 1)]));
      sane(o);
      const [s] = xkernels(o);
      const none = NO_OCCUPANCY[field]?.includes(v) ?? false;
      const what = `${field} = 0x${v.toString(16)}`;
      assert.is(s.theoretical_occupancy_pct, none ? 0 : 100, what);
      assert.is(s.occupancy_suggested_block_size, none ? 0n : 1024n, what);
      // Minimum grid: 2 blocks of 1024 per SM × the SM count (0 when the table has none).
      const sms = field === "multiprocessors" ? v : H100.multiprocessors;
      assert.is(s.occupancy_min_grid_size, none ? 0n : BigInt(2 * sms), what);
      checked++;
    }
  }
  assert.is(checked, DEVICE_U32_FIELDS.length * 3);
});

test("the fuzz finding: warp size 0x7fffffff no longer divides by zero in the XSpace occupancy", async () => {
  const o = await allOutputs(craftedDump([{ ...H100, warpSize: 0x7fffffff }], [kernel(1000n, 1, { registersPerThread: 16 })]));
  assert.is(xkernels(o)[0].theoretical_occupancy_pct, 0);
});

test("hostile launch shapes: huge grids and blocks, 255/65535 registers, shared memory 0xffffffff", async () => {
  const big = 0x7fffffff;
  const o = await allOutputs(craftedDump([H100], [
    kernel(1000n, 1, { gridX: big, gridY: big, gridZ: big }),
    kernel(2000n, 2, { blockX: big, blockY: 2, blockZ: 3 }),
    kernel(3000n, 3, { registersPerThread: 255 }),
    kernel(4000n, 4, { registersPerThread: 65535 }),
    kernel(5000n, 5, { staticSharedMemory: -1, dynamicSharedMemory: -1 }),
    kernel(6000n, 6, { blockX: 0, blockY: 0, blockZ: 0 }),
    kernel(7000n, 7, { gridY: 0x10000, gridZ: 0x10001, blockX: 2048, blockY: 4096, blockZ: 1024 }),
  ]));
  sane(o);
  const ks = o.chrome.traceEvents.filter((e) => e.cat === "kernel");
  assert.equal(ks[0].args.grid, [big, big, big]);
  // 2^93 blocks over 132 SMs: finite JSON numbers, written as 1e18 from 1e18 up (emit/out.ts fixed).
  assert.is(ks[0].args["blocks per SM"], 1e18);
  assert.is(ks[1].args["blocks per SM"], 0.007576, "6 decimals");
  const xs = xkernels(o);
  assert.match(xs[0].kernel_details as string, /grid:2147483647,2147483647,2147483647 /);
  assert.is(xs[0].theoretical_occupancy_pct, 100, "the grid does not enter the occupancy");
  for (const i of [1, 3, 4, 5]) assert.is(xs[i].theoretical_occupancy_pct, 0, `kernel ${i + 1} does not fit an SM`);
  // 255 registers × 4 warps: 255 × 32 rounded up to 8192 registers per warp → 2 warps per partition → 8 warps per SM.
  assert.is(xs[2].theoretical_occupancy_pct, 12.5);
  assert.match(xs[4].kernel_details as string, /static_shared:4294967295 dynamic_shared:4294967295 /);
  // Timeline: packed launch dimensions saturate at their fields' largest values instead of keeping low bits.
  const ev = o.timeline.events;
  assert.equal([ev.word(6, 10), ev.word(6, 11)], [0xffffffff, (0x7ff | (0x7ff << 11) | (0x3ff << 22)) >>> 0]);
  assert.is(ev.word(1, 11), 0x7ff | (2 << 11) | (3 << 22));
  assert.is(o.stats.devices[0].kernels, 7);
});

test("device id 0xffffffff (no device table): a device of its own on every path", async () => {
  const o = await allOutputs(craftedDump([], [kernel(1000n, 1, { deviceId: 0xffffffff })]));
  sane(o);
  assert.equal(o.stats.devices.map((d) => [d.id, d.kernels]), [[0xffffffff, 1]]);
  assert.is(xkernels(o, 0xffffffff).length, 1);
  assert.is(o.chrome.traceEvents.find((e) => e.cat === "kernel")!.pid, 0xffffffff);
  assert.is(o.timeline.meta.rows[1], 0xffffffff, "timeline row of device 0xffffffff");
});

test("stream 0xfffffffe: its sync row is named and keyed by the stream (tid = stream + 1,000,000)", async () => {
  const o = await allOutputs(craftedDump([H100], [
    C.syncRecord(LAYOUT, { type: 3, start: T0 + 100n, end: T0 + 200n, correlationId: 1, contextId: 1, streamId: 0xfffffffe }),
    C.syncRecord(LAYOUT, { type: 3, start: T0 + 300n, end: T0 + 400n, correlationId: 2, contextId: 1, streamId: 5 }),
  ]));
  sane(o);
  const tid = 0xfffffffe + 1_000_000;
  const sync = o.chrome.traceEvents.filter((e) => e.cat === "cuda_sync");
  assert.equal(sync.map((e) => e.tid), [tid, 1_000_005]);
  const names = o.chrome.traceEvents.filter((e) => e.ph === "M" && e.name === "thread_name" && e.pid === 0);
  assert.equal(names.map((e) => [e.tid, e.args.name]).sort(), [[1_000_005, "stream 5 (sync)"], [tid, "stream 4294967294 (sync)"]]);
});

test("memcpy bandwidth of 2^64 - 1 bytes in 1 µs: the right number, not a saturated one", async () => {
  const o = await allOutputs(craftedDump([H100], [
    C.memcpyRecord(LAYOUT, { start: T0 + 1000n, end: T0 + 2000n, deviceId: 0, contextId: 1, streamId: 7, correlationId: 1, bytes: U64_MAX, copyKind: 1, srcKind: 2, dstKind: 3 }),
  ]));
  sane(o);
  const bw = o.chrome.traceEvents.find((e) => e.cat === "gpu_memcpy")!.args["memory bandwidth (GB/s)"];
  assert.ok(Math.abs(bw / (2 ** 64 / 1000) - 1) < 1e-9, `bandwidth ${bw}`);
  assert.ok(Math.abs(o.stats.copies[0].bandwidthGBs / (2 ** 64 / 1000) - 1) < 1e-9);
});

test("stats sums saturate at 2^64 - 1 instead of wrapping", async () => {
  const half = 1n << 63n;
  const copy = (at: bigint, corr: number) =>
    C.memcpyRecord(LAYOUT, { start: T0 + at, end: T0 + at + 10n, deviceId: 0, contextId: 1, streamId: 7, correlationId: corr, bytes: half, copyKind: 1, srcKind: 2, dstKind: 3 });
  const o = await allOutputs(craftedDump([H100], [copy(1000n, 1), copy(2000n, 2)]));
  sane(o);
  assert.is(o.stats.copies[0].bytes, 2 ** 64, "2^64 - 1 (as a JS number), not 0");
  assert.is(o.stats.devices[0].memcpyBytes, 2 ** 64);
  assert.is(o.chrome.traceEvents.filter((e) => e.cat === "gpu_memcpy")[1].args.bytes, 2 ** 63);
});

test("a duration beyond 2^63 ps: dropped as outside the run (BAD_TIMESTAMP), never a wrapped or negative int64", async () => {
  // 255 days in ns (2.2e19 ps): the timing rule (model/timing.ts, docs/errors.md "Timestamps") drops it long before
  // XSpace's int64 saturation (kept below as the last guard) could matter; no output holds a negative or wrapped time.
  const long = 22_000_000_000_000_000n;
  const o = await allOutputs(craftedDump([H100], [kernel(1000n, 1, { end: T0 + 1000n + long }), kernel(5000n, 2)]));
  sane(o);
  assert.ok(o.result.info.warnings.some((w) => w.code === "BAD_TIMESTAMP"), "counted as BAD_TIMESTAMP");
  const evs = gpuPlane(o).lines.flatMap((l) => l.events);
  assert.is(evs.length, 1, "only the valid kernel");
  for (const ev of evs) assert.ok(ev.durationPs >= 0n && ev.durationPs < 1n << 63n);
  assert.equal(o.chrome.traceEvents.filter((e) => e.cat === "kernel").map((e) => e.args.correlation), [2]);
});

test("string pointer 0xffffffffffffffff: a name like any other", async () => {
  const o = await allOutputs(craftedDump([H100], [kernel(1000n, 1, { namePtr: U64_MAX })], [[U64_MAX, "kernel_max"]]));
  sane(o);
  assert.is(o.chrome.traceEvents.find((e) => e.cat === "kernel")!.name, "kernel_max");
  assert.not.ok(o.result.info.warnings.some((w) => w.code === "MISSING_STRING"));
  // Thread (pid, tid) = (2^32 - 1, 2^32 - 1): its rows exist on every path (the table key is all ones).
  const api = C.apiRecord(LAYOUT, { kind: 5, cbid: 211, start: T0 + 10n, end: T0 + 20n, processId: 0xffffffff, threadId: 0xffffffff, correlationId: 1 });
  const p = await allOutputs(craftedDump([H100], [api]));
  sane(p);
  assert.is(p.chrome.traceEvents.filter((e) => e.cat === "cuda_runtime").length, 1);
});

test("timeline rows: pids and devices that differ only above bit 24 get rows of their own", async () => {
  const api = (pid: number, at: bigint, corr: number) =>
    C.apiRecord(LAYOUT, { kind: 5, cbid: 211, start: T0 + at, end: T0 + at + 10n, processId: pid, threadId: 9, correlationId: corr });
  const o = await allOutputs(craftedDump([H100], [
    api(1, 100n, 1), api(0x1000001, 200n, 2), api(0xffffffff, 300n, 3),
    kernel(1000n, 4, { deviceId: 2 }), kernel(2000n, 5, { deviceId: 0x1000002 }),
  ]));
  sane(o);
  const rows = o.timeline.meta.rows;
  const got: Array<[number, number, number, number]> = [];
  for (let i = 0; i < o.timeline.meta.header.rows; i++) got.push([rows[i * 8], rows[i * 8 + 1], rows[i * 8 + 2], rows[i * 8 + 7]]);
  // class, a (pid or device), b (tid or stream), events: host rows first, then GPU rows, each by a.
  assert.equal(got, [[2, 1, 9, 1], [2, 0x1000001, 9, 1], [2, 0xffffffff, 9, 1], [9, 2, 7, 1], [9, 0x1000002, 7, 1]]);
});

test("NVTX ranges projected onto devices 256 and 0x1000000: each on its own device (not device & 0xff)", async () => {
  const launch = (at: bigint, corr: number) =>
    C.apiRecord(LAYOUT, { kind: 5, cbid: 211, start: T0 + at, end: T0 + at + 10n, processId: 7, threadId: 8, correlationId: corr });
  const o = await allOutputs(craftedDump([H100], [
    C.markerRecord(LAYOUT, 2, T0 + 100n, 1, 7, 8, 0x3000n),
    launch(200n, 1), launch(300n, 2), launch(400n, 3),
    C.markerRecord(LAYOUT, 4, T0 + 500n, 1, 7, 8, 0n),
    kernel(1000n, 1, { deviceId: 256 }), kernel(2000n, 2, { deviceId: 0 }), kernel(3000n, 3, { deviceId: 0x1000000 }),
  ], [[0x3000n, "step"]]));
  sane(o);
  const spans = o.chrome.traceEvents.filter((e) => e.cat === "gpu_user_annotation");
  // Kineto's gpu_user_annotation carries no device arg (HTA would count it as a kernel): the pid is the device.
  assert.equal(spans.map((e) => [e.name, e.pid]).sort((x, y) => x[1] - y[1]), [
    ["step", 0], ["step", 256], ["step", 0x1000000],
  ]);
});

test("XSpace line ids stay distinct in their low 32 bits when stream ids reach 2^30", async () => {
  const sync = (stream: number, corr: number) =>
    C.syncRecord(LAYOUT, { type: 3, start: T0 + BigInt(corr) * 100n, end: T0 + BigInt(corr) * 100n + 10n, correlationId: corr, contextId: 1, streamId: stream });
  const o = await allOutputs(craftedDump([H100], [
    sync(5, 1), sync(0x40000005, 2), kernel(1000n, 3, { streamId: 0x40000005 }), sync(0x7ffffffe, 4),
  ]));
  sane(o);
  const lines = gpuPlane(o).lines;
  assert.is(lines.length, 4);
  const low = lines.map((l) => Number(l.id & 0xffffffffn));
  assert.is(new Set(low).size, 4, `distinct ids: ${lines.map((l) => `${l.name}=${l.id}`).join(", ")}`);
  // Sync lines are 2^30 | stream: streams 5 and 0x40000005 and the kernel line of 0x40000005 all map to 0x40000005.
  assert.is(lines.find((l) => l.name === "Synchronization (Stream #5)")!.id, 0x40000005n, "the first line keeps its id");
  assert.is(lines.find((l) => l.name === "Stream #1073741829(Compute)")!.id, 0x40000005n + 2n * (1n << 22n));
});

test("a kernel starting at timestamp 0: stats busy time stays within the trace span", async () => {
  const o = await allOutputs(craftedDump([H100], [kernel(1000n, 1), kernel(0n, 2, { start: 0n, end: T0 + 2000n })]));
  sane(o);
  for (const d of o.stats.devices) {
    assert.ok(d.busyNs <= o.stats.spanNs, `busy ${d.busyNs} ns within the span of ${o.stats.spanNs} ns`);
    assert.ok(d.busyPercent <= 100, `busy ${d.busyPercent} %`);
  }
});

test("a marker whose name is missing gets an empty name, not the last name's length read at address 0", async () => {
  const o = await allOutputs(craftedDump([H100], [
    C.markerRecord(LAYOUT, 1, T0 + 100n, 1, 7, 8, 0x3000n),
    C.markerRecord(LAYOUT, 1, T0 + 200n, 2, 7, 8, 0x9999n, 0x9998n),
  ], [[0x3000n, "a_long_marker_name"]]));
  sane(o);
  const marks = o.chrome.traceEvents.filter((e) => e.cat === "user_annotation");
  assert.equal(marks.map((e) => [e.name, e.args?.domain]), [["a_long_marker_name", undefined], ["", undefined]]);
  assert.ok(o.result.info.warnings.some((w) => w.code === "MISSING_STRING"));
  const host = o.xspace.planes.find((p) => p.name === "/host:CPU")!;
  assert.equal(Object.values(host.eventMetadata).map((m) => m.name).sort(), ["NVTX:", "NVTX:a_long_marker_name"]);
});

test.run();
