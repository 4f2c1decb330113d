/**
 * Deterministic generator of realistic CUPTI dumps (CUDA 13 record layouts) for the benchmarks: a training loop
 * where each step is an NVTX range holding thousands of ops; each op is an external correlation (framework op id),
 * a cudaLaunchKernel runtime record (+ its cuLaunchKernel driver record, hidden by default like Kineto does) and
 * the kernel on one of 4 streams, with periodic memcpy/memset and a stream sync at the end of each step.
 *
 *   tsx bench/generate.ts <records> <out.rawtrace> [xxh64|xxh32|crc32] [launch-first|device-first|nested]
 *
 * Same arguments, same bytes (a fixed-seed PRNG; no clock is read). The third argument is the payload checksum of the
 * chunks (default XXH64's low 32 bits, what the writers store since format 1.2; `xxh32` and `crc32` give format 1.1-
 * and 1.0-style dumps with the same payloads, for comparing them). `device-first` writes each op's device record
 * before its launch call(s), as real CUPTI dumps have them; `nested` also writes each cuLaunchKernel before the cudaLaunchKernel around it, as a
 * tracer that sees nested calls records them, each when it returns ({@link RecordOrder}).
 */
import { closeSync, existsSync, openSync, readSync } from "node:fs";
import { rng } from "../src/tools/rng.js";
import { CHECKSUM_FLAGS, RawtraceWriter, type PayloadChecksum } from "../src/format/writer.js";
import { CHUNK_FLAG_CRC, CHUNK_FLAG_XXH32, CHUNK_FLAG_XXH64, PREAMBLE_SIZE } from "../src/format/container.js";
import { CHUNK_FLAG_SUMS } from "../src/format/checksum.js";
import * as C from "../src/tools/cupti_records.js";
import { KERNEL_NAMES } from "./kernel_names.js";

const L: C.CuptiLayout = "cuda13";
const CHUNK = 8 << 20;
const PID = 31337;
const TID = 31338;
const T0 = 1_780_000_000_000_000_000n;


/**
 * Where each op's device record (kernel, memcpy, memset) sits against its launch call(s) in the file.
 * `launch-first` (the default, what every bench figure before 2026-11-25 evening used): after them. `device-first`:
 * before them — the order of real CUPTI dumps (every H100 fixture has each device record before its launch call),
 * which keeps the NVTX projection pass (docs/performance/core.md, "What is left for target 1"). `nested`: as
 * `device-first`, and each driver call before the runtime call that made it, as a tracer that records nested calls
 * writes them (each when it returns, so the inner one first): the host thread's records then arrive out of start
 * order, one place late per launch, as nested NVTX ranges do in real dumps (recorded when they end). The H100
 * fixtures themselves have no nested API calls: their launches are runtime calls only.
 */
export type RecordOrder = "launch-first" | "device-first" | "nested";

/**
 * Writes a dump of about `records` activity records to `path` in ACTIVITY chunks of `chunkBytes` (default 8 MiB),
 * every chunk with the payload `checksum`, device records placed by `order`; returns the counts. The records are the
 * same whatever the order (same ids, times and names).
 */
