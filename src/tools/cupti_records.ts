/**
 * Builders of raw CUPTI activity records in the byte layouts of real CUPTI versions (offsets from
 * vendor-record-layouts.md §1.3/§1.5; sizes from the CUDA headers' sizeof). Used by the round-trip tool, the
 * benchmark generator and tests to make `.rawtrace` files without a GPU. Values are written as given; the caller
 * owns the returned bytes.
 */

/** Which CUPTI generation's struct sizes to write. */
export type CuptiLayout = "cuda11" | "cuda12" | "cuda13" | "cuda135";

/** CUPTI_API_VERSION of each layout's headers: CUDA 11.8, 12.9, 13.0 Update 1 and 13.5. */
export const LAYOUT_VERSION: Record<CuptiLayout, number> = { cuda11: 18, cuda12: 28, cuda13: 130001, cuda135: 130500 };

/** CUpti_ActivityKind values. */
export const CK = {
  MEMCPY: 1, MEMSET: 2, KERNEL: 3, DRIVER: 4, RUNTIME: 5, DEVICE: 8, CONTEXT: 9, CONCURRENT_KERNEL: 10, NAME: 11,
  MARKER: 12, MARKER_DATA: 13, OVERHEAD: 17, MEMCPY2: 22, CUDA_EVENT: 36, STREAM: 37, SYNCHRONIZATION: 38,
  EXTERNAL_CORRELATION: 39, GRAPH_TRACE: 51,
} as const;

/**
 * Record sizes per layout, as sizeof in the real headers (checked by test/fixtures/cupti against the header wheels):
 * CUDA 11.8 (Kernel8, Memcpy5, Synchronization, CudaEvent, Overhead, Context, Device4), 12.9 (Kernel9, Memcpy6,
 * Synchronization2, CudaEvent2, Overhead3, Context3, Device5), 13.0 (Kernel10, MarkerData2), 13.5 (Kernel13, Memcpy7,
 * Memset5, Device6, Context4, CudaEvent3).
 */
export const SIZES: Record<CuptiLayout, Record<number, number>> = {
  cuda11: {
    1: 88, 2: 88, 3: 200, 4: 40, 5: 40, 8: 176, 9: 16, 10: 200, 11: 32, 12: 56, 13: 32, 17: 40, 22: 96, 36: 24, 37: 24,
    38: 40, 39: 24, 51: 48,
  },
  cuda12: {
    1: 96, 2: 88, 3: 208, 4: 40, 5: 40, 8: 184, 9: 32, 10: 208, 11: 32, 12: 56, 13: 32, 17: 56, 22: 96, 36: 56, 37: 24,
    38: 56, 39: 24, 51: 56,
  },
  cuda13: {
    1: 96, 2: 88, 3: 216, 4: 40, 5: 40, 8: 184, 9: 32, 10: 216, 11: 32, 12: 56, 13: 40, 17: 56, 22: 96, 36: 56, 37: 24,
    38: 56, 39: 24, 51: 56,
  },
  cuda135: {
    1: 112, 2: 104, 3: 248, 4: 40, 5: 40, 8: 192, 9: 40, 10: 248, 11: 32, 12: 56, 13: 40, 17: 56, 22: 96, 36: 80,
    37: 24, 38: 56, 39: 24, 51: 56,
  },
};

/** Fields of a kernel record (Kernel8 … Kernel13: the fields all of them share). Times in the vendor clock, ns. */
export interface KernelFields {
  start: bigint; end: bigint; deviceId: number; contextId: number; streamId: number; correlationId: number;
  namePtr: bigint; gridX?: number; gridY?: number; gridZ?: number; blockX?: number; blockY?: number; blockZ?: number;
  registersPerThread?: number; staticSharedMemory?: number; dynamicSharedMemory?: number; graphId?: number;
  graphNodeId?: bigint; channelID?: number; channelType?: number; queued?: bigint;
}
export interface MemcpyFields {
  start: bigint; end: bigint; deviceId: number; contextId: number; streamId: number; correlationId: number;
  bytes: bigint; copyKind: number; srcKind: number; dstKind: number; async?: boolean; graphId?: number;
  graphNodeId?: bigint; channelID?: number; channelType?: number;
}
export interface MemsetFields {
  start: bigint; end: bigint; deviceId: number; contextId: number; streamId: number; correlationId: number;
  bytes: bigint; value?: number; memoryKind: number; async?: boolean;
}
export interface ApiFields {
  kind: 4 | 5; cbid: number; start: bigint; end: bigint; processId: number; threadId: number; correlationId: number;
  returnValue?: number;
}
export interface SyncFields {
  type: number; start: bigint; end: bigint; correlationId: number; contextId: number; streamId: number;
  cudaEventId?: number;
}

