/**
 * rocprofiler-sdk kinds beyond the default set and naming edge cases: HSA API records (recorded when a user adds
 * HSA_CORE_API / HSA_AMD_EXT_API to RAWTRACE_ROCM_KINDS) are driver-layer calls under the HIP calls; an operation the
 * dump does not name is `<unknown op N>`; Kineto's HIP blocklist hides hipGetDevice unless --all-api; roctxMarkA is an
 * instant with its message; a call without device work starts no flow.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { toChrome, events } from "../helpers/convert.js";
import { BOOT, K, apiRecord, dumpWith, kernel, T0 } from "../helpers/rocm_records.js";
import { ChunkType, RocpDomain } from "../../src/format/container.js";
import { PayloadBuilder, type RawtraceWriter } from "../../src/format/writer.js";
import { framed, record } from "../../src/tools/kineto_to_rocprof.js";

/** A MEMORY_ALLOCATION record (1.0, 88 B) with correlation id `corr`, ancestor `ancestor`, address and size. */
function allocation(corr: number, ancestor: number, address: bigint, bytes: number): Uint8Array {
  const { b, dv } = record(88, K("MEMORY_ALLOCATION"), 1);
  dv.setBigUint64(16, BigInt(corr), true);
  dv.setBigUint64(32, BigInt(ancestor), true);
  dv.setBigUint64(72, address, true);
  dv.setBigUint64(80, BigInt(bytes), true);
  return framed(K("MEMORY_ALLOCATION"), b);
}

test("HSA API records: cuda_driver calls with their names, on their thread, no flow", async () => {
  const { trace, result } = await toChrome(dumpWith([[
    apiRecord("HIP_RUNTIME_API", 3, 1, 0, 500),
    apiRecord("HSA_CORE_API", 7, 2, 100, 200),
    apiRecord("HSA_AMD_EXT_API", 4, 3, 250, 300, 6),
    kernel(1, 600, 900),
  ]]));
  const drv = events(trace, "cuda_driver");
  assert.equal(drv.map((e) => [e.name, e.tid, e.args.correlation]), [["hsa_queue_create", 5, 2], ["hsa_amd_memory_pool_allocate", 6, 3]]);
  const base = BigInt(trace.baseTimeNanoseconds);
  assert.is(base + BigInt(Math.round(drv[0].ts * 1000)), T0 + 100n);
  assert.is(Math.round(drv[0].dur * 1000), 100);
  assert.equal(trace.traceEvents.filter((e) => e.ph === "s").map((e) => e.id), [1]);
  assert.is(result.info.warnings.length, 0, JSON.stringify(result.info.warnings));
});

test("registers per thread: arch plus accumulation VGPRs; an accumulation count past 512 (rocprofiler-sdk 0.5's wrapped one) is not added", async () => {
  /** A KERNEL_SYMBOLS entry (docs/format.md §13): id, LDS, scratch, SGPRs, arch and accumulation VGPRs, name. */
  const symbol = (id: number, arch: number, accum: number, name: string) =>
    new PayloadBuilder().u32(1).u32(48).u64(BigInt(id)).bytes(new Uint8Array(20)).u32(0).u32(0).u32(16).u32(arch).u32(accum).str(name).result();
  const { trace } = await toChrome(dumpWith([[kernel(1, 0, 100, 2), kernel(2, 200, 300, 3)]], (w) => {
    w.chunk(ChunkType.KERNEL_SYMBOLS, symbol(2, 64, 32, "_Z4mfmav"));
    w.chunk(ChunkType.KERNEL_SYMBOLS, symbol(3, 64, (16 * (8 - 64)) >>> 0, "_Z7wrappedv")); // 0.5's count: 4294966400
  }));
  const ks = events(trace, "kernel");
  assert.equal(ks.map((e) => [e.name, e.args["registers per thread"]]), [["mfma()", 96], ["wrapped()", 64]]);
});