export function generate(
  records: number, path: string, chunkBytes = CHUNK, checksum: PayloadChecksum = "xxh64", order: RecordOrder = "launch-first",
): { records: number; bytes: number; kernels: number } {
  const deviceFirst = order !== "launch-first";
  const innerFirst = order === "nested";
  const w = RawtraceWriter.toFile(path, { checksum });
  w.header({
    vendor: 1, vendorVersion: C.LAYOUT_VERSION[L], runtimeVersion: 13000, driverVersion: 13000, pid: PID,
    startNs: T0, hostname: "bench-node", commandLine: "/usr/bin/python3\0train.py\0--steps=1000",
  });
  w.clock({ which: 0, vendorNs: T0, realtimeNs: T0, monotonicNs: 1n, monotonicRawNs: 1n, boottimeNs: 1n });
  w.kindSizes(Object.entries(C.SIZES[L]).map(([k, s]) => [Number(k), s] as const));
  w.apiNames([
    [2, 211, "cudaLaunchKernel_v7000"], [2, 41, "cudaMemcpyAsync_v3020"], [2, 51, "cudaMemsetAsync_v3020"],
    [2, 131, "cudaStreamSynchronize_v3020"], [1, 307, "cuLaunchKernel"],
  ]);
  const namePtr = (i: number) => 0x7f0000000000n + BigInt(i) * 0x100n;
  w.strings([...KERNEL_NAMES.map((n, i) => [namePtr(i), n] as const), [0x7e0000000000n, "train_step"]]);
  w.devices([{
    id: 0, multiprocessors: 132, globalMemoryBytes: 80n << 30n, memoryBandwidth: 3350000000000n,
    coreClockKhz: 1980000, ccMajor: 9, ccMinor: 0, maxThreadsPerBlock: 1024, maxThreadsPerMultiprocessor: 2048,
    regsPerBlock: 65536, regsPerMultiprocessor: 65536, warpSize: 32, sharedMemPerBlock: 49152,
    sharedMemPerMultiprocessor: 233472, sharedMemPerBlockOptin: 232448, maxBlocksPerMultiprocessor: 32,
    name: "NVIDIA H100 80GB HBM3",
  }]);
  const rand = rng(42);
  let buf = new Uint8Array(chunkBytes);
  let dv = new DataView(buf.buffer);
  let off = 0;
  let n = 0;
  let kernels = 0;
  let corr = 1;
  let ext = 1n;
  let t = T0 + 1000n;
  let gpuT = T0 + 5000n;
  let step = 0;
  const flush = () => {
    w.activity(buf.subarray(0, off));
    buf = new Uint8Array(chunkBytes);
    dv = new DataView(buf.buffer);
    off = 0;
  };
  const room = (size: number) => {
    if (off + size > chunkBytes) flush();
  };
  const OPS_PER_STEP = 2000;
  while (n < records) {
    room(C.SIZES[L][C.CK.MARKER]);
    off += C.writeMarker(dv, off, L, 2, t, step + 1, PID, TID, 0x7e0000000000n);
    n++;
    for (let op = 0; op < OPS_PER_STEP && n < records; op++) {
      const c = corr++;
      const stream = 7 + (op & 3);
      const r = rand();
      room(24 + 40 + 40 + 216);
      off += C.writeExternal(dv, off, L, 3, ext++, c);
      const apiDur = 2000n + BigInt(Math.floor(r * 3000));
      if (r < 0.06) {
        const bytes = BigInt(4096 + Math.floor(r * 1e7));
        const d = bytes / 20n + 500n;
        const api = () => { off += C.writeApi(dv, off, L, { kind: 5, cbid: 41, start: t, end: t + apiDur, processId: PID, threadId: TID, correlationId: c }); };
        if (!deviceFirst) api();
        off += C.writeMemcpy(dv, off, L, { start: gpuT, end: gpuT + d, deviceId: 0, contextId: 1, streamId: stream, correlationId: c, bytes, copyKind: r < 0.03 ? 1 : 2, srcKind: r < 0.03 ? 2 : 3, dstKind: r < 0.03 ? 3 : 2, async: true });
        if (deviceFirst) api();
        gpuT += d + 300n;
        n += 3;
      } else if (r < 0.08) {
        const api = () => { off += C.writeApi(dv, off, L, { kind: 5, cbid: 51, start: t, end: t + apiDur, processId: PID, threadId: TID, correlationId: c }); };
        if (!deviceFirst) api();
        off += C.writeMemset(dv, off, L, { start: gpuT, end: gpuT + 1200n, deviceId: 0, contextId: 1, streamId: stream, correlationId: c, bytes: 1n << 20n, memoryKind: 3, async: true });
        if (deviceFirst) api();
        gpuT += 1500n;
        n += 3;
      } else {
        const dc = corr++;
        const outer = () => { off += C.writeApi(dv, off, L, { kind: 5, cbid: 211, start: t, end: t + apiDur, processId: PID, threadId: TID, correlationId: c }); };
        const inner = () => { off += C.writeApi(dv, off, L, { kind: 4, cbid: 307, start: t + 500n, end: t + apiDur - 300n, processId: PID, threadId: TID, correlationId: dc }); };
        const apis = () => {
          if (innerFirst) {
            inner();
            outer();
          } else {
            outer();
            inner();
          }
        };
        if (!deviceFirst) apis();
        const k = Math.floor(rand() * KERNEL_NAMES.length);
        const d = 1500n + BigInt(Math.floor(rand() * 200000));
        off += C.writeKernel(dv, off, L, {
          start: gpuT, end: gpuT + d, deviceId: 0, contextId: 1, streamId: stream, correlationId: c,
          namePtr: namePtr(k), gridX: 1 + (k * 37) % 4096, gridY: 1 + (k & 1), blockX: 128 << (k & 2), registersPerThread: 32 + k,
          staticSharedMemory: (k & 3) * 4096, dynamicSharedMemory: (k & 4) * 8192, channelID: stream, channelType: 1,
        });
        if (deviceFirst) apis();
        gpuT += d + 800n;
        kernels++;
        n += 4;
      }
      t += apiDur + 1500n;
      if (gpuT < t) gpuT = t + 3000n;
    }
    const c = corr++;
    room(40 + 56 + 56);
    off += C.writeApi(dv, off, L, { kind: 5, cbid: 131, start: t, end: gpuT + 1000n, processId: PID, threadId: TID, correlationId: c });
    off += C.writeSync(dv, off, L, { type: 3, start: gpuT, end: gpuT + 1000n, correlationId: c, contextId: 1, streamId: 7 });
    t = gpuT + 2000n;
    off += C.writeMarker(dv, off, L, 4, t, step + 1, PID, TID, 0n);
    t += 10000n;
    gpuT = t + 5000n;
    n += 3;
    step++;
  }
  if (off > 0) flush();
  w.clock({ which: 1, vendorNs: t, realtimeNs: t, monotonicNs: 2n, monotonicRawNs: 2n, boottimeNs: 2n });
  w.end();
  w.close();
  return { records: n, bytes: 0, kernels };
}