/**
 * Little-endian writer of one record at `base` in a DataView; fields beyond `size` (the layout's struct size) are
 * skipped, as the older struct versions simply do not have them. The bytes must be zeroed by the caller.
 */
class Rec {
  constructor(private readonly dv: DataView, private readonly base: number, readonly size: number, kind: number) {
    this.u32(0, kind);
  }
  u8(o: number, v: number): this { if (o + 1 <= this.size) this.dv.setUint8(this.base + o, v); return this; }
  u16(o: number, v: number): this { if (o + 2 <= this.size) this.dv.setUint16(this.base + o, v, true); return this; }
  u32(o: number, v: number): this { if (o + 4 <= this.size) this.dv.setUint32(this.base + o, v >>> 0, true); return this; }
  i32(o: number, v: number): this { if (o + 4 <= this.size) this.dv.setInt32(this.base + o, v, true); return this; }
  u64(o: number, v: bigint): this {
    if (o + 8 <= this.size) this.dv.setBigUint64(this.base + o, BigInt.asUintN(64, v), true);
    return this;
  }
}

/** Writes a CONCURRENT_KERNEL record at `off` (zeroed bytes); returns its size. */
export function writeKernel(dv: DataView, off: number, l: CuptiLayout, f: KernelFields): number {
  return new Rec(dv, off, SIZES[l][CK.CONCURRENT_KERNEL], CK.CONCURRENT_KERNEL)
    .u16(6, f.registersPerThread ?? 0).u64(16, f.start).u64(24, f.end).u64(32, f.end)
    .u32(40, f.deviceId).u32(44, f.contextId).u32(48, f.streamId)
    .i32(52, f.gridX ?? 1).i32(56, f.gridY ?? 1).i32(60, f.gridZ ?? 1)
    .i32(64, f.blockX ?? 1).i32(68, f.blockY ?? 1).i32(72, f.blockZ ?? 1)
    .i32(76, f.staticSharedMemory ?? 0).i32(80, f.dynamicSharedMemory ?? 0)
    .u32(92, f.correlationId).u64(104, f.namePtr).u64(120, f.queued ?? 0n)
    .u64(144, f.graphNodeId ?? 0n).u32(156, f.graphId ?? 0).u32(168, f.channelID ?? 0).u32(172, f.channelType ?? 0)
    .size;
}

/** Writes a MEMCPY record at `off`; returns its size. */
export function writeMemcpy(dv: DataView, off: number, l: CuptiLayout, f: MemcpyFields): number {
  return new Rec(dv, off, SIZES[l][CK.MEMCPY], CK.MEMCPY)
    .u8(4, f.copyKind).u8(5, f.srcKind).u8(6, f.dstKind).u8(7, f.async ? 1 : 0).u64(8, f.bytes)
    .u64(16, f.start).u64(24, f.end).u32(32, f.deviceId).u32(36, f.contextId).u32(40, f.streamId)
    .u32(44, f.correlationId).u32(48, f.correlationId).u64(64, f.graphNodeId ?? 0n).u32(72, f.graphId ?? 0)
    .u32(76, f.channelID ?? 0).u32(80, f.channelType ?? 0).size;
}

/** Writes a MEMSET record at `off`; returns its size. */
export function writeMemset(dv: DataView, off: number, l: CuptiLayout, f: MemsetFields): number {
  return new Rec(dv, off, SIZES[l][CK.MEMSET], CK.MEMSET)
    .u32(4, f.value ?? 0).u64(8, f.bytes).u64(16, f.start).u64(24, f.end).u32(32, f.deviceId)
    .u32(36, f.contextId).u32(40, f.streamId).u32(44, f.correlationId).u16(48, f.async ? 1 : 0)
    .u16(50, f.memoryKind).size;
}