test("an operation without a name: <unknown op N>", async () => {
  const { trace } = await toChrome(dumpWith([[apiRecord("HIP_RUNTIME_API", 4321, 1, 0, 10)]]));
  assert.equal(events(trace, "cuda_runtime").map((e) => e.name), ["<unknown op 4321>"]);
});

test("Kineto's HIP blocklist: hipGetDevice hidden by default (counted), shown with allApi", async () => {
  const bytes = dumpWith([[apiRecord("HIP_RUNTIME_API", 9, 1, 0, 10), apiRecord("HIP_RUNTIME_API", 3, 2, 20, 30)]],
    (w) => w.apiNames([[RocpDomain.OPS | K("HIP_RUNTIME_API"), 9, "hipGetDevice"]]));
  const hidden = await toChrome(bytes);
  assert.equal(events(hidden.trace, "cuda_runtime").map((e) => e.name), ["hipLaunchKernel"]);
  assert.is(hidden.result.apiCallsHidden, 1);
  const all = await toChrome(bytes, { allApi: true });
  assert.equal(events(all.trace, "cuda_runtime").map((e) => e.name), ["hipGetDevice", "hipLaunchKernel"]);
});

/** The dump's name of HIP operation 20: an allocating call. */
const MALLOC = (w: RawtraceWriter) => w.apiNames([[RocpDomain.OPS | K("HIP_RUNTIME_API"), 20, "hipMalloc"]]);

test("an allocation with an id of its own reaches its HIP call through the ancestor id; other calls get no ptr", async () => {
  const { trace } = await toChrome(dumpWith([[
    apiRecord("HIP_RUNTIME_API", 20, 1, 0, 100), allocation(50, 1, 0x7f00dead0000n, 4096), apiRecord("HIP_RUNTIME_API", 20, 2, 200, 300),
  ]], MALLOC));
  const calls = events(trace, "cuda_runtime");
  assert.equal([calls[0].args.ptr, calls[0].args.size], ["0x7f00dead0000", 4096]);
  assert.is(calls[1].args.ptr, undefined);
});

test("only allocating calls carry ptr and size (Kineto's malloc rows): a launch with an allocation under it does not", async () => {
  // A staging buffer or a module load allocates under calls that are no allocation of the user's (before: they got
  // the allocation's ptr and size).
  const { trace } = await toChrome(dumpWith([[
    apiRecord("HIP_RUNTIME_API", 3, 1, 0, 100), allocation(1, 0, 0x7f00aaaa0000n, 64),
    apiRecord("HIP_RUNTIME_API", 20, 2, 200, 300), allocation(2, 0, 0x7f00bbbb0000n, 128), allocation(2, 0, 0x7f00cccc0000n, 256),
  ]], MALLOC));
  const calls = events(trace, "cuda_runtime");
  assert.equal(calls.map((c) => [c.name, c.args.ptr, c.args.size]), [
    ["hipLaunchKernel", undefined, undefined], ["hipMalloc", "0x7f00bbbb0000", 128],
  ], "the first allocation under a call");
});

test("SDK 0.6 (ROCm 6.4, version 600): its 80-byte MEMORY_ALLOCATION record (16-byte correlation id) puts ptr and size on its HIP call", async () => {
  // Before SDK 1.0 the allocation record had the 16-byte correlation id: address @64, allocation_size @72, 80 B.
  // Before, the decoder read only the 88-byte 1.0 layout: these records were ignored without a word.
  const alloc = record(80, K("MEMORY_ALLOCATION"), 1);
  alloc.dv.setBigUint64(16, 1n, true);
  alloc.dv.setBigUint64(64, 0x7f00beef0000n, true);
  alloc.dv.setBigUint64(72, 8192n, true);
  const call = (corr: number, start: number) => { // the 0.x API record: 56 B, start @32, end @40, thread @48
    const { b, dv } = record(56, K("HIP_RUNTIME_API"), 20);
    dv.setBigUint64(16, BigInt(corr), true);
    dv.setBigUint64(32, BOOT + BigInt(start), true);
    dv.setBigUint64(40, BOOT + BigInt(start + 100), true);
    dv.setBigUint64(48, 5n, true);
    return framed(K("HIP_RUNTIME_API"), b);
  };
  const { trace, result } = await toChrome(dumpWith([[call(1, 0), framed(K("MEMORY_ALLOCATION"), alloc.b), call(2, 200)]], MALLOC, 600));
  const calls = events(trace, "cuda_runtime");
  assert.equal(calls.map((c) => [c.args.correlation, c.args.ptr, c.args.size]), [[1, "0x7f00beef0000", 8192], [2, undefined, undefined]]);
  assert.equal(result.info.warnings, []);
});

