/**
 * A CUDA dump no bundled sample is like, for the answers tests (test/interop/answers_*.test.ts): one process driving
 * two GPUs from two threads, several streams per GPU with kernels overlapping across streams, NCCL kernels running
 * under compute kernels, copies of every kind XProf classifies (host to device, device to host, device to device,
 * peer), memsets, and four `ProfilerStep#N` NVTX ranges. Built with the record builders of src/tools/cupti_records.ts
 * and returned together with the plain list of what it holds (`ops`, `apis`, `steps`), so the tests compute their
 * expectations from that list, never from rawtrace's output. Times have sub-µs parts so that µs rounding shows.
 */
import { RawtraceWriter } from "../../src/format/writer.js";
import * as C from "../../src/tools/cupti_records.js";

export const T0 = 1_780_000_000_000_000_000n;
const PID = 4242;
export const MAIN = 4300;
export const SIDE = 4301;

/** A device op of the dump, as written (times Unix ns). */
export interface Op {
  kind: "kernel" | "memcpy" | "memset";
  name: string;
  device: number;
  stream: number;
  correlation: number;
  start: bigint;
  end: bigint;
  /** CUPTI copy kind (1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP) for copies. */
  copyKind?: number;
  bytes?: bigint;
  grid?: [number, number, number];
  block?: [number, number, number];
  regs?: number;
}
/** A runtime API call of the dump. */
export interface Api { name: string; tid: number; start: bigint; end: bigint; correlation: number }
/** A ProfilerStep range. */
export interface StepRange { num: number; start: bigint; end: bigint }

export interface AnswersDump { bytes: Uint8Array; ops: Op[]; apis: Api[]; steps: StepRange[] }

const GEMM = "ampere_sgemm_128x64_tn";
const ELEM = "elementwise_add_kernel";
const NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
const STR: Record<string, bigint> = { [GEMM]: 0x1000n, [ELEM]: 0x1100n, [NCCL]: 0x1200n, "ProfilerStep#1": 0x2001n };
for (let n = 1; n <= 4; n++) STR[`ProfilerStep#${n}`] = 0x2000n + BigInt(n);

const CBID = { cudaLaunchKernel: 211, cudaMemcpyAsync: 41, cudaMemsetAsync: 51 } as const;

/**
 * Builds the dump (CUDA 13 layout). `sideTid` / `sideDevice`: the thread that launches GPU 1's work (default SIDE, a
 * thread with no step range) and the GPU it runs on (default 1).
 */
