/**
 * Deterministic generator of realistic rocprofiler-sdk 1.0 dumps (the ROCm collector's chunks) for the benchmarks,
 * the ROCm counterpart of bench/generate.ts: a training loop where each step is a ROCTx range (push/pop) holding
 * thousands of ops; each op is a HIP call (64-byte API record, External id) and its device work: a kernel dispatch
 * (184 B, on one of 4 queues, kernel ids into KERNEL_SYMBOLS) or, for a few, a copy (96 B), with a
 * hipDeviceSynchronize and correlation-id retirements at the end of each step. One MI300X-shaped GPU agent.
 *
 *   tsx bench/generate_rocm.ts <records> <out.rawtrace>
 *
 * Same arguments, same bytes (a fixed-seed PRNG; no clock is read).
 */
import { rng } from "../src/tools/rng.js";
import { PayloadBuilder, RawtraceWriter } from "../src/format/writer.js";
import { ChunkType, RocpDomain } from "../src/format/container.js";
import { KIND_NAMES } from "../src/tools/kineto_to_rocprof.js";
import { KERNEL_NAMES } from "./kernel_names.js";

const CHUNK = 8 << 20;
const PID = 41337;
const TID = 41338;
const T0 = 1_780_000_000_000_000_000n;
const BOOT = 3_600_000_000_000n; // BOOTTIME at T0: up for an hour
const K = (n: string) => KIND_NAMES["1.0"].indexOf(n);
const HIP = { hipLaunchKernel: 3, hipMemcpyAsync: 2, hipDeviceSynchronize: 4 } as const;
const CPU = 0x1000n;
const GPU = 0x2000n;

