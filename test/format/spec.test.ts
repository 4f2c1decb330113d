// SPDX-License-Identifier: MIT
/**
 * docs/format.md, the answers a writer needs beyond the byte layout: each answer in the spec has a test here that
 * builds dumps with src/format/writer.ts (and the CUPTI record builders), converts them with the engine and checks
 * what the outputs say. One test per question of issue 22.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema, type XPlane } from "../../src/gen/xplane_pb.js";
import { Engine, memorySource, type ConvertOptions, type ConvertResult, type FileInfo } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { RawtraceWriter, type DeviceInfo, type HeaderInfo } from "../../src/format/writer.js";
import { ChunkType, CHUNK_HEADER_SIZE, PREAMBLE_SIZE } from "../../src/format/container.js";
import * as C from "../../src/tools/cupti_records.js";

const L: C.CuptiLayout = "cuda13";
const T0 = 1_780_000_000_000_000_000n;
const PID = 100;
const TID = 101;

let shared: Engine | null = null;
async function engine(): Promise<Engine> {
  shared ??= await createEngine();
  return shared;
}

interface ChromeEvent {
  ph: string;
  name: string;
  cat?: string;
  ts?: number | string;
  pid?: number | string;
  tid?: number | string;
  args?: Record<string, unknown>;
}

/** Converts to Chrome JSON; returns the parsed trace and the result. */
async function chrome(bytes: Uint8Array, opts: ConvertOptions = {}): Promise<{ trace: Record<string, unknown>; events: ChromeEvent[]; result: ConvertResult }> {
  const parts: Buffer[] = [];
  const result = await (await engine()).convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), opts);
  const trace = JSON.parse(Buffer.concat(parts).toString("utf8")) as Record<string, unknown>;
  return { trace, events: trace.traceEvents as ChromeEvent[], result };
}

async function xspace(bytes: Uint8Array) {
  const parts: Buffer[] = [];
  const result = await (await engine()).convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
  return { space: fromBinary(XSpaceSchema, Buffer.concat(parts)), result };
}

async function info(bytes: Uint8Array): Promise<FileInfo> {
  return (await engine()).info(memorySource(bytes));
}

const kernels = (events: ChromeEvent[]) => events.filter((e) => e.ph === "X" && e.cat === "kernel");
const warningCodes = (r: { warnings: Array<{ code: string }> }) => r.warnings.map((w) => w.code);

const header = (o: Partial<HeaderInfo> = {}): HeaderInfo => ({
  vendor: 1, vendorVersion: C.LAYOUT_VERSION[L], runtimeVersion: 13000, driverVersion: 13000, pid: PID, startNs: T0,
  hostname: "spec-host", commandLine: "x", ...o,
});
const sizes = (l: C.CuptiLayout = L) => Object.entries(C.SIZES[l]).map(([k, s]) => [Number(k), s] as const);

/** Kernel `i` (correlation i + 1) at T0 + 1000 × (i + 1), named by pointer `ptr`. */
const kernel = (i: number, ptr: bigint, l: C.CuptiLayout = L) => C.kernelRecord(l, {
  start: T0 + BigInt(1000 * (i + 1)), end: T0 + BigInt(1000 * (i + 1) + 500), deviceId: 0, contextId: 1, streamId: 7,
  correlationId: i + 1, namePtr: ptr, gridX: 1, blockX: 32,
});

const A100: DeviceInfo = {
  id: 0, multiprocessors: 108, globalMemoryBytes: 80n << 30n, memoryBandwidth: 2039000000000n, coreClockKhz: 1410000,
  ccMajor: 8, ccMinor: 0, maxThreadsPerBlock: 1024, maxThreadsPerMultiprocessor: 2048, regsPerBlock: 65536,
  regsPerMultiprocessor: 65536, warpSize: 32, sharedMemPerBlock: 49152, sharedMemPerMultiprocessor: 167936,
  sharedMemPerBlockOptin: 166912, maxBlocksPerMultiprocessor: 32, name: "NVIDIA A100-SXM4-80GB",
};

