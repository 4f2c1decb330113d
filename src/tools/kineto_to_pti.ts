/**
 * The XPU round-trip tool: a Kineto-style Chrome JSON trace of an Intel XPU run (the categories Kineto's XPU plugin
 * writes; plain or gzip) → a `.rawtrace` holding its GPU side as the XPU collector would have written it: PTI view
 * records of PTI 0.17 (v1) or 1.2 (`_v2`) with the layouts of collectors/xpu/pti_abi.h, KIND_SIZES, API_NAMES,
 * STRINGS, DEVICES, THREAD_NAMES and CLOCK anchors (docs/format.md "Intel XPU"). Converting that dump with the engine
 * and comparing with the original, event by event, proves the PTI decoder to the nanosecond
 * (test/tools/roundtrip_pti.test.ts).
 *
 *   tsx src/tools/kineto_to_pti.ts in.json[.gz] -o out.rawtrace [--pti 1.2|0.17] [--records-per-chunk N]
 *
 * What becomes what:
 * - `xpu_runtime` → RUNTIME_API (group 3 SYCL), `xpu_driver` → DRIVER_API (group 1 Level Zero): API id from the
 *   real libraries' numbering where known (`urEnqueueKernelLaunch` 17, …; docs/collectors/xpu.md), else 4096 + order
 *   of first appearance; the names in API_NAMES;
 * - `kernel` → DEVICE_GPU_KERNEL: device UUID of GPU `pid`, SYCL queue id `sycl queue` (else `tid`), L0 queue and
 *   context from the hex args, `kernel_id`, `source_file_name` / `source_line_number`, append / submit times from
 *   `appended` / `submitted`;
 * - `gpu_memcpy` → DEVICE_GPU_MEM_COPY, type and memory kinds from the name `Memcpy H2D (HOST -> DEVICE)`, bytes from
 *   `bytes`, `_name` from `l0 call`; with `fromDevice` ≠ `toDevice` → DEVICE_GPU_MEM_COPY_P2P;
 * - `gpu_memset` → DEVICE_GPU_MEM_FILL from `Memset (value -> TYPE)`;
 * - `xpu_sync` → DEVICE_SYNCHRONIZATION (type from `Type`, API from the name); `collective_comm` `xccl::<op>` →
 *   COMMUNICATION; `overhead` → COLLECTION_OVERHEAD (kind from the name);
 * - `"External id"` of device work → an EXTERNAL_CORRELATION record (CUSTOM_0) before it, as PTI emits them;
 * - `deviceProperties` → DEVICES (UUID per device; Xe cores from `numSms`).
 * Times: Unix ns exactly as in the trace (µs text parsed as decimals), written as PTI's CLOCK_REALTIME with start
 * and end anchors.
 */
import { RawtraceWriter } from "../format/writer.js";
import { Vendor } from "../format/container.js";
import { absoluteNs, argsOf, asInt, readKinetoTrace, runIfMain, traceBaseNs, timedEvent, type KinetoTrace } from "./kineto_to_rawtrace.js";
import { hostThreadNames, writeActivityChunks } from "./dump_parts.js";
import { parseToolArgs, writeToolOutput } from "./kineto_cli.js";

/** Which PTI record generation to write. */
export type PtiGen = "1.2" | "0.17";
/** ptiVersion() as 10000 × major + 100 × minor + patch. */
export const PTI_VERSION: Record<PtiGen, number> = { "1.2": 10200, "0.17": 1700 };

/** pti_view_kind values. */
export const PtiKind = {
  KERNEL: 1, DRIVER_API: 3, OVERHEAD: 5, RUNTIME_API: 6, EXTERNAL: 7, COPY: 8, FILL: 9, P2P: 10, SYNC: 11, COMM: 12,
} as const;

/** Record size of every kind, per generation (as the real 0.17.0 and 1.2.0 libraries step them). */
export function ptiSizes(gen: PtiGen): Record<number, number> {
  const v2 = gen === "1.2";
  return {
    1: v2 ? 184 : 168, 3: 48, 5: 56, 6: 48, 7: 24, 8: v2 ? 152 : 136, 9: v2 ? 152 : 136, 10: v2 ? 192 : 168, 11: 72,
    12: v2 ? 64 : 56,
  };
}

