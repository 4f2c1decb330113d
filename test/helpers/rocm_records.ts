/**
 * Small rocprofiler-sdk 1.0 dumps for decoder tests, written record by record: a HEADER (vendor 2, SDK 1.0), a
 * BOOTTIME anchor, every kind name and a few operation names, one GPU agent (handle 0x2000, GPU 0) and one kernel
 * symbol (id 1, `_Z4gemmv`), then the given ACTIVITY chunks. Times are ns after the anchor.
 */
import { RawtraceWriter, PayloadBuilder } from "../../src/format/writer.js";
import { ChunkType, RocpDomain } from "../../src/format/container.js";
import { KIND_NAMES, framed, record } from "../../src/tools/kineto_to_rocprof.js";

/** Unix ns of the start anchor. */
export const T0 = 1_790_000_000_000_000_000n;
/** BOOTTIME ns at T0. */
export const BOOT = 1_000_000_000_000n; // BOOTTIME at T0
/** SDK 1.0 value of buffer-tracing kind `n`. */
export const K = (n: string) => KIND_NAMES["1.0"].indexOf(n);
/** The GPU agent handle. */
export const GPU = 0x2000n;

/**
 * A dump with the tables above, `extra` chunks, then one ACTIVITY chunk per record list. `vendorVersion` 500 makes
 * it an SDK 0.5 dump (the records must then have the 0.5 layouts; kind names stay 1.0's, which a decoder reads by name).
 * `order.kinds`: the kind names written before the activity (default: all of SDK 1.0's); `order.after`: chunks written
 * after the activity chunks.
 */
export function dumpWith(
  activity: Uint8Array[][], extra?: (w: RawtraceWriter) => void, vendorVersion = 10000,
  order: { kinds?: Array<[number, number, string]>; after?: (w: RawtraceWriter) => void } = {},
): Uint8Array {
  const w = RawtraceWriter.inMemory();
  w.header({
    vendor: 2, vendorVersion, pid: 77, startNs: T0, hostname: "h", commandLine: "x",
    vendorVersionText: vendorVersion >= 10000 ? "1.0.0" : "0.5.0",
  });
  w.clock({ which: 0, vendorNs: BOOT, realtimeNs: T0, monotonicNs: BOOT, monotonicRawNs: BOOT, boottimeNs: BOOT });
  const names: Array<[number, number, string]> = order.kinds ?? KIND_NAMES["1.0"].map((n, i) => [RocpDomain.KINDS, i, n] as [number, number, string]);
  names.push([RocpDomain.OPS | K("HIP_RUNTIME_API"), 3, "hipLaunchKernel"]);
  names.push([RocpDomain.OPS | K("MARKER_CORE_API"), 1, "roctxRangePushA"], [RocpDomain.OPS | K("MARKER_CORE_API"), 2, "roctxRangePop"]);
  names.push([RocpDomain.OPS | K("HSA_CORE_API"), 7, "hsa_queue_create"], [RocpDomain.OPS | K("HSA_AMD_EXT_API"), 4, "hsa_amd_memory_pool_allocate"]);
  w.apiNames(names);
  const ag = new PayloadBuilder().u32(1).u32(120).u64(GPU).u32(2).u32(1).i32(1).i32(0).u32(104);
  ag.bytes(new Uint8Array(120 - 28)).str("gfx90a").str("MI250").str("AMD").str("");
  w.chunk(ChunkType.AGENTS, ag.result());
  w.chunk(ChunkType.KERNEL_SYMBOLS, new PayloadBuilder().u32(1).u32(48).u64(1).bytes(new Uint8Array(40)).str("_Z4gemmv").result());
  extra?.(w);
  for (const recs of activity) {
    const n = recs.reduce((s, r) => s + r.length, 0);
    const b = new Uint8Array(n);
    let o = 0;
    for (const r of recs) {
      b.set(r, o);
      o += r.length;
    }
    w.activity(b);
  }
  order.after?.(w);
  w.end();
  return w.bytes();
}

/** A framed KERNEL_DISPATCH record (operation COMPLETE) on the GPU, work-group and grid 1. */
export function kernel(corr: number, start: number, end: number, kid = 1, size = 184): Uint8Array {
  const { b, dv } = record(size, K("KERNEL_DISPATCH"), 2);
  dv.setBigUint64(16, BigInt(corr), true);
  if (size >= 56) {
    dv.setBigUint64(40, BOOT + BigInt(start), true);
    dv.setBigUint64(48, BOOT + BigInt(end), true);
  }
  if (size >= 128) {
    dv.setBigUint64(64, GPU, true);
    dv.setBigUint64(80, BigInt(kid), true);
    for (const o of [104, 108, 112, 116, 120, 124]) dv.setUint32(o, 1, true);
  }
  return framed(K("KERNEL_DISPATCH"), b);
}
/** A framed API record (HIP, HSA, marker, RCCL: 64 bytes in 1.0) of `kind`, operation `op`, on thread `tid`. */
export function apiRecord(kind: string, op: number, corr: number, start: number, end: number, tid = 5): Uint8Array {
  const { b, dv } = record(64, K(kind), op);
  dv.setBigUint64(16, BigInt(corr), true);
  dv.setBigUint64(40, BOOT + BigInt(start), true);
  dv.setBigUint64(48, BOOT + BigInt(end), true);
  dv.setBigUint64(56, BigInt(tid), true);
  return framed(K(kind), b);
}

/** A framed MARKER_CORE_API record of operation `op` (1 push, 2 pop) on thread `tid`, 10 ns long. */
export function marker(op: number, corr: number, start: number, tid = 5): Uint8Array {
  return apiRecord("MARKER_CORE_API", op, corr, start, start + 10, tid);
}