/** Plane stats of an XSpace plane by name. */
function planeStats(p: XPlane): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of p.stats) out[p.statMetadata[String(s.metadataId)].name] = s.value.value;
  return out;
}

// ---- API_NAMES ---------------------------------------------------------------------------------------------------------

test("API_NAMES: CUPTI's raw names (cudaLaunchKernel_v7000) are what a writer stores; runtime names lose _v<digits>; a cbid without a name is cuda_runtime_cbid_<n>", async () => {
  const w = RawtraceWriter.inMemory();
  w.header(header());
  w.kindSizes(sizes());
  w.apiNames([[2, 211, "cudaLaunchKernel_v7000"], [2, 41, "cudaMemcpyAsync_v3020"], [2, 200, "cudaLaunchKernel"]]);
  w.activity(C.concat([
    C.apiRecord(L, { kind: 5, cbid: 211, start: T0 + 1000n, end: T0 + 2000n, processId: PID, threadId: TID, correlationId: 1 }),
    C.apiRecord(L, { kind: 5, cbid: 41, start: T0 + 3000n, end: T0 + 4000n, processId: PID, threadId: TID, correlationId: 2 }),
    C.apiRecord(L, { kind: 5, cbid: 200, start: T0 + 5000n, end: T0 + 6000n, processId: PID, threadId: TID, correlationId: 3 }),
    C.apiRecord(L, { kind: 5, cbid: 999, start: T0 + 7000n, end: T0 + 8000n, processId: PID, threadId: TID, correlationId: 4 }),
  ]));
  w.end();
  const { events } = await chrome(w.bytes(), { allApi: true });
  const api = events.filter((e) => e.ph === "X" && e.cat === "cuda_runtime").map((e) => e.name);
  assert.equal(api, ["cudaLaunchKernel", "cudaMemcpyAsync", "cudaLaunchKernel", "cuda_runtime_cbid_999"]);
});

test("API_NAMES: may come after the ACTIVITY it names; a (domain, id) given twice is named by its last entry everywhere", async () => {
  const w = RawtraceWriter.inMemory();
  w.header(header());
  w.kindSizes(sizes());
  w.apiNames([[2, 41, "cudaOldName_v3020"]]);
  w.activity(C.apiRecord(L, { kind: 5, cbid: 41, start: T0 + 1000n, end: T0 + 2000n, processId: PID, threadId: TID, correlationId: 1 }));
  w.apiNames([[2, 41, "cudaMemcpyAsync_v3020"], [2, 211, "cudaLaunchKernel_v7000"]]);
  w.activity(C.apiRecord(L, { kind: 5, cbid: 211, start: T0 + 3000n, end: T0 + 4000n, processId: PID, threadId: TID, correlationId: 2 }));
  w.end();
  const { events } = await chrome(w.bytes(), { allApi: true });
  assert.equal(events.filter((e) => e.cat === "cuda_runtime").map((e) => e.name), ["cudaMemcpyAsync", "cudaLaunchKernel"]);
});

// ---- STRINGS -----------------------------------------------------------------------------------------------------------

