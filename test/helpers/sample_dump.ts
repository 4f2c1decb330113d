/**
 * A small CUPTI dump with one of everything the decoder turns into events, built with the TS writer and the
 * record builders (CUDA 13 or 12 layout). Timestamps are realistic epoch ns (> 2^53) so precision is tested.
 */
import { RawtraceWriter, type PayloadChecksum } from "../../src/format/writer.js";
import * as C from "../../src/tools/cupti_records.js";

export const T0 = 1_780_000_000_123_456_789n;
export const PID = 4242;
export const TID = 4243;
export const MANGLED =
  "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_";
/** Bytes of a hostile name: quote, backslash, newline, tab, control byte, invalid UTF-8 (0xff), DEL. */
export const HOSTILE = new Uint8Array([0x62, 0x22, 0x5c, 0x0a, 0x09, 0x01, 0xff, 0x7f, 0x7a]);

export interface SampleOptions {
  layout?: C.CuptiLayout;
  /** Offset of the vendor clock from CLOCK_REALTIME (realtime = vendor + offset). */
  clockOffset?: bigint;
  /** Moves every timestamp (the records', the header's and the clock's) this many ns later: another rank of one run. */
  shiftNs?: bigint;
  /** Write an END chunk (default true). */
  end?: boolean;
  /** Leave out the KIND_SIZES chunk (the decoder must use its built-in sizes). */
  noKindSizes?: boolean;
  /** HEADER rank (default 3) and host name (default "gpu-node-1"). */
  rank?: number;
  hostname?: string;
  /** Give every chunk this sequence number (a file whose numbering repeats: SEQ_REUSED). */
  seq?: number;
  /** Leave out the DEVICES chunk (no device table: occupancy and device properties unknown). */
  noDevices?: boolean;
  /**
   * Payload checksum of every chunk (the writer's default, XXH64, unless `"xxh32"` or `"crc32"`: format 1.1- and
   * 1.0-style dumps).
   */
  checksum?: PayloadChecksum;
  /**
   * Write the first kernel and the copy in an ACTIVITY chunk before their launch calls (the order real CUPTI dumps
   * have), instead of after them: the NVTX projection then needs its own pass.
   */
  deviceFirst?: boolean;
  /** The HEADER's pid, when it is not the records' ({@link PID}): API calls only from another process. */
  headerPid?: number;
}

/** Builds the sample dump. */
export function sampleDump(o: SampleOptions = {}): Uint8Array {
  const L = o.layout ?? "cuda13";
  const off = o.clockOffset ?? 0n;
  const T = T0 + (o.shiftNs ?? 0n);
  const w = RawtraceWriter.inMemory({ checksum: o.checksum });
  if (o.seq !== undefined) w.seqOverride = o.seq;
  w.header({
    vendor: 1, vendorVersion: C.LAYOUT_VERSION[L], runtimeVersion: 12080, driverVersion: 12080, pid: o.headerPid ?? PID,
    rank: o.rank ?? 3, worldSize: 8, startNs: T + off, hostname: o.hostname ?? "gpu-node-1", commandLine: "/usr/bin/python3\0train.py",
  });
  w.clock({ which: 0, vendorNs: T, realtimeNs: T + off, monotonicNs: 5n, monotonicRawNs: 5n, boottimeNs: 5n });
  if (!o.noKindSizes) w.kindSizes(Object.entries(C.SIZES[L]).map(([k, s]) => [Number(k), s] as const));
  w.apiNames([
    [2, 211, "cudaLaunchKernel_v7000"], [2, 41, "cudaMemcpyAsync_v3020"], [2, 131, "cudaStreamSynchronize_v3020"],
    [2, 17, "cudaGetDevice_v3020"], [1, 307, "cuLaunchKernel"], [1, 400, "cuCtxGetCurrent"],
  ]);
  w.strings([[0x1000n, MANGLED], [0x2000n, HOSTILE], [0x3000n, "step"], [0x3100n, "forward"], [0x3200n, "my_domain"]]);
  if (!o.noDevices) w.devices([{
    id: 0, multiprocessors: 132, globalMemoryBytes: 80n << 30n, memoryBandwidth: 3350000000000n, coreClockKhz: 1980000,
    ccMajor: 9, ccMinor: 0, maxThreadsPerBlock: 1024, maxThreadsPerMultiprocessor: 2048, regsPerBlock: 65536,
    regsPerMultiprocessor: 65536, warpSize: 32, sharedMemPerBlock: 49152, sharedMemPerMultiprocessor: 233472,
    sharedMemPerBlockOptin: 232448, maxBlocksPerMultiprocessor: 32, name: "NVIDIA H100 80GB HBM3",
  }]);
  w.threadNames([[PID, TID, "pt_main_thread"]]);
  const early = [
    C.kernelRecord(L, {
      start: T + 7000n, end: T + 9501n, deviceId: 0, contextId: 1, streamId: 7, correlationId: 5, namePtr: 0x1000n,
      gridX: 130, gridY: 2, gridZ: 1, blockX: 128, blockY: 1, blockZ: 1, registersPerThread: 16,
      staticSharedMemory: 1024, dynamicSharedMemory: 2048, graphId: 3, graphNodeId: 9n, channelID: 4, channelType: 1,
    }),
    C.memcpyRecord(L, { start: T + 10000n, end: T + 12000n, deviceId: 0, contextId: 1, streamId: 7, correlationId: 8, bytes: 4096n, copyKind: 1, srcKind: 2, dstKind: 3, async: true }),
  ];
  if (o.deviceFirst) w.activity(C.concat(early));
  w.activity(C.concat([
    C.externalRecord(L, 3, 77n, 5),
    C.markerRecord(L, 2, T + 500n, 1, PID, TID, 0x3000n),
    C.markerRecord(L, 2, T + 600n, 2, PID, TID, 0x3100n, 0x3200n),
    C.apiRecord(L, { kind: 5, cbid: 211, start: T + 1000n, end: T + 5000n, processId: PID, threadId: TID, correlationId: 5 }),
    C.apiRecord(L, { kind: 5, cbid: 17, start: T + 5100n, end: T + 5200n, processId: PID, threadId: TID, correlationId: 6 }),
    C.apiRecord(L, { kind: 4, cbid: 400, start: T + 5300n, end: T + 5400n, processId: PID, threadId: TID, correlationId: 7 }),
    C.apiRecord(L, { kind: 5, cbid: 41, start: T + 5500n, end: T + 5900n, processId: PID, threadId: TID, correlationId: 8 }),
    C.markerRecord(L, 4, T + 6000n, 2, PID, TID, 0n),
  ]));
  w.activity(C.concat([
    ...(o.deviceFirst ? [] : early),
    C.memsetRecord(L, { start: T + 12100n, end: T + 12200n, deviceId: 0, contextId: 1, streamId: 9, correlationId: 11, bytes: 256n, memoryKind: 3 }),
    C.kernelRecord(L, { start: T + 13000n, end: T + 13500n, deviceId: 0, contextId: 1, streamId: 7, correlationId: 9, namePtr: 0x2000n }),
    C.syncRecord(L, { type: 3, start: T + 14000n, end: T + 15000n, correlationId: 10, contextId: 1, streamId: 7 }),
    C.syncRecord(L, { type: 4, start: T + 15100n, end: T + 15200n, correlationId: 12, contextId: 1, streamId: 0xffffffff }),
    C.markerRecord(L, 4, T + 20000n, 1, PID, TID, 0n),
  ]));
  w.dropped(7, 1);
  if (o.end ?? true) w.end();
  return w.bytes();
}
