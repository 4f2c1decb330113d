/**
 * The ROCm round-trip tool: a Kineto Chrome JSON trace of a ROCm run (plain or gzip) → a `.rawtrace` holding its GPU
 * side as the ROCm collector would have written it: rocprofiler-sdk buffer-tracing records of SDK 1.0 or 0.5
 * (layouts of collectors/rocm/rocprofiler_abi.h, each release's kind numbering), AGENTS, KERNEL_SYMBOLS, API_NAMES
 * and CLOCK anchors (docs/format.md). Converting that dump with the engine and comparing with the original, event by
 * event, proves the decoder to the nanosecond (test/tools/roundtrip_rocm.test.ts).
 *
 *   tsx src/tools/kineto_to_rocprof.ts in.json[.gz] -o out.rawtrace [--sdk 1.0|0.5] [--arch gfx90a] [--records-per-chunk N]
 *     [--roctx]
 *
 * What becomes what:
 * - `kernel` → KERNEL_DISPATCH (operation KERNEL_DISPATCH_COMPLETE): agent = GPU `pid`, queue = one per (GPU, `tid`),
 *   kernel id per distinct name (KERNEL_SYMBOLS holds the name as written), grid in work-items and work-group size
 *   from the kernel's own `grid`/`block` (else its launch call's: Kineto's grid × block, or its grid as it is for the
 *   calls whose grid Kineto gives in work-items, {@link WORK_ITEM_GRID}), LDS from its `shared memory`;
 * - `gpu_memcpy` → MEMORY_COPY (operation from the direction in "Memcpy HtoD (…)"; host side = the CPU agent), bytes
 *   from the launch call's `size`;
 * - `cuda_runtime` → HIP_RUNTIME_API records, operation = the trace's `cid` (name in API_NAMES; the collector stores
 *   the SDK's own numbering, which a decoder never relies on);
 * - `correlation` → `correlation_id.internal`, `"External id"` → `correlation_id.external`;
 * - with `roctx`, `user_annotation` events on the host (PyTorch's `ProfilerStep#N`, record_function ranges) → ROCTx
 *   ranges with their names in STRINGS: SDK 1.0 one MARKER_CORE_RANGE_API record each (`roctxThreadRangeA`), SDK 0.5
 *   a MARKER_CORE_API `roctxRangePushA` / `roctxRangePop` pair, with correlation ids after the trace's own;
 * - `deviceProperties` → AGENTS (a CPU agent plus one GPU agent per entry); Kineto writes no gfx target, so `arch`
 *   (e.g. `gfx90a` for an MI250) names it, else the gfx version is computeMajor.computeMinor with no name; an entry's
 *   `clockRate` (kHz, which only src/tools/xspace_to_kineto.ts gives) becomes max_engine_clk_fcompute (MHz).
 * Times: Unix ns exactly as in the trace (µs text parsed as decimals), written as CLOCK_BOOTTIME = Unix − a fixed
 * offset, with start and end CLOCK anchors carrying that offset.
 */
import { PayloadBuilder, RawtraceWriter } from "../format/writer.js";
import { ChunkType, RocpDomain, Vendor } from "../format/container.js";
import { absoluteNs, argsOf, asInt, microsToNs, readKinetoTrace, runIfMain, timedEvent, traceBaseNs, type KinetoTrace } from "./kineto_to_rawtrace.js";
import { hostThreadNames, writeActivityChunks } from "./dump_parts.js";
import { parseToolArgs, writeToolOutput } from "./kineto_cli.js";
/**
 * HIP launch calls whose `grid` Kineto's ROCm build writes in work-items: it reads the `gridDimX` member of the
 * args union, which for these calls is their `globalWorkSizeX` (hip_runtime_api args), not a work-group count.
 */
export const WORK_ITEM_GRID: ReadonlySet<string> = new Set(["hipExtModuleLaunchKernel", "hipHccModuleLaunchKernel"]);

/** Which rocprofiler-sdk ABI generation to write. */
export type RocpSdk = "1.0" | "0.5";

/** The `version` argument of rocprofiler_configure for each generation. */
export const SDK_VERSION: Record<RocpSdk, number> = { "1.0": 10000, "0.5": 500 };