/** API ids of the real libraries (identical in 0.12.4, 0.17.0 and 1.2.0: pti_abi.test.ts). */
const KNOWN_IDS: Record<string, [number, number]> = {
  urEnqueueKernelLaunch: [3, 17], urEnqueueUSMFill: [3, 32], urEnqueueUSMMemcpy: [3, 33], urEventWait: [3, 42],
  urQueueFinish: [3, 97], zeCommandListAppendMemoryCopy: [1, 41], zeCommandListAppendMemoryFill: [1, 42],
  zeCommandListAppendLaunchKernel: [1, 55], zeEventHostSynchronize: [1, 84],
};
const MEM_TYPES = ["MEMORY(Unknown)", "HOST", "DEVICE", "SHARED"];
const LETTERS = "MHDS";
const SYNC_TYPES = ["UNKNOWN", "GPU_BARRIER_EXECUTION", "GPU_BARRIER_MEMORY", "HOST_FENCE", "HOST_EVENT",
  "HOST_COMMAND_LIST", "HOST_COMMAND_QUEUE", "HOST_DEVICE"];
const OVERHEAD_KINDS = ["INVALID", "UNKNOWN", "RESOURCE", "BUFFER_FLUSH", "BUFFER_DRIVER", "BUFFER_TIME"];

/** The UUID the tool gives GPU `i` (what Level Zero reports for an Intel GPU: vendor 0x8086 first). */
export function deviceUuid(i: number): Uint8Array {
  const u = new Uint8Array(16);
  u.set([0x86, 0x80, 0xd5, 0x0b, 0, 0, 0, 0, 0x9a, 0x00, 0x00, 0x00, 0, 0, 0, 0]);
  u[4] = i & 0xff;
  u[15] = 0x10 + (i & 0xff);
  return u;
}

/** Options of {@link kinetoToPti}. */
export interface PtiRoundTripOptions {
  pti: PtiGen;
  /** Most records per ACTIVITY chunk (default 4096). */
  recordsPerChunk?: number;
}

/** What {@link kinetoToPti} wrote. */
export interface PtiRoundTripStats {
  kernels: number;
  copies: number;
  fills: number;
  apiCalls: number;
  syncs: number;
  comms: number;
  overheads: number;
  externals: number;
  activityChunks: number;
  /** Events skipped: no numeric pid/tid, no correlation on device work or API calls. */
  skipped: number;
}

const hexArg = (v: unknown): bigint => (typeof v === "string" && /^0x[0-9a-f]+$/i.test(v) ? BigInt(v) : 0n);

/**
 * Converts the GPU side of a Kineto-style XPU trace to `.rawtrace` bytes of PTI records, in the trace's event order
 * (each device op preceded by its EXTERNAL_CORRELATION record).
 */
