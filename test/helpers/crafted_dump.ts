/**
 * Crafted dumps for the overflow tests: an H100-like device table whose fields can be overridden with hostile
 * values (0, 0x7fffffff, 0xffffffff), hand-built activity records, and one call that converts a dump through every
 * output path (Chrome JSON, XSpace, timeline tables, stats) and hands back each decoded output.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { RawtraceWriter, type DeviceInfo } from "../../src/format/writer.js";
import * as C from "../../src/tools/cupti_records.js";
import { memorySource, type ConvertResult } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { XSpaceSchema, type XSpace } from "../../src/gen/xplane_pb.js";
import { TimelineEvents, TimelineParser, type TimelineMeta } from "../../src/core/timeline.js";
import { decodeStats, type TraceStats } from "../../src/core/stats.js";
import { toChrome, type ChromeTrace } from "./convert.js";
import { T0, PID, TID } from "./sample_dump.js";

export { T0, PID, TID };
export const LAYOUT: C.CuptiLayout = "cuda13";

/** A plausible H100 device table entry (device 0). */
export const H100: DeviceInfo = {
  id: 0, multiprocessors: 132, globalMemoryBytes: 80n << 30n, memoryBandwidth: 3350000000000n, coreClockKhz: 1980000,
  ccMajor: 9, ccMinor: 0, maxThreadsPerBlock: 1024, maxThreadsPerMultiprocessor: 2048, regsPerBlock: 65536,
  regsPerMultiprocessor: 65536, warpSize: 32, sharedMemPerBlock: 49152, sharedMemPerMultiprocessor: 233472,
  sharedMemPerBlockOptin: 232448, maxBlocksPerMultiprocessor: 32, name: "NVIDIA H100 80GB HBM3",
};

/** The u32 fields of a device entry (those a damaged table can hold anything in). */
export const DEVICE_U32_FIELDS = [
  "multiprocessors", "coreClockKhz", "ccMajor", "ccMinor", "maxThreadsPerBlock", "maxThreadsPerMultiprocessor",
  "regsPerBlock", "regsPerMultiprocessor", "warpSize", "sharedMemPerBlock", "sharedMemPerMultiprocessor",
  "sharedMemPerBlockOptin", "maxBlocksPerMultiprocessor",
] as const;

/** Every u32 field of {@link H100} set to `v`, the id kept. */
export function deviceAll(v: number): DeviceInfo {
  const d: DeviceInfo = { ...H100 };
  for (const f of DEVICE_U32_FIELDS) d[f] = v;
  return d;
}

/** The kernel name pointer of {@link craftedDump}'s string table. */
export const KERNEL_NAME = 0x1000n;

/**
 * A CUDA 13 dump: HEADER, CLOCK, KIND_SIZES, API and string tables, the given device table (none when `devices` is
 * empty), then one ACTIVITY chunk with `records`.
 */
export function craftedDump(devices: DeviceInfo[], records: Uint8Array[], strings: Array<[bigint, string]> = []): Uint8Array {
  const w = RawtraceWriter.inMemory();
  w.header({ vendor: 1, vendorVersion: C.LAYOUT_VERSION[LAYOUT], runtimeVersion: 12080, driverVersion: 12080, pid: PID, startNs: T0, hostname: "h", commandLine: "x" });
  w.clock({ which: 0, vendorNs: T0, realtimeNs: T0, monotonicNs: 1n, monotonicRawNs: 1n, boottimeNs: 1n });
  w.kindSizes(Object.entries(C.SIZES[LAYOUT]).map(([k, s]) => [Number(k), s] as const));
  w.apiNames([[2, 211, "cudaLaunchKernel_v7000"], [2, 41, "cudaMemcpyAsync_v3020"]]);
  w.strings([[KERNEL_NAME, "kernel_a"], ...strings]);
  if (devices.length) w.devices(devices);
  w.activity(C.concat(records));
  w.end();
  return w.bytes();
}

/** A kernel record on device 0, stream 7, at T0 + `at` ns for 100 ns, with the given fields on top. */
export function kernel(at: bigint, corr: number, f: Partial<C.KernelFields> = {}): Uint8Array {
  return C.kernelRecord(LAYOUT, {
    start: T0 + at, end: T0 + at + 100n, deviceId: 0, contextId: 1, streamId: 7, correlationId: corr, namePtr: KERNEL_NAME,
    blockX: 128, registersPerThread: 32, ...f,
  });
}

/** Every output of one dump. */
export interface AllOutputs {
  chrome: ChromeTrace;
  xspace: XSpace;
  timeline: { meta: TimelineMeta; events: TimelineEvents };
  stats: TraceStats;
  result: ConvertResult;
}

/** Converts `bytes` through every output path (one engine per call, so no state carries over). */
export async function allOutputs(bytes: Uint8Array): Promise<AllOutputs> {
  const eng = await createEngine();
  const { trace: chrome, result } = await toChrome(bytes);
  const parts: Uint8Array[] = [];
  await eng.convert(memorySource(bytes), (b) => parts.push(b.slice()), { format: "xspace" });
  const xspace = fromBinary(XSpaceSchema, Buffer.concat(parts));
  const events = new TimelineEvents();
  const parser = new TimelineParser((chunk) => events.add(chunk));
  await eng.convert(memorySource(bytes), parser.sink, { format: "timeline" });
  const meta = parser.finish();
  const sp: Uint8Array[] = [];
  await eng.convert(memorySource(bytes), (b) => sp.push(b.slice()), { format: "stats" });
  const stats = decodeStats(Buffer.concat(sp));
  return { chrome, xspace, timeline: { meta, events }, stats, result };
}