/** Buffer-tracing kind names by value, per release (rocprofiler-sdk fwd.h at the revisions rocprofiler_abi.h cites). */
export const KIND_NAMES: Record<RocpSdk, readonly string[]> = {
  "0.5": ["NONE", "HSA_CORE_API", "HSA_AMD_EXT_API", "HSA_IMAGE_EXT_API", "HSA_FINALIZE_EXT_API", "HIP_RUNTIME_API",
    "HIP_COMPILER_API", "MARKER_CORE_API", "MARKER_CONTROL_API", "MARKER_NAME_API", "MEMORY_COPY", "KERNEL_DISPATCH",
    "PAGE_MIGRATION", "SCRATCH_MEMORY", "CORRELATION_ID_RETIREMENT", "RCCL_API"],
  "1.0": ["NONE", "HSA_CORE_API", "HSA_AMD_EXT_API", "HSA_IMAGE_EXT_API", "HSA_FINALIZE_EXT_API", "HIP_RUNTIME_API",
    "HIP_COMPILER_API", "MARKER_CORE_API", "MARKER_CONTROL_API", "MARKER_NAME_API", "MEMORY_COPY", "KERNEL_DISPATCH",
    "SCRATCH_MEMORY", "CORRELATION_ID_RETIREMENT", "RCCL_API", "OMPT", "MEMORY_ALLOCATION", "RUNTIME_INITIALIZATION",
    "ROCDECODE_API", "ROCJPEG_API", "HIP_STREAM", "HIP_RUNTIME_API_EXT", "HIP_COMPILER_API_EXT", "ROCDECODE_API_EXT",
    "KFD_EVENT_PAGE_MIGRATE", "KFD_EVENT_PAGE_FAULT", "KFD_EVENT_QUEUE", "KFD_EVENT_UNMAP_FROM_GPU",
    "KFD_EVENT_DROPPED_EVENTS", "KFD_PAGE_MIGRATE", "KFD_PAGE_FAULT", "KFD_QUEUE", "MARKER_CORE_RANGE_API"],
};
/** rocprofiler_memory_copy_operation_t names by value (0.5 and 1.0). */
const COPY_OPS = ["MEMORY_COPY_NONE", "MEMORY_COPY_HOST_TO_HOST", "MEMORY_COPY_HOST_TO_DEVICE",
  "MEMORY_COPY_DEVICE_TO_HOST", "MEMORY_COPY_DEVICE_TO_DEVICE"];
/** rocprofiler_kernel_dispatch_operation_t names by value. */
const DISPATCH_OPS = ["KERNEL_DISPATCH_NONE", "KERNEL_DISPATCH_ENQUEUE", "KERNEL_DISPATCH_COMPLETE"];
/** MARKER_CORE_API operation names by value (vendor-record-layouts.md §2.3). */
const CORE_MARKER_OPS = ["roctxMarkA", "roctxRangePushA", "roctxRangePop", "roctxRangeStartA", "roctxRangeStop", "roctxGetThreadId"];
/** MARKER_CORE_RANGE_API operation names by value (SDK 1.0). */
const RANGE_OPS = ["roctxMarkA", "roctxThreadRangeA", "roctxProcessRangeA", "roctxGetThreadId"];
const COPY_DIR: Record<string, number> = { HtoH: 1, HtoD: 2, DtoH: 3, DtoD: 4, PtoP: 4 };

/** Agent handles the tool gives: the CPU, then GPU i. */
const CPU_AGENT = 0x1000n;
const gpuAgent = (i: number) => 0x2000n + BigInt(i) * 0x100n;
/** BOOTTIME = Unix ns − this (a machine up for about 12 days). */
const BOOT_OFFSET = 1_000_000_000_000_000n;

/** Options of {@link kinetoToRocprof}. */
export interface RocpRoundTripOptions {
  sdk: RocpSdk;
  /** Most records per ACTIVITY chunk (default 4096). */
  recordsPerChunk?: number;
  /** The GPUs' gfx target (e.g. `gfx90a`, `gfx942`), which Kineto's deviceProperties lack. */
  arch?: string;
  /** Write the host `user_annotation` events as ROCTx ranges (default false: the GPU side only). */
  roctx?: boolean;
}