export function kinetoToPti(trace: KinetoTrace, opts: PtiRoundTripOptions): { bytes: Uint8Array; stats: PtiRoundTripStats } {
  const gen = opts.pti;
  if (!(gen in PTI_VERSION)) throw new RangeError(`unknown PTI generation ${String(gen)} (1.2 or 0.17)`);
  const perChunk = opts.recordsPerChunk ?? 4096;
  if (!Number.isInteger(perChunk) || perChunk < 1) throw new RangeError(`recordsPerChunk must be ≥ 1, got ${perChunk}`);
  const v2 = gen === "1.2";
  const size = ptiSizes(gen);
  const base = traceBaseNs(trace);
  const stats: PtiRoundTripStats = { kernels: 0, copies: 0, fills: 0, apiCalls: 0, syncs: 0, comms: 0, overheads: 0,
    externals: 0, activityChunks: 0, skipped: 0 };
  const records: Uint8Array[] = [];
  const strings = new Map<string, bigint>();
  const apiIds = new Map<string, [number, number]>();
  const threads = new Set<number>();
  let hostPid: number | undefined;
  let minNs: bigint | undefined;
  let maxNs: bigint | undefined;
  const span = (s: bigint, e: bigint) => {
    if (minNs === undefined || s < minNs) minNs = s;
    if (maxNs === undefined || e > maxNs) maxNs = e;
  };
  const str = (s: string): bigint => {
    let p = strings.get(s);
    if (p === undefined) {
      p = 0x7f3a_0000_0000n + BigInt(strings.size) * 0x100n;
      strings.set(s, p);
    }
    return p;
  };
  const api = (name: string, group: number): [number, number] => {
    let g = apiIds.get(name);
    if (!g) {
      g = KNOWN_IDS[name] ?? [group, 4096 + apiIds.size];
      apiIds.set(name, g);
    }
    return g;
  };
  const rec = (kind: number) => {
    const b = new Uint8Array(size[kind]);
    const dv = new DataView(b.buffer);
    dv.setUint32(0, kind, true);
    records.push(b);
    return dv;
  };
  const u64 = (dv: DataView, o: number, v: bigint) => dv.setBigUint64(o, BigInt.asUintN(64, v), true);
  const rel = (a: Record<string, unknown>, key: string) => {
    const v = a[key];
    return typeof v === "string" || typeof v === "number" ? absoluteNs(v, base) : 0n;
  };

  for (const e of trace.traceEvents) {
    if (e.ph !== "X") continue;
    const cat = e.cat ?? "";
    const name = e.name ?? "";
    if (cat === "overhead" || cat === "collective_comm") {
      if (e.ts === undefined) continue;
      const start = absoluteNs(e.ts, base);
      const end = start + (e.dur === undefined ? 0n : absoluteNs(e.dur, 0n));
      span(start, end);
      const tid = asInt(e.tid) ?? 0;
      if (cat === "overhead") {
        const dv = rec(PtiKind.OVERHEAD);
        u64(dv, 8, start);
        u64(dv, 16, end);
        dv.setUint32(24, tid, true);
        u64(dv, 32, BigInt(asInt(argsOf(e)["overhead count"]) ?? 1));
        u64(dv, 40, end - start);
        dv.setUint32(48, Math.max(0, OVERHEAD_KINDS.indexOf(name)), true);
        stats.overheads++;
      } else {
        const dv = rec(PtiKind.COMM);
        u64(dv, 8, start);
        u64(dv, 16, end);
        dv.setUint32(24, asInt(e.pid) ?? 0, true);
        dv.setUint32(28, tid, true);
        u64(dv, v2 ? 48 : 40, BigInt(asInt(argsOf(e).Communicator_id) ?? 0));
        u64(dv, v2 ? 56 : 48, str(name.replace(/^xccl::/, "")));
        stats.comms++;
      }
      continue;
    }
    const device = cat === "kernel" || cat === "gpu_memcpy" || cat === "gpu_memset";
    if (!device && cat !== "xpu_runtime" && cat !== "xpu_driver" && cat !== "xpu_sync") continue;
    const t = timedEvent(e, base);
    if (!t) {
      stats.skipped++;
      continue;
    }
    const { args: a, pid, tid, correlation: corr, start, end } = t;
    span(start, end);
    const ext = asInt(a["External id"]);
    if (!device) {
      hostPid ??= pid;
      threads.add(tid);
      if (cat === "xpu_sync") {
        const [group, id] = api(name, 1);
        const dv = rec(PtiKind.SYNC);
        dv.setUint32(4, Math.max(0, SYNC_TYPES.indexOf(String(a.Type ?? "UNKNOWN"))), true);
        u64(dv, 8, hexArg(a.Context_handle));
        u64(dv, 16, hexArg(a.Queue_handle));
        u64(dv, 24, hexArg(a.Event_handle));
        u64(dv, 32, start);
        u64(dv, 40, end);
        dv.setUint32(48, tid, true);
        dv.setUint32(52, corr, true);
        dv.setUint32(56, asInt(a.Number_wait_events) ?? 0, true);
        dv.setUint32(60, asInt(a.Return_code) ?? 0, true);
        dv.setUint32(64, id, true);
        dv.setUint32(68, group, true);
        stats.syncs++;
        continue;
      }
      const [group, id] = api(name, cat === "xpu_runtime" ? 3 : 1);
      const dv = rec(cat === "xpu_runtime" ? PtiKind.RUNTIME_API : PtiKind.DRIVER_API);
      u64(dv, 8, start);
      u64(dv, 16, end);
      dv.setUint32(24, group, true);
      dv.setUint32(28, id, true);
      dv.setUint32(32, pid, true);
      dv.setUint32(36, tid, true);
      dv.setUint32(40, corr, true);
      stats.apiCalls++;
      continue;
    }
    if (ext !== undefined) {
      const dv = rec(PtiKind.EXTERNAL);
      dv.setUint32(4, corr, true);
      u64(dv, 8, BigInt(ext));
      dv.setUint32(16, 2, true); // PTI_VIEW_EXTERNAL_KIND_CUSTOM_0
      stats.externals++;
    }
    const queue = BigInt(asInt(a["sycl queue"]) ?? tid);
    const l0q = hexArg(a["l0 queue"]);
    const ctx = hexArg(a.context);
    const append = rel(a, "appended");
    const submit = rel(a, "submitted");
    // The memory-operation fields COPY, P2P and FILL share from `at`: operation id, correlation, the append / start /
    // end / submit times (ns) and the byte count.
    const memOp = (dv: DataView, at: number) => {
      u64(dv, at, BigInt(asInt(a["memory opration id"]) ?? 0));
      dv.setUint32(at + 8, corr, true);
      u64(dv, at + 16, append);
      u64(dv, at + 24, start);
      u64(dv, at + 32, end);
      u64(dv, at + 40, submit);
      u64(dv, at + 48, BigInt(asInt(a.bytes) ?? 0));
    };
    if (cat === "kernel") {
      const dv = rec(PtiKind.KERNEL);
      u64(dv, 8, l0q);
      u64(dv, 16, ctx);
      u64(dv, 24, str(name));
      if (typeof a.source_file_name === "string") {
        u64(dv, 32, str(a.source_file_name));
        u64(dv, 40, BigInt(asInt(a.source_line_number) ?? 0));
      }
      u64(dv, 48, BigInt(asInt(a.kernel_id) ?? stats.kernels + 1));
      dv.setUint32(56, corr, true);
      dv.setUint32(60, hostPid ?? 0, true);
      new Uint8Array(dv.buffer).set(deviceUuid(pid), 80);
      u64(dv, 96, append);
      u64(dv, 104, start);
      u64(dv, 112, end);
      u64(dv, 120, submit);
      u64(dv, 152, queue);
      if (v2) u64(dv, 168, 0x55d1_c090_0000n + BigInt(pid) * 0x1000n);
      stats.kernels++;
    } else if (cat === "gpu_memcpy") {
      const from = asInt(a.fromDevice);
      const to = asInt(a.toDevice);
      const p2p = from !== undefined && to !== undefined && from !== to;
      const m = /^Memcpy ([MHDS])2([MHDS]) \(/.exec(name);
      const src = m ? LETTERS.indexOf(m[1]) : 0;
      const dst = m ? LETTERS.indexOf(m[2]) : 0;
      const dv = rec(p2p ? PtiKind.P2P : PtiKind.COPY);
      dv.setUint32(4, src * 4 + dst, true);
      dv.setUint32(8, src, true);
      dv.setUint32(12, dst, true);
      u64(dv, 16, l0q);
      u64(dv, 24, ctx);
      u64(dv, 32, str(String(a["l0 call"] ?? "zeCommandListAppendMemoryCopy")));
      const b = new Uint8Array(dv.buffer);
      if (p2p) {
        b.set(deviceUuid(from), 72);
        b.set(deviceUuid(to), 88);
        memOp(dv, 104);
        u64(dv, 160, queue);
      } else {
        b.set(deviceUuid(pid), 56);
        memOp(dv, 72);
        u64(dv, 128, queue);
      }
      stats.copies++;
    } else {
      const m = /^Memset \((\d+) -> (.*)\)$/.exec(name);
      const dv = rec(PtiKind.FILL);
      dv.setUint32(4, Math.max(0, MEM_TYPES.indexOf(m ? m[2] : "DEVICE")), true);
      u64(dv, 8, l0q);
      u64(dv, 16, ctx);
      u64(dv, 24, str(String(a["l0 call"] ?? "zeCommandListAppendMemoryFill")));
      new Uint8Array(dv.buffer).set(deviceUuid(pid), 48);
      memOp(dv, 64);
      u64(dv, 120, m ? BigInt(m[1]) : 0n);
      u64(dv, 128, queue);
      stats.fills++;
    }
  }

  const t0 = minNs !== undefined ? minNs - 1000n : base + 1n;
  const t1 = maxNs !== undefined ? maxNs + 1000n : t0 + 1000n;
  const anchor = (which: number, ns: bigint) => ({
    which, vendorNs: ns, realtimeNs: ns, monotonicNs: ns - 5_000_000_000n, monotonicRawNs: ns - 5_000_000_000n,
    boottimeNs: ns - 5_000_000_000n,
  });
  const w = RawtraceWriter.inMemory();
  w.header({
    vendor: Vendor.INTEL_PTI, vendorVersion: PTI_VERSION[gen], pid: hostPid ?? 0, startNs: t0, hostname: "roundtrip",
    commandLine: "kineto_to_pti", vendorVersionText: gen === "1.2" ? "1.2.0" : "0.17.0",
  });
  w.clock(anchor(0, t0));
  w.kindSizes(Object.entries(size).map(([k, s]) => [Number(k), s] as const));
  w.apiNames([...apiIds].map(([n, [g, id]]) => [g, id, n] as const));
  w.devices((trace.deviceProperties ?? []).map((d, i) => ({
    id: asInt(d.id) ?? i, multiprocessors: asInt(d.numSms) ?? 0, globalMemoryBytes: BigInt(asInt(d.totalGlobalMem) ?? 0),
    memoryBandwidth: 0n, coreClockKhz: 0, ccMajor: 0, ccMinor: 0, maxThreadsPerBlock: asInt(d.maxThreadsPerBlock) ?? 0,
    maxThreadsPerMultiprocessor: asInt(d.maxThreadsPerMultiprocessor) ?? 0, regsPerBlock: 0, regsPerMultiprocessor: 0,
    warpSize: asInt(d.warpSize) ?? 0, sharedMemPerBlock: 0, sharedMemPerMultiprocessor: 0, sharedMemPerBlockOptin: 0,
    maxBlocksPerMultiprocessor: 0, uuid: deviceUuid(asInt(d.id) ?? i), name: typeof d.name === "string" ? d.name : "",
  })));
  const threadNames = hostThreadNames(trace, hostPid, threads);
  if (threadNames.length) w.threadNames(threadNames);
  if (strings.size) w.strings([...strings].map(([s, p]) => [p, s] as const));
  stats.activityChunks += writeActivityChunks(w, records, perChunk);
  w.clock(anchor(1, t1));
  w.end();
  return { bytes: w.bytes(), stats };
}

// ---- CLI ---------------------------------------------------------------------------------------------------------

const USAGE = "usage: tsx src/tools/kineto_to_pti.ts in.json[.gz] -o out.rawtrace [--pti 1.2|0.17] [--records-per-chunk N]";

function main(argv: string[]): number {
  let pti: PtiGen = "1.2";
  let perChunk = 4096;
  const args = parseToolArgs(argv, USAGE, {
    "--pti": { value: (v) => (pti = v as PtiGen) },
    "--records-per-chunk": { value: (v) => (perChunk = Number(v)) },
  });
  if (typeof args === "number") return args;
  const { bytes, stats } = kinetoToPti(readKinetoTrace(args.input), { pti, recordsPerChunk: perChunk });
  writeToolOutput(args.output, bytes, `PTI ${pti}: kernels ${stats.kernels}, copies ${stats.copies}, ` +
    `fills ${stats.fills}, API calls ${stats.apiCalls}, syncs ${stats.syncs}, comms ${stats.comms}, ` +
    `overhead ${stats.overheads}, external ids ${stats.externals}, ${stats.activityChunks} activity chunks` +
    (stats.skipped ? `, ${stats.skipped} events skipped` : ""));
  return 0;
}

runIfMain(import.meta.url, "kineto_to_pti", main);