test("STRINGS: may follow the ACTIVITY that uses it; a pointer given new bytes names the records after it; a missing pointer is <unknown kernel> + MISSING_STRING", async () => {
  const w = RawtraceWriter.inMemory();
  w.header(header());
  w.kindSizes(sizes());
  // Kernel 0 uses 0x10 before any STRINGS chunk; kernel 1 after the first; kernel 2 after 0x10 is given new bytes.
  w.activity(kernel(0, 0x10n));
  w.strings([[0x10n, "first_name"]]);
  w.activity(kernel(1, 0x10n));
  w.strings([[0x10n, "second_name"]]);
  w.activity(C.concat([kernel(2, 0x10n), kernel(3, 0x99n)]));
  // An NVTX range whose name and domain pointers are missing, then a mark whose domain alone is missing.
  w.strings([[0x20n, "mark"]]);
  w.activity(C.concat([
    C.markerRecord(L, 2, T0 + 100n, 1, PID, TID, 0x98n, 0x97n), C.markerRecord(L, 4, T0 + 200n, 1, PID, TID, 0n),
    C.markerRecord(L, 1, T0 + 300n, 2, PID, TID, 0x20n, 0x96n),
  ]));
  w.end();
  const { events, result } = await chrome(w.bytes());
  assert.equal(kernels(events).map((e) => e.name), ["first_name", "first_name", "second_name", "<unknown kernel>"]);
  const nvtx = events.filter((e) => e.cat === "user_annotation");
  assert.equal(nvtx.map((e) => [e.ph, e.name]), [["X", ""], ["i", "mark"]]);
  // Two missing pointers reported (the kernel's and the range name's); the first detail is the kernel's.
  assert.equal(warningCodes(result.info), ["MISSING_STRING"]);
  assert.is(result.info.warnings[0].count, 2);
  assert.is(result.info.warnings[0].detail, 0x99);
});

// ---- KIND_SIZES --------------------------------------------------------------------------------------------------------

test("KIND_SIZES: a kind it lacks takes the built-in size of the HEADER's CUPTI version; a kind with neither stops its buffer (UNKNOWN_KIND_UNSIZED)", async () => {
  // Only the API sizes in the table: the kernel size comes from version 130001's built-in table.
  const w = RawtraceWriter.inMemory();
  w.header(header());
  w.kindSizes([[5, 40]]);
  w.strings([[0x10n, "k"]]);
  w.activity(C.concat([
    C.apiRecord(L, { kind: 5, cbid: 211, start: T0 + 100n, end: T0 + 200n, processId: PID, threadId: TID, correlationId: 1 }),
    kernel(0, 0x10n), kernel(1, 0x10n),
  ]));
  // Kind 200: no size in the table, none built in. The records after it in this buffer cannot be walked.
  const unknown = new Uint8Array(64);
  new DataView(unknown.buffer).setUint32(0, 200, true);
  w.activity(C.concat([kernel(2, 0x10n), unknown, kernel(3, 0x10n)]));
  w.activity(kernel(4, 0x10n));
  w.end();
  const { events, result } = await chrome(w.bytes());
  assert.equal(kernels(events).map((e) => e.args?.correlation), [1, 2, 3, 5]);
  assert.ok(warningCodes(result.info).includes("UNKNOWN_KIND_UNSIZED"), warningCodes(result.info).join(","));
});

test("KIND_SIZES before the first ACTIVITY: the strides are fixed when the first ACTIVITY chunk is read; a later size that disagrees is reported (BAD_KIND_SIZE) and not used", async () => {
  // CUDA 12 records (kernel 208 bytes) in a dump whose HEADER says 13.0 (built-in kernel size 216).
  const build = (table: "early" | "late" | "late-agreeing") => {
    const w = RawtraceWriter.inMemory();
    w.header(header({ vendorVersion: 130001 }));
    if (table === "early") w.kindSizes(sizes("cuda12"));
    w.strings([[0x10n, "k"]]);
    const l = table === "late-agreeing" ? "cuda13" : "cuda12";
    w.activity(C.concat([kernel(0, 0x10n, l), kernel(1, 0x10n, l)]));
    if (table === "late") w.kindSizes(sizes("cuda13"));
    if (table === "late-agreeing") w.kindSizes(sizes("cuda13"));
    w.activity(kernel(2, 0x10n, l));
    w.end();
    return w.bytes();
  };
  const early = await chrome(build("early"));
  assert.equal(kernels(early.events).map((e) => e.args?.correlation), [1, 2, 3]);
  assert.equal(warningCodes(early.result.info), []);
  const agreeing = await chrome(build("late-agreeing"));
  assert.equal(kernels(agreeing.events).map((e) => e.args?.correlation), [1, 2, 3]);
  assert.equal(warningCodes(agreeing.result.info), []);
  // Too late and different (13.0's 216-byte kernels): reported and not used — both buffers are walked with the sizes
  // fixed at the first ACTIVITY chunk (12.x's: with no table yet, those the first buffer walks exactly under).
  const late = await chrome(build("late"));
  const codes = warningCodes(late.result.info);
  assert.ok(codes.includes("BAD_KIND_SIZE"), codes.join(","));
  assert.is(late.result.info.warnings.find((x) => x.code === "BAD_KIND_SIZE")!.detail, 3, "KERNEL (3) is the first kind whose size differs");
  assert.equal(kernels(late.events).map((e) => e.args?.correlation), [1, 2, 3]);
});

