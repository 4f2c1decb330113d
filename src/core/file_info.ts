/**
 * What `info` reports about a dump (pass 1): its HEADER facts, devices, record counts by kind (named per vendor),
 * time span, clock anchors, warnings and the byte ranges damage made it skip, read from the core's exports after the
 * index pass (src/core/engine.ts Engine.info and every conversion's result).
 */
import { WARN_MESSAGES, WARN_NAMES, Warning, fill, type LossReport } from "./codes.js";
import type { CoreExports } from "./core_exports.js";
import type { DeviceSummary, FileInfo } from "./engine.js";

const dec = new TextDecoder("utf-8", { fatal: false });
/** 2^64 − 1: a saturated u64 counter. */
const U64_MAX = (1n << 64n) - 1n;

/** CUPTI activity kind names for `info` (vendor-record-layouts.md §1.2). */
const CUPTI_KINDS: Record<number, string> = {
  1: "MEMCPY", 2: "MEMSET", 3: "KERNEL", 4: "DRIVER", 5: "RUNTIME", 8: "DEVICE", 9: "CONTEXT",
  10: "CONCURRENT_KERNEL", 11: "NAME", 12: "MARKER", 13: "MARKER_DATA", 17: "OVERHEAD", 18: "CDP_KERNEL",
  19: "PREEMPTION", 20: "ENVIRONMENT", 22: "MEMCPY2", 25: "UNIFIED_MEMORY_COUNTER", 26: "FUNCTION", 27: "MODULE",
  28: "DEVICE_ATTRIBUTE", 33: "OPENACC_DATA", 34: "OPENACC_LAUNCH", 35: "OPENACC_OTHER", 36: "CUDA_EVENT",
  37: "STREAM", 38: "SYNCHRONIZATION", 39: "EXTERNAL_CORRELATION", 40: "NVLINK", 45: "MEMORY", 46: "PCIE",
  47: "OPENMP", 48: "INTERNAL_LAUNCH_API", 49: "MEMORY2", 50: "MEMORY_POOL", 51: "GRAPH_TRACE", 52: "JIT",
  53: "DEVICE_GRAPH_TRACE", 54: "MEM_DECOMPRESS", 55: "CONFIDENTIAL_COMPUTE_ROTATION",
};
/** PTI view kind names for `info` (pti_view_kind, vendor-record-layouts.md §3.2). */
const PTI_KINDS: Record<number, string> = {
  1: "DEVICE_GPU_KERNEL", 3: "DRIVER_API", 5: "COLLECTION_OVERHEAD", 6: "RUNTIME_API", 7: "EXTERNAL_CORRELATION",
  8: "DEVICE_GPU_MEM_COPY", 9: "DEVICE_GPU_MEM_FILL", 10: "DEVICE_GPU_MEM_COPY_P2P", 11: "DEVICE_SYNCHRONIZATION",
  12: "COMMUNICATION",
};
const VENDORS = ["unknown", "cuda", "rocm", "rocm-roctracer", "xpu", "hpu"];

/** The name `info` gives HEADER vendor code `code` ("cuda", "rocm", …; `vendor N` for a code it does not know). */
export function vendorName(code: number): string {
  return VENDORS[code] ?? `vendor ${code}`;
}
/** Synapse entry types (synTraceEvent.type, the TEF phase) as `rawtrace info` lists them. */
const SYNAPSE_PHASES: Record<number, string> = {
  66: "B (begin)", 69: "E (end)", 88: "X (complete)", 77: "M (metadata)", 67: "C (counter)",
};