/** Checksum bits (docs/format.md flag bits 0–2) of the first chunk of the dump at `path`; -1 when there is none. */
function firstChunkChecksum(path: string): number {
  const fd = openSync(path, "r");
  try {
    const h = Buffer.alloc(8);
    return readSync(fd, h, 0, 8, PREAMBLE_SIZE) === 8 ? h.readUInt16LE(6) & CHUNK_FLAG_SUMS : -1;
  } finally {
    closeSync(fd);
  }
}

/**
 * The benches' dump cache: makes the dump of `records` records at `path` with `make` (bench/generate.ts or
 * bench/generate_rocm.ts) unless one is there already. A cached dump whose chunks carry another payload checksum
 * than the writer's default (XXH64) was made by an older writer and would measure the other checksum: it is
 * regenerated, with a line on stderr saying why.
 */
export function ensureDump(records: number, path: string, make: (records: number, path: string) => unknown = generate): void {
  if (existsSync(path)) {
    const sums = firstChunkChecksum(path);
    if (sums === CHUNK_FLAG_XXH64) return;
    const what = sums === CHUNK_FLAG_XXH32 ? "XXH32" : sums === CHUNK_FLAG_CRC ? "CRC-32" : sums === 0 ? "no" : "unreadable";
    console.error(`bench: ${path} has ${what} payload checksums, not XXH64 (an older writer made it): regenerating`);
  }
  make(records, path);
}

const isMain = process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop()!);
if (isMain) {
  const [records, out, sum = "xxh64", order = "launch-first"] = process.argv.slice(2);
  if (!records || !out || !Object.hasOwn(CHECKSUM_FLAGS, sum) || !["launch-first", "device-first", "nested"].includes(order)) {
    console.error("usage: tsx bench/generate.ts <records> <out.rawtrace> [xxh64|xxh32|crc32] [launch-first|device-first|nested]");
    process.exit(2);
  }
  const t0 = performance.now();
  const r = generate(Number(records), out, CHUNK, sum as PayloadChecksum, order as RecordOrder);
  console.log(`${out}: ${r.records} records (${r.kernels} kernels) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