/** gfx target name → rocprofiler's gfx_target_version (gfx90a → 90010: major, minor and stepping as hex digits). */
export function gfxTargetVersion(arch: string): number {
  const m = /^gfx(\d+)([0-9a-f])([0-9a-f])$/i.exec(arch);
  if (!m) throw new RangeError(`not a gfx target name: ${arch}`);
  return Number(m[1]) * 10000 + parseInt(m[2], 16) * 100 + parseInt(m[3], 16);
}

/** What {@link kinetoToRocprof} wrote. */
export interface RocpRoundTripStats {
  kernels: number;
  copies: number;
  hipCalls: number;
  agents: number;
  kernelSymbols: number;
  activityChunks: number;
  /** GPU or API events skipped: a non-numeric pid/tid or no correlation. */
  skipped: number;
  /** ROCTx ranges written (`roctx`). */
  ranges: number;
}

const dims = (v: unknown): [number, number, number] => {
  const a = Array.isArray(v) ? v : [];
  return [asInt(a[0]) ?? 1, asInt(a[1]) ?? 1, asInt(a[2]) ?? 1];
};

/** One tracing record in the ACTIVITY framing: {u32 category 1, u32 kind, u64 size, payload, zero pad to 8}. */
export function framed(kind: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(16 + ((payload.length + 7) & ~7));
  const dv = new DataView(out.buffer);
  dv.setUint32(0, 1, true);
  dv.setUint32(4, kind, true);
  dv.setBigUint64(8, BigInt(payload.length), true);
  out.set(payload, 16);
  return out;
}

/** A zeroed record of `size` bytes whose first field is its size, with kind and operation set. */
export function record(size: number, kind: number, op: number): { b: Uint8Array; dv: DataView } {
  const b = new Uint8Array(size);
  const dv = new DataView(b.buffer);
  dv.setBigUint64(0, BigInt(size), true);
  dv.setUint32(8, kind, true);
  dv.setInt32(12, op, true);
  return { b, dv };
}

/**
 * Converts the GPU side of a Kineto ROCm trace to `.rawtrace` bytes of rocprofiler-sdk records. Records follow the
 * trace's event order.
 */