test("roctxMarkA: an instant on its thread with its message", async () => {
  const bytes = dumpWith([[apiRecord("MARKER_CORE_API", 0, 9, 40, 41, 7)]], (w) => {
    w.apiNames([[RocpDomain.OPS | K("MARKER_CORE_API"), 0, "roctxMarkA"]]);
    w.strings([[9n, "checkpoint"]]);
  });
  const { trace } = await toChrome(bytes);
  const marks = trace.traceEvents.filter((e) => e.ph === "i" && e.name === "checkpoint");
  assert.is(marks.length, 1);
  assert.is(marks[0].tid, 7);
});

test("a copy between agents the dump does not describe: its direction from the operation's name", async () => {
  /** A MEMORY_COPY record (1.0, 96 B) of operation `op` between agent handles the AGENTS chunk does not list. */
  const copy = (op: number, corr: number, start: number, end: number) => {
    const { b, dv } = record(96, K("MEMORY_COPY"), op);
    dv.setBigUint64(16, BigInt(corr), true);
    dv.setBigUint64(40, BOOT + BigInt(start), true);
    dv.setBigUint64(48, BOOT + BigInt(end), true);
    dv.setBigUint64(56, 0x7777n, true);
    dv.setBigUint64(64, 0x8888n, true);
    dv.setBigUint64(72, 4096n, true);
    return framed(K("MEMORY_COPY"), b);
  };
  const ops: Array<[number, number, string]> = ["NONE", "HOST_TO_HOST", "HOST_TO_DEVICE", "DEVICE_TO_HOST", "DEVICE_TO_DEVICE"]
    .map((n, i) => [RocpDomain.OPS | K("MEMORY_COPY"), i, `MEMORY_COPY_${n}`]);
  const { trace } = await toChrome(dumpWith([[copy(2, 1, 0, 10), copy(3, 2, 20, 30), copy(4, 3, 40, 50), copy(1, 4, 60, 70)]], (w) => w.apiNames(ops)));
  // HtoD was drawn as `Memcpy HtoH (Host -> Host)` before: an unknown agent counted as the host. The device-to-device
  // copy runs between two agents AGENTS does not list, two GPUs numbered after the listed ones (UNKNOWN_DEVICE): a
  // copy between two GPUs (it was a DtoD on GPU 0 while every unlisted agent was GPU 0).
  const copies = events(trace, "gpu_memcpy");
  assert.equal(copies.map((e) => e.name), [
    "Memcpy HtoD (Host -> Device)", "Memcpy DtoH (Device -> Host)", "Memcpy PtoP (Device -> Device)", "Memcpy HtoH (Host -> Host)",
  ]);
  // The GPU rows: 0x7777 (the first unlisted GPU agent noted, HtoD's destination) is GPU 1 after the listed GPU 0,
  // 0x8888 (DtoH's source) GPU 2; the peer copy from 2 to 1 on its destination's row.
  assert.equal(copies.slice(0, 3).map((e) => e.pid), [1, 2, 1]);
  assert.equal([copies[2].args.fromDevice, copies[2].args.toDevice], [2, 1]);
});

test.run();