/** Writes a RUNTIME (kind 5) or DRIVER (kind 4) API record at `off`; returns its size. */
export function writeApi(dv: DataView, off: number, l: CuptiLayout, f: ApiFields): number {
  return new Rec(dv, off, SIZES[l][f.kind], f.kind)
    .u32(4, f.cbid).u64(8, f.start).u64(16, f.end).u32(24, f.processId).u32(28, f.threadId)
    .u32(32, f.correlationId).u32(36, f.returnValue ?? 0).size;
}

/** Writes a SYNCHRONIZATION record at `off` (streamId 0xFFFFFFFF = context-wide); returns its size. */
export function writeSync(dv: DataView, off: number, l: CuptiLayout, f: SyncFields): number {
  return new Rec(dv, off, SIZES[l][CK.SYNCHRONIZATION], CK.SYNCHRONIZATION)
    .u32(4, f.type).u64(8, f.start).u64(16, f.end).u32(24, f.correlationId).u32(28, f.contextId)
    .u32(32, f.streamId).u32(36, f.cudaEventId ?? 0).size;
}

/** Writes an EXTERNAL_CORRELATION record at `off` (externalKind 3 = CUSTOM0, Kineto's framework ops). */
export function writeExternal(
  dv: DataView, off: number, l: CuptiLayout, externalKind: number, externalId: bigint, correlationId: number,
): number {
  return new Rec(dv, off, SIZES[l][CK.EXTERNAL_CORRELATION], CK.EXTERNAL_CORRELATION)
    .u32(4, externalKind).u64(8, externalId).u32(16, correlationId).size;
}

/** Writes a MARKER record at `off` (flags 1 instant, 2 start, 4 end; objectKind 2 = thread). */
export function writeMarker(
  dv: DataView, off: number, l: CuptiLayout, flags: number, timestamp: bigint, id: number, pid: number, tid: number,
  namePtr: bigint, domainPtr = 0n,
): number {
  return new Rec(dv, off, SIZES[l][CK.MARKER], CK.MARKER)
    .u32(4, flags).u64(8, timestamp).u32(16, id).u32(20, 2).u32(24, pid).u32(28, tid).u64(40, namePtr)
    .u64(48, domainPtr).size;
}

/** Fields of an OVERHEAD record (objectKind 2 = thread: objectId is pid, tid; 3+ = device: device, context, stream). */
export interface OverheadFields {
  overheadKind: number; objectKind: number; id0: number; id1: number; id2?: number; start: bigint; end: bigint;
  correlationId?: number;
}
/** Writes an OVERHEAD record at `off` (Overhead / Overhead3); returns its size. */
export function writeOverhead(dv: DataView, off: number, l: CuptiLayout, f: OverheadFields): number {
  return new Rec(dv, off, SIZES[l][CK.OVERHEAD], CK.OVERHEAD)
    .u32(4, f.overheadKind).u32(8, f.objectKind).u32(12, f.id0).u32(16, f.id1).u32(20, f.id2 ?? 0)
    .u64(24, f.start).u64(32, f.end).u32(40, f.correlationId ?? 0).size;
}

/** Fields of a GRAPH_TRACE record (a whole graph launch on a stream). */
export interface GraphTraceFields {
  correlationId: number; start: bigint; end: bigint; deviceId: number; graphId: number; contextId: number;
  streamId: number;
}
/** Writes a GRAPH_TRACE record at `off` (GraphTrace / GraphTrace2); returns its size. */
export function writeGraphTrace(dv: DataView, off: number, l: CuptiLayout, f: GraphTraceFields): number {
  return new Rec(dv, off, SIZES[l][CK.GRAPH_TRACE], CK.GRAPH_TRACE)
    .u32(4, f.correlationId).u64(8, f.start).u64(16, f.end).u32(24, f.deviceId).u32(28, f.graphId)
    .u32(32, f.contextId).u32(36, f.streamId).u32(48, f.deviceId).u32(52, f.contextId).size;
}