test("KIND_SIZES claiming over 4× a kind's built-in size (a high bit flipped before the checksum) is BAD_KIND_SIZE: the built-in stride is used, every kernel decodes", async () => {
  const table = sizes().map(([k, s]) => [k, k === C.CK.CONCURRENT_KERNEL ? s | 0x2000 : s] as const);
  const w = RawtraceWriter.inMemory();
  w.header(header());
  w.kindSizes(table);
  w.strings([[0x10n, "k"]]);
  w.activity(C.concat(Array.from({ length: 60 }, (_, i) => kernel(i, 0x10n))));
  w.end();
  const { events, result } = await chrome(w.bytes());
  assert.is(kernels(events).length, 60);
  const bad = result.info.warnings.filter((x) => x.code === "BAD_KIND_SIZE");
  assert.equal(bad.map((x) => x.detail), [C.CK.CONCURRENT_KERNEL]);
  assert.ok(bad[0].offset > 0, "the warning names the KIND_SIZES chunk, not offset 0");
});

test("KIND_SIZES listing a kind twice with two sizes (a kernel entry's kind changed to MEMCPY before the checksum) is BAD_KIND_SIZE at the chunk: the built-in strides are used, no record after a memcpy swallowed", async () => {
  // MEMCPY 96 bytes, then the kernel's 216 under MEMCPY too: a 216-byte memcpy stride steps over the three 40-byte
  // runtime records after each memcpy and still lands on the next memcpy.
  const table = sizes().map(([k, s]) => [k === C.CK.CONCURRENT_KERNEL ? C.CK.MEMCPY : k, s] as const);
  assert.ok(table.filter(([k]) => k === C.CK.MEMCPY).length === 2 && C.SIZES[L][C.CK.MEMCPY] + 3 * C.SIZES[L][C.CK.RUNTIME] === C.SIZES[L][C.CK.CONCURRENT_KERNEL]);
  const w = RawtraceWriter.inMemory();
  w.header(header());
  const sizesAt = w.bytes().length;
  w.kindSizes(table);
  const recs: Uint8Array[] = [];
  for (let i = 0; i < 4; i++) {
    const t = T0 + BigInt(10_000 * (i + 1));
    recs.push(C.memcpyRecord(L, { start: t, end: t + 500n, deviceId: 0, contextId: 1, streamId: 7, correlationId: 100 + i, bytes: 4096n, copyKind: 1, srcKind: 1, dstKind: 3 }));
    for (let j = 0; j < 3; j++) {
      recs.push(C.apiRecord(L, { kind: 5, cbid: 41, start: t + BigInt(1000 + 100 * j), end: t + BigInt(1050 + 100 * j), processId: PID, threadId: TID, correlationId: 200 + 3 * i + j }));
    }
  }
  w.activity(C.concat(recs));
  w.end();
  const { events, result } = await chrome(w.bytes());
  const x = events.filter((e) => e.ph === "X");
  assert.is(x.filter((e) => e.cat === "gpu_memcpy").length, 4);
  assert.is(x.filter((e) => e.cat === "cuda_runtime").length, 12, "every runtime call after a memcpy decodes");
  const bad = result.info.warnings.filter((x) => x.code === "BAD_KIND_SIZE");
  assert.equal(bad.map((x) => [x.detail, x.offset]), [[C.CK.MEMCPY, sizesAt]], "one warning, at the KIND_SIZES chunk");
});