export function kinetoToRocprof(trace: KinetoTrace, opts: RocpRoundTripOptions): { bytes: Uint8Array; stats: RocpRoundTripStats } {
  const sdk = opts.sdk;
  if (!(sdk in SDK_VERSION)) throw new RangeError(`unknown SDK ${String(sdk)} (1.0 or 0.5)`);
  const v1 = sdk === "1.0";
  const perChunk = opts.recordsPerChunk ?? 4096;
  if (!Number.isInteger(perChunk) || perChunk < 1) throw new RangeError(`recordsPerChunk must be ≥ 1, got ${perChunk}`);
  const kinds = KIND_NAMES[sdk];
  const K = (name: string) => kinds.indexOf(name);
  const base = traceBaseNs(trace);
  const boot = (unix: bigint) => unix - BOOT_OFFSET;
  const stats: RocpRoundTripStats = { kernels: 0, copies: 0, hipCalls: 0, agents: 0, kernelSymbols: 0, activityChunks: 0, skipped: 0, ranges: 0 };

  // Launch calls by correlation: their grid, block, shared memory and copy size; and which give their grid in
  // work-items already.
  const launches = new Map<number, Record<string, unknown>>();
  const gridInWorkItems = new Set<number>();
  for (const e of trace.traceEvents) {
    if (e.ph === "X" && e.cat === "cuda_runtime") {
      const c = asInt(argsOf(e).correlation);
      if (c !== undefined) launches.set(c, argsOf(e));
      if (c !== undefined && WORK_ITEM_GRID.has(String(e.name))) gridInWorkItems.add(c);
    }
  }
  const records: Uint8Array[] = [];
  const symbols = new Map<string, number>();
  const queues = new Map<string, bigint>();
  const hipNames = new Map<number, string>();
  const threads = new Set<number>();
  let hostPid: number | undefined;
  let minNs: bigint | undefined;
  let maxNs: bigint | undefined;

  for (const e of trace.traceEvents) {
    if (e.ph !== "X" || (e.cat !== "kernel" && e.cat !== "gpu_memcpy" && e.cat !== "cuda_runtime")) continue;
    const t = timedEvent(e, base);
    if (!t) {
      stats.skipped++;
      continue;
    }
    const { args: a, pid, tid, correlation: corr, start, end } = t;
    if (minNs === undefined || start < minNs) minNs = start;
    if (maxNs === undefined || end > maxNs) maxNs = end;
    const ext = BigInt(asInt(a["External id"]) ?? 0);
    const name = e.name ?? "";
    if (e.cat === "kernel") {
      let kid = symbols.get(name);
      if (kid === undefined) {
        kid = symbols.size + 1;
        symbols.set(name, kid);
      }
      const qk = `${pid}/${tid}`;
      let queue = queues.get(qk);
      if (queue === undefined) {
        queue = 0x7f00_0000_0000n + BigInt(queues.size) * 0x1000n;
        queues.set(qk, queue);
      }
      // The kernel's own shape where it has one (Kineto's CUDA kernels; two kernels of one call), else its call's.
      const la = a.grid !== undefined ? a : launches.get(corr) ?? {};
      const grid = dims(la.grid);
      const block = dims(la.block);
      // rocprofiler_buffer_tracing_kernel_dispatch_record_t: 184 B in 0.5 and 1.0.
      const { b, dv } = record(184, K("KERNEL_DISPATCH"), DISPATCH_OPS.indexOf("KERNEL_DISPATCH_COMPLETE"));
      dv.setBigUint64(16, BigInt(corr), true);
      dv.setBigUint64(24, ext, true);
      dv.setBigUint64(40, boot(start), true);
      dv.setBigUint64(48, boot(end), true);
      dv.setBigUint64(56, 72n, true); // dispatch_info.size: the fields before its reserved padding
      dv.setBigUint64(64, gpuAgent(pid), true);
      dv.setBigUint64(72, queue, true);
      dv.setBigUint64(80, BigInt(kid), true);
      dv.setBigUint64(88, BigInt(stats.kernels + 1), true);
      dv.setUint32(100, asInt(la["shared memory"]) ?? 0, true);
      // The dispatch record's grid is in work-items: Kineto's grid is in work-groups, except on a call whose grid it
      // reads from the union's globalWorkSize (already work-items).
      const items = a.grid === undefined && gridInWorkItems.has(corr);
      for (let i = 0; i < 3; i++) {
        dv.setUint32(104 + 4 * i, block[i], true);
        dv.setUint32(116 + 4 * i, items ? grid[i] : grid[i] * block[i], true);
      }
      records.push(framed(K("KERNEL_DISPATCH"), b));
      stats.kernels++;
    } else if (e.cat === "gpu_memcpy") {
      const dir = /^Memcpy (\S+) /.exec(name)?.[1] ?? "HtoH";
      const op = COPY_DIR[dir] ?? 1;
      const gpuSrc = dir === "DtoH" || dir === "DtoD" || dir === "PtoP";
      const gpuDst = dir === "HtoD" || dir === "DtoD" || dir === "PtoP";
      const la = launches.get(corr) ?? {};
      const { b, dv } = record(v1 ? 96 : 80, K("MEMORY_COPY"), op);
      dv.setBigUint64(16, BigInt(corr), true);
      dv.setBigUint64(24, ext, true);
      dv.setBigUint64(40, boot(start), true);
      dv.setBigUint64(48, boot(end), true);
      dv.setBigUint64(56, gpuDst ? gpuAgent(pid) : CPU_AGENT, true);
      dv.setBigUint64(64, gpuSrc ? gpuAgent(pid) : CPU_AGENT, true);
      dv.setBigUint64(72, BigInt(asInt(la.size) ?? 0), true);
      records.push(framed(K("MEMORY_COPY"), b));
      stats.copies++;
    } else {
      hostPid ??= pid;
      const cid = asInt(a.cid) ?? 0;
      if (!hipNames.has(cid)) hipNames.set(cid, name);
      const { b, dv } = record(v1 ? 64 : 56, K("HIP_RUNTIME_API"), cid);
      dv.setBigUint64(16, BigInt(corr), true);
      dv.setBigUint64(24, ext, true);
      const t = v1 ? 40 : 32; // start, end, thread id (after the 24- or 16-byte correlation id)
      dv.setBigUint64(t, boot(start), true);
      dv.setBigUint64(t + 8, boot(end), true);
      dv.setBigUint64(t + 16, BigInt(tid), true);
      threads.add(tid);
      records.push(framed(K("HIP_RUNTIME_API"), b));
      stats.hipCalls++;
    }
  }

  // ROCTx ranges from the host annotations, ids after every correlation id of the trace.
  const messages: Array<[bigint, string]> = [];
  if (opts.roctx) {
    let next = 1n + BigInt(Math.max(0, ...[...launches.keys()], ...trace.traceEvents.map((e) => asInt(argsOf(e).correlation) ?? 0)));
    for (const e of trace.traceEvents) {
      if (e.ph !== "X" || e.cat !== "user_annotation") continue;
      const tid = asInt(e.tid);
      if (tid === undefined || e.ts === undefined) continue;
      const start = absoluteNs(e.ts, base);
      const t = { tid, start, end: start + (e.dur === undefined ? 0n : microsToNs(e.dur)) };
      const id = next;
      next += 2n;
      messages.push([id, e.name ?? ""]);
      const marker = (kind: string, op: number, corr: bigint, s: bigint, en: bigint) => {
        const { b, dv } = record(v1 ? 64 : 56, K(kind), op);
        dv.setBigUint64(16, corr, true);
        const o = v1 ? 40 : 32;
        dv.setBigUint64(o, boot(s), true);
        dv.setBigUint64(o + 8, boot(en), true);
        dv.setBigUint64(o + 16, BigInt(t.tid), true);
        records.push(framed(K(kind), b));
      };
      if (v1) marker("MARKER_CORE_RANGE_API", RANGE_OPS.indexOf("roctxThreadRangeA"), id, t.start, t.end);
      else {
        marker("MARKER_CORE_API", CORE_MARKER_OPS.indexOf("roctxRangePushA"), id, t.start, t.start);
        marker("MARKER_CORE_API", CORE_MARKER_OPS.indexOf("roctxRangePop"), id + 1n, t.end, t.end);
      }
      threads.add(t.tid);
      stats.ranges++;
    }
  }

  const t0 = minNs !== undefined ? minNs - 1000n : base + 1n;
  const t1 = maxNs !== undefined ? maxNs + 1000n : t0 + 1000n;
  const anchor = (which: number, ns: bigint) => ({
    which, vendorNs: boot(ns), realtimeNs: ns, monotonicNs: boot(ns), monotonicRawNs: boot(ns), boottimeNs: boot(ns),
  });
  const w = RawtraceWriter.inMemory();
  w.header({
    vendor: Vendor.ROCM_SDK, vendorVersion: SDK_VERSION[sdk], pid: hostPid ?? 0, startNs: t0, hostname: "roundtrip",
    commandLine: "kineto_to_rocprof", vendorVersionText: sdk === "1.0" ? "1.0.0" : "0.5.0",
  });
  w.clock(anchor(0, t0));
  const names: Array<[number, number, string]> = kinds.map((n, i) => [RocpDomain.KINDS, i, n] as [number, number, string]);
  for (const [cid, n] of hipNames) names.push([RocpDomain.OPS | K("HIP_RUNTIME_API"), cid, n]);
  COPY_OPS.forEach((n, i) => names.push([RocpDomain.OPS | K("MEMORY_COPY"), i, n]));
  DISPATCH_OPS.forEach((n, i) => names.push([RocpDomain.OPS | K("KERNEL_DISPATCH"), i, n]));
  if (opts.roctx) {
    if (v1) RANGE_OPS.forEach((n, i) => names.push([RocpDomain.OPS | K("MARKER_CORE_RANGE_API"), i, n]));
    else CORE_MARKER_OPS.forEach((n, i) => names.push([RocpDomain.OPS | K("MARKER_CORE_API"), i, n]));
  }
  w.apiNames(names);
  if (messages.length) w.strings(messages);
  // AGENTS (docs/format.md §12): fixed part 120 B, then name, product name, vendor name, model name.
  const devs = trace.deviceProperties ?? [];
  const ag = new PayloadBuilder().u32(devs.length + 1).u32(120);
  const gfx = opts.arch !== undefined ? gfxTargetVersion(opts.arch) : undefined;
  const agent = (handle: bigint, type: number, node: number, typeIndex: number, d?: Record<string, unknown>) => {
    const warp = asInt(d?.warpSize) ?? 0;
    const major = asInt(d?.computeMajor) ?? 0;
    const minor = asInt(d?.computeMinor) ?? 0;
    const version = gfx ?? major * 10000 + minor * 100;
    ag.u64(handle).u32(type).u32(node).i32(node).i32(typeIndex)
      .u32(asInt(d?.numSms) ?? 0).u32(0).u32(0).u32(0)
      .u32(warp ? Math.floor((asInt(d?.maxThreadsPerMultiprocessor) ?? 0) / warp) : 0).u32(warp)
      .u32(Math.floor((asInt(d?.sharedMemPerBlock) ?? 0) / 1024)).u32(asInt(d?.maxThreadsPerBlock) ?? 0)
      .u32(Math.round((asInt(d?.clockRate) ?? 0) / 1000)) // max_engine_clk_fcompute, MHz
      .u32(type === 2 ? version : 0).u32(type === 2 ? 1 : 0).u32(0)
      .u16(type === 2 ? 0x1002 : 0).u16(0).u32(0).u32(0).u32(0).u64(0).u64(BigInt(asInt(d?.totalGlobalMem) ?? 0))
      .bytes(new Uint8Array(16));
    const label = typeof d?.name === "string" ? d.name : "";
    const arch = opts.arch ?? (typeof d?.gcnArchName === "string" ? d.gcnArchName : "");
    ag.str(type === 2 ? arch : "CPU").str(type === 2 ? label : "CPU").str(type === 2 ? "AMD" : "CPU").str("");
    stats.agents++;
  };
  agent(CPU_AGENT, 1, 0, 0);
  devs.forEach((d, i) => agent(gpuAgent(asInt(d.id) ?? i), 2, i + 1, asInt(d.id) ?? i, d as unknown as Record<string, unknown>));
  w.chunk(ChunkType.AGENTS, ag.result());
  // KERNEL_SYMBOLS (§13): fixed part 48 B, then the name.
  if (symbols.size) {
    const ks = new PayloadBuilder().u32(symbols.size).u32(48);
    for (const [n, kid] of symbols) {
      ks.u64(kid).u64(1).u64(0x7f10_0000_0000n + BigInt(kid) * 0x100n).u32(0).u32(0).u32(0).u32(0).u32(0).u32(0).str(n);
    }
    w.chunk(ChunkType.KERNEL_SYMBOLS, ks.result());
    stats.kernelSymbols = symbols.size;
  }
  const threadNames = hostThreadNames(trace, hostPid, threads);
  if (threadNames.length) w.threadNames(threadNames);
  stats.activityChunks += writeActivityChunks(w, records, perChunk);
  w.clock(anchor(1, t1));
  w.end();
  return { bytes: w.bytes(), stats };
}