/** Fields of a CUDA_EVENT record; deviceTimestamp exists only in CudaEvent2 (CUDA ≥ 12 layouts). */
export interface CudaEventFields {
  correlationId: number; contextId: number; streamId: number; eventId: number; deviceId: number;
  deviceTimestamp: bigint;
}
/** Writes a CUDA_EVENT record at `off` (CudaEvent / CudaEvent2); returns its size. */
export function writeCudaEvent(dv: DataView, off: number, l: CuptiLayout, f: CudaEventFields): number {
  return new Rec(dv, off, SIZES[l][CK.CUDA_EVENT], CK.CUDA_EVENT)
    .u32(4, f.correlationId).u32(8, f.contextId).u32(12, f.streamId).u32(16, f.eventId).u32(24, f.deviceId)
    .u64(40, f.deviceTimestamp).size;
}

/** Runs a writer against a fresh zeroed record of `size` bytes and returns the bytes. */
function one(size: number, write: (dv: DataView) => number): Uint8Array {
  const b = new Uint8Array(size);
  write(new DataView(b.buffer));
  return b;
}

/** A CONCURRENT_KERNEL record. */
export function kernelRecord(l: CuptiLayout, f: KernelFields): Uint8Array {
  return one(SIZES[l][CK.CONCURRENT_KERNEL], (dv) => writeKernel(dv, 0, l, f));
}
/** A MEMCPY record. */
export function memcpyRecord(l: CuptiLayout, f: MemcpyFields): Uint8Array {
  return one(SIZES[l][CK.MEMCPY], (dv) => writeMemcpy(dv, 0, l, f));
}
/** A MEMSET record. */
export function memsetRecord(l: CuptiLayout, f: MemsetFields): Uint8Array {
  return one(SIZES[l][CK.MEMSET], (dv) => writeMemset(dv, 0, l, f));
}
/** A RUNTIME (kind 5) or DRIVER (kind 4) API record. */
export function apiRecord(l: CuptiLayout, f: ApiFields): Uint8Array {
  return one(SIZES[l][f.kind], (dv) => writeApi(dv, 0, l, f));
}
/** A SYNCHRONIZATION record; streamId 0xFFFFFFFF = context-wide. */
export function syncRecord(l: CuptiLayout, f: SyncFields): Uint8Array {
  return one(SIZES[l][CK.SYNCHRONIZATION], (dv) => writeSync(dv, 0, l, f));
}
/** An EXTERNAL_CORRELATION record (externalKind 3 = CUSTOM0, Kineto's framework ops). */
export function externalRecord(l: CuptiLayout, externalKind: number, externalId: bigint, correlationId: number): Uint8Array {
  return one(SIZES[l][CK.EXTERNAL_CORRELATION], (dv) => writeExternal(dv, 0, l, externalKind, externalId, correlationId));
}
/** A MARKER record (flags 1 instant, 2 start, 4 end; objectKind 2 = thread). */
export function markerRecord(
  l: CuptiLayout, flags: number, timestamp: bigint, id: number, pid: number, tid: number, namePtr: bigint, domainPtr = 0n,
): Uint8Array {
  return one(SIZES[l][CK.MARKER], (dv) => writeMarker(dv, 0, l, flags, timestamp, id, pid, tid, namePtr, domainPtr));
}

/** An OVERHEAD record. */
export function overheadRecord(l: CuptiLayout, f: OverheadFields): Uint8Array {
  return one(SIZES[l][CK.OVERHEAD], (dv) => writeOverhead(dv, 0, l, f));
}
/** A GRAPH_TRACE record. */
export function graphTraceRecord(l: CuptiLayout, f: GraphTraceFields): Uint8Array {
  return one(SIZES[l][CK.GRAPH_TRACE], (dv) => writeGraphTrace(dv, 0, l, f));
}
/** A CUDA_EVENT record. */
export function cudaEventRecord(l: CuptiLayout, f: CudaEventFields): Uint8Array {
  return one(SIZES[l][CK.CUDA_EVENT], (dv) => writeCudaEvent(dv, 0, l, f));
}

/** Concatenates records into one activity buffer. */
export function concat(records: Uint8Array[]): Uint8Array {
  const total = records.reduce((s, r) => s + r.length, 0);
  const out = new Uint8Array(total);
  let o = 0;
  for (const r of records) {
    out.set(r, o);
    o += r.length;
  }
  return out;
}