test("no HEADER and no KIND_SIZES: the strides are those of the CUPTI layout the first buffer walks exactly under (13.0 here), not 11.8's: every record decodes, none invented", async () => {
  // A dump whose first chunks were lost (gzip damage): without a version the built-in sizes were 11.8's, a 13.0
  // kernel (216 bytes) was stepped as 200, and the records after it were read from the middle of others.
  const build = (withHeader: boolean) => {
    const w = RawtraceWriter.inMemory();
    if (withHeader) w.header(header({ vendorVersion: C.LAYOUT_VERSION.cuda11 }));
    w.strings([[0x10n, "k"]]);
    const recs: Uint8Array[] = [];
    for (let i = 0; i < 6; i++) {
      const t = T0 + BigInt(10_000 * (i + 1));
      recs.push(C.apiRecord(L, { kind: 5, cbid: 211, start: t, end: t + 400n, processId: PID, threadId: TID, correlationId: i + 1 }));
      recs.push(kernel(i, 0x10n));
      recs.push(C.memcpyRecord(L, { start: t + 5000n, end: t + 5500n, deviceId: 0, contextId: 1, streamId: 7, correlationId: 100 + i, bytes: 64n, copyKind: 1, srcKind: 1, dstKind: 3 }));
    }
    w.activity(C.concat(recs));
    w.activity(C.concat([kernel(6, 0x10n), kernel(7, 0x10n)]));
    w.end();
    return w.bytes();
  };
  for (const withHeader of [false, true]) {
    const { events, result } = await chrome(build(withHeader));
    const what = withHeader ? "a HEADER that says 11.8" : "no HEADER";
    assert.equal(kernels(events).map((e) => e.args?.correlation), [1, 2, 3, 4, 5, 6, 7, 8], what);
    assert.is(events.filter((e) => e.ph === "X" && e.cat === "gpu_memcpy").length, 6, what);
    assert.is(events.filter((e) => e.ph === "X" && e.cat === "cuda_runtime").length, 6, what);
    assert.is(result.info.loss.rangesTotal, 0, what);
    assert.ok(!warningCodes(result.info).some((c) => /UNKNOWN_KIND|RECORD_TRUNCATED|BAD_TIMESTAMP/.test(c)), `${what}: ${warningCodes(result.info).join(",")}`);
    if (!withHeader) assert.ok(warningCodes(result.info).includes("NO_HEADER"));
  }
});

test("no HEADER and no KIND_SIZES, a first buffer of API records only (40 bytes in every layout): the first buffer of kernels decides the layout, and the calls before it were read alike", async () => {
  const w = RawtraceWriter.inMemory();
  w.strings([[0x10n, "k"]]);
  const call = (i: number) => C.apiRecord(L, { kind: 5, cbid: 211, start: T0 + BigInt(1000 * i), end: T0 + BigInt(1000 * i + 400), processId: PID, threadId: TID, correlationId: i + 1 });
  w.activity(C.concat([0, 1, 2, 3].map(call)));
  w.activity(C.concat([kernel(0, 0x10n), kernel(1, 0x10n), call(4), kernel(2, 0x10n), kernel(3, 0x10n)]));
  w.activity(C.concat([kernel(4, 0x10n), call(5)]));
  w.end();
  const { events, result } = await chrome(w.bytes());
  assert.equal(kernels(events).map((e) => e.args?.correlation), [1, 2, 3, 4, 5]);
  assert.is(events.filter((e) => e.ph === "X" && e.cat === "cuda_runtime").length, 6);
  assert.is(result.info.loss.rangesTotal, 0);
  assert.equal(warningCodes(result.info).filter((c) => c !== "NO_HEADER" && c !== "NO_CLOCK"), []);
});

// ---- HEADER: tracing-library version ------------------------------------------------------------------------------------