/** Writes a dump of about `records` activity records to `path`; returns the counts. */
export function generateRocm(records: number, path: string): { records: number; kernels: number } {
  const w = RawtraceWriter.toFile(path);
  w.header({
    vendor: 2, vendorVersion: 10000, pid: PID, startNs: T0, hostname: "bench-node",
    commandLine: "/usr/bin/python3\0train.py\0--steps=1000", vendorVersionText: "1.0.0",
  });
  w.clock({ which: 0, vendorNs: BOOT, realtimeNs: T0, monotonicNs: BOOT, monotonicRawNs: BOOT, boottimeNs: BOOT });
  const names: Array<[number, number, string]> = KIND_NAMES["1.0"].map((n, i) => [RocpDomain.KINDS, i, n] as [number, number, string]);
  for (const [n, id] of Object.entries(HIP)) names.push([RocpDomain.OPS | K("HIP_RUNTIME_API"), id, n]);
  names.push([RocpDomain.OPS | K("KERNEL_DISPATCH"), 2, "KERNEL_DISPATCH_COMPLETE"]);
  names.push([RocpDomain.OPS | K("MEMORY_COPY"), 2, "MEMORY_COPY_HOST_TO_DEVICE"], [RocpDomain.OPS | K("MEMORY_COPY"), 3, "MEMORY_COPY_DEVICE_TO_HOST"]);
  names.push([RocpDomain.OPS | K("MARKER_CORE_API"), 1, "roctxRangePushA"], [RocpDomain.OPS | K("MARKER_CORE_API"), 2, "roctxRangePop"]);
  w.apiNames(names);
  const ag = new PayloadBuilder().u32(2).u32(120);
  ag.u64(CPU).u32(1).u32(0).i32(0).i32(0).bytes(new Uint8Array(96)).str("CPU").str("CPU").str("CPU").str("");
  ag.u64(GPU).u32(2).u32(1).i32(1).i32(0).u32(304).u32(1216).u32(4).u32(8).u32(32).u32(64).u32(64).u32(1024).u32(2100)
    .u32(90402).u32(8).u32(0).u16(0x1002).u16(0x74a1).u32(0).u32(0).u32(0).u64(0).u64(192n << 30n).bytes(new Uint8Array(16))
    .str("gfx942").str("AMD Instinct MI300X").str("AMD").str("aqua_vanjaram");
  w.chunk(ChunkType.AGENTS, ag.result());
  const ks = new PayloadBuilder().u32(KERNEL_NAMES.length).u32(48);
  KERNEL_NAMES.forEach((n, i) => {
    ks.u64(i + 1).u64(1).u64(0x7f10_0000_0000n + BigInt(i) * 0x100n).u32(64).u32((i & 3) * 4096).u32(i & 1 ? 16 : 0)
      .u32(32 + (i & 15)).u32(64 + (i & 63)).u32(i & 2 ? 64 : 0).str(n);
  });
  w.chunk(ChunkType.KERNEL_SYMBOLS, ks.result());
  const rand = rng(43);
  let buf = new Uint8Array(CHUNK);
  let dv = new DataView(buf.buffer);
  let off = 0;
  let n = 0;
  let kernels = 0;
  let corr = 1n;
  let ext = 1n;
  let t = BOOT + 1000n;
  let gpuT = BOOT + 5000n;
  let step = 0;
  const strings: Array<[bigint, string]> = [];
  const flush = () => {
    if (strings.length) w.strings(strings.splice(0));
    w.activity(buf.subarray(0, off));
    buf = new Uint8Array(CHUNK);
    dv = new DataView(buf.buffer);
    off = 0;
  };
  /** Starts a framed record of `size` payload bytes (rocprofiler_abi.h layouts) and returns its payload offset. */
  const begin = (kind: string, size: number, op: number): number => {
    if (off + 16 + size > CHUNK) flush();
    dv.setUint32(off, 1, true);
    dv.setUint32(off + 4, K(kind), true);
    dv.setBigUint64(off + 8, BigInt(size), true);
    const p = off + 16;
    dv.setBigUint64(p, BigInt(size), true);
    dv.setUint32(p + 8, K(kind), true);
    dv.setInt32(p + 12, op, true);
    off = p + ((size + 7) & ~7);
    n++;
    return p;
  };
  const api = (kind: string, op: number, c: bigint, e: bigint, s: bigint, end: bigint) => {
    const p = begin(kind, 64, op);
    dv.setBigUint64(p + 16, c, true);
    dv.setBigUint64(p + 24, e, true);
    dv.setBigUint64(p + 40, s, true);
    dv.setBigUint64(p + 48, end, true);
    dv.setBigUint64(p + 56, BigInt(TID), true);
  };
  const OPS_PER_STEP = 2000;
  while (n < records) {
    const push = corr++;
    strings.push([push, `train_step ${step}`]);
    api("MARKER_CORE_API", 1, push, 0n, t, t + 300n);
    t += 1000n;
    for (let op = 0; op < OPS_PER_STEP && n < records; op++) {
      const c = corr++;
      const e = ext++;
      const r = rand();
      const apiDur = 2000n + BigInt(Math.floor(r * 3000));
      if (r < 0.06) {
        const bytes = BigInt(4096 + Math.floor(r * 1e7));
        api("HIP_RUNTIME_API", HIP.hipMemcpyAsync, c, e, t, t + apiDur);
        const d = bytes / 20n + 500n;
        const p = begin("MEMORY_COPY", 96, r < 0.03 ? 2 : 3);
        dv.setBigUint64(p + 16, c, true);
        dv.setBigUint64(p + 24, e, true);
        dv.setBigUint64(p + 32, BigInt(TID), true);
        dv.setBigUint64(p + 40, gpuT, true);
        dv.setBigUint64(p + 48, gpuT + d, true);
        dv.setBigUint64(p + 56, r < 0.03 ? GPU : CPU, true);
        dv.setBigUint64(p + 64, r < 0.03 ? CPU : GPU, true);
        dv.setBigUint64(p + 72, bytes, true);
        gpuT += d + 300n;
      } else {
        api("HIP_RUNTIME_API", HIP.hipLaunchKernel, c, e, t, t + apiDur);
        const k = Math.floor(rand() * KERNEL_NAMES.length);
        const d = 1500n + BigInt(Math.floor(rand() * 200000));
        const p = begin("KERNEL_DISPATCH", 184, 2);
        dv.setBigUint64(p + 16, c, true);
        dv.setBigUint64(p + 24, e, true);
        dv.setBigUint64(p + 32, BigInt(TID), true);
        dv.setBigUint64(p + 40, gpuT, true);
        dv.setBigUint64(p + 48, gpuT + d, true);
        dv.setBigUint64(p + 56, 72n, true);
        dv.setBigUint64(p + 64, GPU, true);
        dv.setBigUint64(p + 72, 0x7f20_0000_0000n + BigInt(op & 3) * 0x1000n, true);
        dv.setBigUint64(p + 80, BigInt(k + 1), true);
        dv.setBigUint64(p + 88, c, true);
        dv.setUint32(p + 100, (k & 3) * 4096 + (k & 4) * 8192, true);
        const wg = 128 << (k & 2);
        dv.setUint32(p + 104, wg, true);
        dv.setUint32(p + 108, 1, true);
        dv.setUint32(p + 112, 1, true);
        dv.setUint32(p + 116, wg * (1 + ((k * 37) % 4096)), true);
        dv.setUint32(p + 120, 1 + (k & 1), true);
        dv.setUint32(p + 124, 1, true);
        gpuT += d + 800n;
        kernels++;
      }
      t += apiDur + 1500n;
      if (gpuT < t) gpuT = t + 3000n;
    }
    api("HIP_RUNTIME_API", HIP.hipDeviceSynchronize, corr++, 0n, t, gpuT + 1000n);
    t = gpuT + 2000n;
    api("MARKER_CORE_API", 2, corr++, 0n, t, t + 200n);
    t += 10000n;
    gpuT = t + 5000n;
    step++;
  }
  if (off > 0) flush();
  w.clock({ which: 1, vendorNs: t, realtimeNs: T0 + (t - BOOT), monotonicNs: t, monotonicRawNs: t, boottimeNs: t });
  w.end();
  w.close();
  return { records: n, kernels };
}

const isMain = process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop()!);
if (isMain) {
  const [records, out] = process.argv.slice(2);
  if (!records || !out) {
    console.error("usage: tsx bench/generate_rocm.ts <records> <out.rawtrace>");
    process.exit(2);
  }
  const t0 = performance.now();
  const r = generateRocm(Number(records), out);
  console.log(`${out}: ${r.records} records (${r.kernels} kernels) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