// ---- CLI ---------------------------------------------------------------------------------------------------------

const USAGE = "usage: tsx src/tools/kineto_to_rocprof.ts in.json[.gz] -o out.rawtrace [--sdk 1.0|0.5] [--arch gfx90a] " +
  "[--records-per-chunk N] [--roctx]";

function main(argv: string[]): number {
  let sdk: RocpSdk = "1.0";
  let perChunk = 4096;
  let arch: string | undefined;
  let roctx = false;
  const args = parseToolArgs(argv, USAGE, {
    "--sdk": { value: (v) => (sdk = v as RocpSdk) },
    "--records-per-chunk": { value: (v) => (perChunk = Number(v)) },
    "--arch": { value: (v) => (arch = v) },
    "--roctx": { flag: () => (roctx = true) },
  });
  if (typeof args === "number") return args;
  const { bytes, stats } = kinetoToRocprof(readKinetoTrace(args.input), { sdk, recordsPerChunk: perChunk, arch, roctx });
  writeToolOutput(args.output, bytes, `rocprofiler-sdk ${sdk}: kernels ${stats.kernels}, copies ${stats.copies}, ` +
    `HIP calls ${stats.hipCalls}, agents ${stats.agents}, kernel symbols ${stats.kernelSymbols}, ` +
    `${stats.activityChunks} activity chunks` + (stats.ranges ? `, ${stats.ranges} ROCTx ranges` : "") + (stats.skipped ? `, ${stats.skipped} events skipped` : ""));
  return 0;
}

runIfMain(import.meta.url, "kineto_to_rocprof", main);