test("HEADER vendor version: picks the built-in layouts (CUPTI 12.x reports 28, 13.x 130001), is reported as cupti_version, and one past 13.x warns", async () => {
  const noTable = (l: C.CuptiLayout, version: number) => {
    const w = RawtraceWriter.inMemory();
    w.header(header({ vendorVersion: version }));
    w.strings([[0x10n, "k"]]);
    w.activity(C.concat([kernel(0, 0x10n, l), kernel(1, 0x10n, l)]));
    w.end();
    return w.bytes();
  };
  for (const l of ["cuda12", "cuda13"] as const) {
    const { events, result, trace } = await chrome(noTable(l, C.LAYOUT_VERSION[l]));
    assert.equal(kernels(events).map((e) => e.args?.correlation), [1, 2], l);
    assert.equal(warningCodes(result.info), [], l);
    assert.is(trace.cupti_version, C.LAYOUT_VERSION[l]);
  }
  // Without a KIND_SIZES table the first buffer checks the version's sizes: 12.x records under a 13.x HEADER do not
  // walk under 13.x's (a 208-byte kernel stepped as 216), so 12.x's are used, and the version is still the HEADER's.
  const wrong = await chrome(noTable("cuda12", 130001));
  assert.equal(kernels(wrong.events).map((e) => e.args?.correlation), [1, 2]);
  assert.equal(warningCodes(wrong.result.info), []);
  assert.is(wrong.trace.cupti_version, 130001);
  const newer = await chrome(noTable("cuda13", 140000));
  assert.ok(warningCodes(newer.result.info).includes("UNKNOWN_VENDOR_VERSION"));
  const x = await xspace(noTable("cuda13", 130001));
  const meta = x.space.planes.find((p) => p.name === "/host:metadata")!;
  assert.is(planeStats(meta).cupti_version, "130001");
});

// ---- CLOCK ---------------------------------------------------------------------------------------------------------------

test("CLOCK: the first start and the last end anchor map the vendor clock; periodic anchors and the MONOTONIC/RAW/BOOTTIME readings do not change the output", async () => {
  const OFF = 5_000_000n; // realtime = vendor + 5 ms
  const build = (extra: boolean, mono: bigint) => {
    const w = RawtraceWriter.inMemory();
    w.header(header());
    w.clock({ which: 0, vendorNs: T0, realtimeNs: T0 + OFF, monotonicNs: mono, monotonicRawNs: mono + 1n, boottimeNs: mono + 2n });
    w.kindSizes(sizes());
    w.strings([[0x10n, "k"]]);
    w.activity(kernel(0, 0x10n));
    // A periodic anchor that disagrees wildly with the others.
    if (extra) w.clock({ which: 2, vendorNs: T0 + 10_000n, realtimeNs: T0 + 999_000_000n, monotonicNs: 1n, monotonicRawNs: 1n, boottimeNs: 1n });
    w.activity(kernel(1, 0x10n));
    w.clock({ which: 1, vendorNs: T0 + 1_000_000n, realtimeNs: T0 + 1_000_000n + OFF, monotonicNs: mono, monotonicRawNs: mono, boottimeNs: mono });
    w.end();
    return w.bytes();
  };
  const plain = await chrome(build(false, 7n));
  const withPeriodic = await chrome(build(true, 123_456_789n));
  const times = (t: { events: ChromeEvent[]; trace: Record<string, unknown> }) =>
    kernels(t.events).map((e) => BigInt(String(t.trace.baseTimeNanoseconds)) + BigInt(Math.round(Number(e.ts) * 1000)));
  assert.equal(times(plain), [T0 + 1000n + OFF, T0 + 2000n + OFF]);
  assert.equal(times(withPeriodic), times(plain));
  assert.equal(withPeriodic.result.info.clock, plain.result.info.clock);
});

// ---- DEVICES -------------------------------------------------------------------------------------------------------------