/** The {@link FileInfo} of the file just indexed by the core `x` (its pass 1 done); `file` names it. */
export function readFileInfo(x: CoreExports, file: string): FileInfo {
  const u8 = () => new Uint8Array(x.memory.buffer);
  const n = (f: number) => Number(x.rt_info(f));
  const signed = (f: number) => Number(BigInt.asIntN(64, x.rt_info(f)));
  // Times are u64 ns in the core (aligned times saturate at 1 and 2^64 − 1); a wasm i64 arrives as a signed BigInt.
  const ns = (v: bigint) => BigInt.asUintN(64, v);
  const text = (w: number) => dec.decode(u8().subarray(x.rt_text_ptr(w), x.rt_text_ptr(w) + x.rt_text_len(w)));
  const devices: DeviceSummary[] = [];
  for (let i = 0; i < n(17); i++) {
    const p = x.rt_device(i);
    const dv = new DataView(x.memory.buffer, p, 136);
    const np = dv.getUint32(88, true);
    const nl = dv.getUint32(92, true);
    const uuid = [...u8().subarray(p + 72, p + 88)].map((b) => b.toString(16).padStart(2, "0")).join("");
    devices.push({
      id: dv.getUint32(0, true),
      name: dec.decode(u8().subarray(np, np + nl)),
      multiprocessors: dv.getUint32(4, true),
      globalMemoryBytes: Number(dv.getBigUint64(8, true)),
      memoryBandwidth: Number(dv.getBigUint64(16, true)),
      coreClockKhz: dv.getUint32(24, true),
      computeCapability: `${dv.getUint32(28, true)}.${dv.getUint32(32, true)}`,
      uuid,
      ...(dv.getUint32(100, true) === 2 ? {
        arch: dec.decode(u8().subarray(dv.getUint32(120, true), dv.getUint32(120, true) + dv.getUint32(124, true))),
      } : {}),
      limits: {
        maxThreadsPerBlock: dv.getUint32(36, true), maxThreadsPerMultiprocessor: dv.getUint32(40, true),
        regsPerBlock: dv.getUint32(44, true), regsPerMultiprocessor: dv.getUint32(48, true),
        warpSize: dv.getUint32(52, true), sharedMemPerBlock: dv.getUint32(56, true),
        sharedMemPerMultiprocessor: dv.getUint32(60, true), sharedMemPerBlockOptin: dv.getUint32(64, true),
        // AMD GPUs: what Kineto's ROCm build adds (assembly/emit/chrome_header.ts writes them; a merge's header too).
        ...(dv.getUint32(100, true) === 2 ? {
          gfxTargetVersion: dv.getUint32(104, true), simdPerCu: dv.getUint32(108, true), maxWavesPerCu: dv.getUint32(112, true),
        } : {}),
      },
    });
  }
  const records: Record<string, number> = {};
  for (let k = 0; k < 256; k++) {
    const c = Number(x.rt_records_of_kind(k));
    if (!c) continue;
    // rocprofiler-sdk kinds are named by the dump itself (API_NAMES domain 0); CUPTI's by the table above.
    const np = n(0) === 2 ? x.rt_api_name(0, k) : 0;
    const name = np ? dec.decode(u8().subarray(np, np + x.rt_api_name_len(0, k)))
      : n(0) === 4 ? PTI_KINDS[k] : n(0) === 5 ? SYNAPSE_PHASES[k] : CUPTI_KINDS[k];
    records[name ?? `KIND_${k}`] = c;
  }
  const warnings: Warning[] = [];
  WARN_NAMES.forEach((code, i) => {
    // u64 counters cross the boundary as i64: read them unsigned.
    const count = Number(BigInt.asUintN(64, x.rt_warning_count(i)));
    if (!count) return;
    const big = BigInt.asUintN(64, x.rt_warning_detail(i));
    const detail = Number(big);
    const text = big === U64_MAX ? `≥ ${big}` : big;
    warnings.push({ code, count, offset: Number(BigInt.asUintN(64, x.rt_warning_offset(i))), detail, message: fill(WARN_MESSAGES[code], text) });
  });
  const kept = Number(x.rt_loss_total(1));
  const ranges = [];
  for (let i = 0; i < kept; i++) {
    const seq = Number(x.rt_loss_range(i, 3));
    ranges.push({
      from: Number(x.rt_loss_range(i, 0)), to: Number(x.rt_loss_range(i, 1)),
      code: WARN_NAMES[Number(x.rt_loss_range(i, 2))] ?? "TRUNCATED", ...(seq !== 0xffffffff ? { seq } : {}),
    });
  }
  const loss: LossReport = {
    bytes: Number(x.rt_loss_total(4)), activityChunks: Number(x.rt_loss_total(2)),
    activityBytes: Number(x.rt_loss_total(3)), rangesTotal: Number(x.rt_loss_total(0)), ranges,
  };
  const dropped = BigInt.asUintN(64, x.rt_info(13));
  const droppedBuffers = BigInt.asUintN(64, x.rt_info(25));
  return {
    file,
    bytes: n(20),
    vendor: vendorName(n(0)),
    vendorVersion: n(1),
    vendorVersionText: text(2),
    runtimeVersion: n(2),
    driverVersion: n(3),
    pid: n(4),
    programPid: n(26),
    rank: signed(5),
    localRank: signed(21),
    worldSize: signed(6),
    hostname: text(0),
    commandLine: text(1).split("\0").filter((s) => s.length > 0),
    collectorStartNs: ns(x.rt_info(7)),
    firstNs: ns(x.rt_info(8)),
    lastNs: ns(x.rt_info(9)),
    chunks: n(10),
    activityChunks: n(11),
    activityBytes: n(12),
    droppedRecords: Number(dropped),
    droppedRecordsText: dropped === U64_MAX ? `≥ ${dropped}` : String(dropped),
    droppedBuffers: Number(droppedBuffers),
    complete: n(14) === 1,
    externalCorrelations: n(18),
    outOfOrderBuffers: n(24),
    devices,
    records,
    warnings,
    loss,
    clock: {
      start: x.rt_clock_anchor(0) ? { vendorNs: ns(x.rt_clock_anchor(1)), realtimeNs: ns(x.rt_clock_anchor(2)) } : undefined,
      end: x.rt_clock_anchor(3) ? { vendorNs: ns(x.rt_clock_anchor(4)), realtimeNs: ns(x.rt_clock_anchor(5)) } : undefined,
    },
  };
}