export function answersDump(o: { sideTid?: number; sideDevice?: number } = {}): AnswersDump {
  const L = "cuda13";
  const ops: Op[] = [];
  const apis: Api[] = [];
  const steps: StepRange[] = [];
  let corr = 100;
  const call = (name: keyof typeof CBID, tid: number, start: bigint, dur: bigint): number => {
    corr++;
    apis.push({ name, tid, start, end: start + dur, correlation: corr });
    return corr;
  };
  const STEP = 1_000_000n;
  for (let i = 0; i < 4; i++) {
    const B = T0 + 10_000n + BigInt(i) * STEP;
    steps.push({ num: i + 1, start: B, end: B + STEP - 1_000n });
    const j = BigInt(i);
    // GPU 0, stream 21: the step's input, 1 MiB host to device.
    let c = call("cudaMemcpyAsync", MAIN, B + 1_000n, 2_000n);
    ops.push({ kind: "memcpy", name: "Memcpy HtoD", device: 0, stream: 21, correlation: c, start: B + 5_000n, end: B + 25_333n + j, copyKind: 1, bytes: 1n << 20n });
    // GPU 0, stream 7: ten GEMMs back to back (two launch shapes), launched ahead.
    for (let k = 0; k < 10; k++) {
      const K = BigInt(k);
      c = call("cudaLaunchKernel", MAIN, B + 4_000n + K * 2_000n, 1_500n + K);
      const s = B + 30_000n + K * 40_100n + j * 3n;
      const big = k % 2 === 1;
      ops.push({ kind: "kernel", name: GEMM, device: 0, stream: 7, correlation: c, start: s, end: s + 35_217n + K * 111n + j * 7n,
        grid: [big ? 264 : 132, 1, 1], block: [128, 1, 1], regs: 96 });
    }
    // GPU 0, stream 13: an all-reduce under the GEMMs.
    c = call("cudaLaunchKernel", MAIN, B + 24_000n, 3_000n);
    ops.push({ kind: "kernel", name: NCCL, device: 0, stream: 13, correlation: c, start: B + 100_000n + j * 11n, end: B + 250_500n + j * 13n,
      grid: [2, 1, 1], block: [512, 1, 1], regs: 64 });
    // GPU 0, stream 22: a peer copy to GPU 1 after the GEMMs.
    c = call("cudaMemcpyAsync", MAIN, B + 27_500n, 1_000n);
    ops.push({ kind: "memcpy", name: "Memcpy PtoP", device: 0, stream: 22, correlation: c, start: B + 440_000n, end: B + 470_250n, copyKind: 10, bytes: 8n << 20n });
    // GPU 0, stream 21: the result back to the host, after a gap.
    c = call("cudaMemcpyAsync", MAIN, B + 480_000n, 45_000n);
    ops.push({ kind: "memcpy", name: "Memcpy DtoH", device: 0, stream: 21, correlation: c, start: B + 500_000n, end: B + 520_777n, copyKind: 2, bytes: 4096n });

    // GPU 1, from the second thread: a memset, five element-wise kernels on stream 8, an all-reduce on stream 14,
    // a device-to-device copy on stream 8 while no kernel runs on either GPU.
    c = call("cudaMemsetAsync", o.sideTid ?? SIDE, B + 2_000n, 900n);
    ops.push({ kind: "memset", name: "Memset", device: o.sideDevice ?? 1, stream: 8, correlation: c, start: B + 40_000n, end: B + 40_700n + j, bytes: 65_536n });
    for (let k = 0; k < 5; k++) {
      const K = BigInt(k);
      c = call("cudaLaunchKernel", o.sideTid ?? SIDE, B + 3_000n + K * 9_000n, 2_000n);
      const s = B + 60_000n + K * 50_000n + j * 5n;
      ops.push({ kind: "kernel", name: ELEM, device: o.sideDevice ?? 1, stream: 8, correlation: c, start: s, end: s + 30_000n + K * 7n + j * 17n,
        grid: [1024, 1, 1], block: [256, 1, 1], regs: 32 });
    }
    c = call("cudaLaunchKernel", o.sideTid ?? SIDE, B + 50_000n, 2_500n);
    ops.push({ kind: "kernel", name: NCCL, device: o.sideDevice ?? 1, stream: 14, correlation: c, start: B + 120_000n, end: B + 300_000n + j * 19n,
      grid: [2, 1, 1], block: [512, 1, 1], regs: 64 });
    c = call("cudaMemcpyAsync", o.sideTid ?? SIDE, B + 55_000n, 1_200n);
    ops.push({ kind: "memcpy", name: "Memcpy DtoD", device: o.sideDevice ?? 1, stream: 8, correlation: c, start: B + 428_000n, end: B + 436_001n, copyKind: 8, bytes: 1n << 24n });
  }

  const w = RawtraceWriter.inMemory();
  w.header({
    vendor: 1, vendorVersion: C.LAYOUT_VERSION[L], runtimeVersion: 13000, driverVersion: 13000, pid: PID, rank: 0, worldSize: 1,
    startNs: T0, hostname: "answers-node", commandLine: "/usr/bin/python3\0train.py",
  });
  w.clock({ which: 0, vendorNs: T0, realtimeNs: T0, monotonicNs: 5n, monotonicRawNs: 5n, boottimeNs: 5n });
  w.kindSizes(Object.entries(C.SIZES[L]).map(([k, s]) => [Number(k), s] as const));
  w.apiNames(Object.entries(CBID).map(([n, id]) => [2, id, `${n}_v3020`] as const));
  w.strings(Object.entries(STR).map(([s, p]) => [p, s] as const));
  const dev = (id: number) => ({
    id, multiprocessors: 108, globalMemoryBytes: 80n << 30n, memoryBandwidth: 2_039_000_000_000n, coreClockKhz: 1_410_000,
    ccMajor: 8, ccMinor: 0, maxThreadsPerBlock: 1024, maxThreadsPerMultiprocessor: 2048, regsPerBlock: 65536,
    regsPerMultiprocessor: 65536, warpSize: 32, sharedMemPerBlock: 49152, sharedMemPerMultiprocessor: 167_936,
    sharedMemPerBlockOptin: 166_912, maxBlocksPerMultiprocessor: 32, name: "NVIDIA A100-SXM4-80GB",
    uuid: new Uint8Array(16).fill(id + 1),
  });
  w.devices([dev(0), dev(1)]);
  w.threadNames([[PID, MAIN, "pt_main_thread"], [PID, SIDE, "pt_gpu1_thread"]]);
  // Host records: NVTX step ranges (start, end) and the calls, in time order.
  const host: Array<[bigint, Uint8Array]> = [];
  for (const s of steps) {
    host.push([s.start, C.markerRecord(L, 2, s.start, s.num, PID, MAIN, STR[`ProfilerStep#${s.num}`])]);
    host.push([s.end, C.markerRecord(L, 4, s.end, s.num, PID, MAIN, 0n)]);
  }
  for (const a of apis) {
    host.push([a.end, C.apiRecord(L, { kind: 5, cbid: CBID[a.name as keyof typeof CBID], start: a.start, end: a.end, processId: PID, threadId: a.tid, correlationId: a.correlation })]);
  }
  host.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  w.activity(C.concat(host.map((h) => h[1])));
  const ctx = (d: number) => d + 1;
  w.activity(C.concat(ops.map((o) => {
    const base = { start: o.start, end: o.end, deviceId: o.device, contextId: ctx(o.device), streamId: o.stream, correlationId: o.correlation };
    if (o.kind === "kernel") {
      return C.kernelRecord(L, { ...base, namePtr: STR[o.name], gridX: o.grid![0], gridY: o.grid![1], gridZ: o.grid![2],
        blockX: o.block![0], blockY: o.block![1], blockZ: o.block![2], registersPerThread: o.regs });
    }
    if (o.kind === "memcpy") return C.memcpyRecord(L, { ...base, bytes: o.bytes!, copyKind: o.copyKind!, srcKind: o.copyKind === 1 ? 2 : 3,
      dstKind: o.copyKind === 2 ? 2 : 3, async: true });
    return C.memsetRecord(L, { ...base, bytes: o.bytes!, memoryKind: 3, async: true });
  })));
  w.end();
  return { bytes: w.bytes(), ops, apis, steps };
}