test("DEVICES: 0 means unknown (except id: device 0), the field is left out; uuid is 16 raw bytes, all zero = unknown", async () => {
  const uuid = Uint8Array.from({ length: 16 }, (_, i) => 0xa0 + i);
  const w = RawtraceWriter.inMemory();
  w.header(header());
  w.kindSizes(sizes());
  w.devices([
    { ...A100, id: 0, uuid },
    { ...A100, id: 1, coreClockKhz: 0, globalMemoryBytes: 0n, ccMajor: 0, ccMinor: 0, name: "" },
  ]);
  w.strings([[0x10n, "k"]]);
  w.activity(C.concat([kernel(0, 0x10n), C.kernelRecord(L, {
    start: T0 + 5000n, end: T0 + 5500n, deviceId: 1, contextId: 2, streamId: 7, correlationId: 9, namePtr: 0x10n, gridX: 1, blockX: 32,
  })]));
  w.end();
  const bytes = w.bytes();
  const i = await info(bytes);
  assert.equal(i.devices.map((d) => d.uuid), ["a0a1a2a3a4a5a6a7a8a9aaabacadaeaf", "00000000000000000000000000000000"]);
  const { space } = await xspace(bytes);
  const g0 = planeStats(space.planes.find((p) => p.name === "/device:GPU:0")!);
  const g1 = planeStats(space.planes.find((p) => p.name === "/device:GPU:1")!);
  for (const k of ["clock_rate", "memory_size", "compute_cap_major", "gpu_device_name"]) {
    assert.ok(k in g0, `device 0 has ${k}`);
    assert.not.ok(k in g1, `device 1's unknown ${k} is left out`);
  }
  assert.is(g1.core_count, 108n);
});

// ---- END -----------------------------------------------------------------------------------------------------------------

test("END: its chunk count is every chunk before it, HEADER included; readers use END only as the clean-close mark", async () => {
  const w = RawtraceWriter.inMemory();
  w.header(header());
  w.clock({ which: 0, vendorNs: T0, realtimeNs: T0, monotonicNs: 1n, monotonicRawNs: 1n, boottimeNs: 1n });
  w.kindSizes(sizes());
  w.end();
  const bytes = w.bytes();
  // The END payload is the last chunk: u64 chunks before it.
  const endPayload = bytes.length - 24;
  const dv = new DataView(bytes.buffer, bytes.byteOffset);
  assert.is(dv.getUint16(endPayload - CHUNK_HEADER_SIZE + 4, true), ChunkType.END);
  assert.is(dv.getBigUint64(endPayload, true), 3n, "HEADER, CLOCK, KIND_SIZES");
  assert.ok(endPayload - CHUNK_HEADER_SIZE > PREAMBLE_SIZE);
  const i = await info(bytes);
  assert.is(i.chunks, 4, "the reader counts END too");
  assert.ok(i.complete);
  assert.equal(warningCodes(i), []);
});

// ---- HEADER: rank ----------------------------------------------------------------------------------------------------------

test("HEADER rank: Chrome JSON distributedInfo (with world_size) when ≥ 0, nothing when -1; rawtrace info; not in a one-file XSpace", async () => {
  const build = (rank: number, worldSize: number) => {
    const w = RawtraceWriter.inMemory();
    w.header(header({ rank, localRank: rank >= 0 ? rank % 4 : -1, worldSize }));
    w.kindSizes(sizes());
    w.strings([[0x10n, "k"]]);
    w.activity(kernel(0, 0x10n));
    w.end();
    return w.bytes();
  };
  const ranked = await chrome(build(5, 8));
  assert.equal(ranked.trace.distributedInfo, { rank: 5, world_size: 8 });
  const i = await info(build(5, 8));
  assert.equal([i.rank, i.localRank, i.worldSize], [5, 1, 8]);
  const unranked = await chrome(build(-1, -1));
  assert.not.ok("distributedInfo" in unranked.trace);
  const { space } = await xspace(build(5, 8));
  const text = JSON.stringify(space, (_, v) => (typeof v === "bigint" ? v.toString() : v));
  assert.not.ok(/rank/i.test(text), "a one-file XSpace carries no rank");
});

test.run();
