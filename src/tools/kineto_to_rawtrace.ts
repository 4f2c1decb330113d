/**
 * The round-trip tool: a Kineto Chrome JSON trace (plain or gzip) → a `.rawtrace` holding its GPU side as raw CUPTI
 * records of a chosen layout (CUDA 12 or CUDA 13), so that converting that dump with the engine can be compared
 * with the original, event by event, to the nanosecond.
 *
 *   tsx src/tools/kineto_to_rawtrace.ts in.json[.gz] -o out.rawtrace [--layout cuda11|cuda12|cuda13|cuda135] [--records-per-chunk N]
 *
 * What becomes what:
 * - `kernel` → CONCURRENT_KERNEL (name into STRINGS under a synthetic pointer per distinct name; device = pid,
 *   stream = tid; correlation, grid, block, registers per thread and shared memory from args; the whole
 *   "shared memory" goes into staticSharedMemory);
 * - `gpu_memcpy` → MEMCPY (copy/src/dst kinds parsed back from "Memcpy HtoD (Pageable -> Device)");
 * - `gpu_memset` → MEMSET (memory kind from "Memset (Device)");
 * - `cuda_runtime` / `cuda_driver` → RUNTIME / DRIVER records plus an API_NAMES entry (domain 2 / 1, cbid) → name;
 * - `"External id"` → one EXTERNAL_CORRELATION record (CUSTOM0) per correlation, just before its first record;
 * - `cuda_sync` → SYNCHRONIZATION (type from cuda_sync_kind).
 * Timestamps are exact: Kineto's µs text (integers, or 3-decimal values relative to baseTimeNanoseconds) is parsed
 * as a decimal, never multiplied as a float. The CLOCK anchors say vendor clock == CLOCK_REALTIME.
 *
 * The module also gives the normalized view of a Kineto-format trace used by test/tools/roundtrip.test.ts
 * ({@link kinetoView}, {@link expectedRoundTripView}, {@link compareViews}); it serves both the original trace and
 * the engine's output, which share the format.
 */
import { readFileSync, realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { parseToolArgs, writeToolOutput } from "./kineto_cli.js";
import { RawtraceWriter, type DeviceInfo } from "../format/writer.js";
import {
  CK, LAYOUT_VERSION, SIZES, apiRecord, concat, cudaEventRecord, externalRecord, kernelRecord, memcpyRecord, memsetRecord, syncRecord,
  type CuptiLayout,
} from "./cupti_records.js";

// ---- Kineto JSON, read exactly -----------------------------------------------------------------------------------

/** A number in a Kineto trace: a JS number, or its exact decimal text (see {@link parseKinetoJson}). */
export type KinetoNumber = number | string;

/** One trace event as Kineto writes it (only the fields this tool reads are typed). */
export interface KinetoEvent {
  ph?: string;
  cat?: string;
  name?: string;
  pid?: number | string;
  tid?: number | string;
  ts?: KinetoNumber;
  dur?: KinetoNumber;
  id?: number;
  args?: Record<string, unknown>;
}

/** One `deviceProperties` entry. */
export interface KinetoDevice {
  id: number;
  name?: string;
  totalGlobalMem?: number;
  computeMajor?: number;
  computeMinor?: number;
  maxThreadsPerBlock?: number;
  maxThreadsPerMultiprocessor?: number;
  regsPerBlock?: number;
  regsPerMultiprocessor?: number;
  warpSize?: number;
  sharedMemPerBlock?: number;
  sharedMemPerMultiprocessor?: number;
  sharedMemPerBlockOptin?: number;
  numSms?: number;
  /** kHz; not in Kineto's own entries (src/tools/xspace_to_kineto.ts gives it from an XSpace's `clock_rate`). */
  clockRate?: number;
  /** Bytes/s; not in Kineto's own entries (src/tools/xspace_to_kineto.ts: an XSpace's `memory_bandwidth`). */
  memoryBandwidth?: number;
}

/** A Kineto Chrome trace (the parts this tool reads). */
export interface KinetoTrace {
  traceEvents: KinetoEvent[];
  baseTimeNanoseconds?: KinetoNumber;
  deviceProperties?: KinetoDevice[];
  distributedInfo?: { rank?: number; world_size?: number };
  cuda_runtime_version?: number | string;
  cuda_driver_version?: number | string;
  [key: string]: unknown;
}

/** Keys whose numbers are kept as their exact text by {@link parseKinetoJson}. */
const EXACT_KEYS = /"(ts|dur|baseTimeNanoseconds)"(\s*):(\s*)(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;

/**
 * Parses Kineto JSON text, keeping `ts`, `dur` and `baseTimeNanoseconds` as their exact decimal text (strings):
 * `JSON.parse` would round them to doubles, which lose the ns digit of µs values past 2^43 (about 100 days: fine
 * within Kineto's 3-month time base, lost for the absolute µs with fractions some traces carry) and any ns value
 * past 2^53. A quote can only stand unescaped at a key, so the rewrite never touches string contents.
 */
export function parseKinetoJson(text: string): KinetoTrace {
  const t = JSON.parse(text.replace(EXACT_KEYS, '"$1"$2:$3"$4"')) as KinetoTrace;
  if (!t || !Array.isArray(t.traceEvents)) throw new Error("not a Chrome trace: no traceEvents array");
  return t;
}

/** Reads a Kineto trace file, plain or gzip (recognized by its magic bytes), with {@link parseKinetoJson}. */
export function readKinetoTrace(path: string): KinetoTrace {
  let b = readFileSync(path);
  if (b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b) b = gunzipSync(b);
  return parseKinetoJson(b.toString("utf8"));
}

const DECIMAL = /^(-?)(\d+)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/** `text × 10^scale` as an integer, rounded half away from zero; exact for any decimal text. */
function scaledDecimal(v: KinetoNumber, scale: number): bigint {
  if (typeof v === "number" && !Number.isFinite(v)) throw new RangeError(`not a finite number: ${v}`);
  // A double's shortest round-trip text is the decimal Kineto wrote whenever that decimal fits a double.
  const s = typeof v === "number" ? String(v) : v.trim();
  const m = DECIMAL.exec(s);
  if (!m) throw new RangeError(`not a decimal number: ${JSON.stringify(s)}`);
  const frac = m[3] ?? "";
  const exp = Number(m[4] ?? 0) + scale - frac.length;
  let n = BigInt(m[2] + frac);
  if (exp >= 0) n *= 10n ** BigInt(exp);
  else {
    const d = 10n ** BigInt(-exp);
    n = (n * 2n + d) / (2n * d);
  }
  return m[1] === "-" ? -n : n;
}

/** Kineto µs (number or exact text) → ns, exactly: `round(v × 1000)` computed on the decimal digits. */
export function microsToNs(v: KinetoNumber): bigint {
  return scaledDecimal(v, 3);
}

/** The trace's `baseTimeNanoseconds` as an exact integer (0 when absent: older traces use absolute µs). */
export function traceBaseNs(trace: KinetoTrace): bigint {
  const b = trace.baseTimeNanoseconds;
  return b === undefined || b === null ? 0n : scaledDecimal(b as KinetoNumber, 0);
}

/** Absolute Unix ns of a Kineto `ts`: `round(ts × 1000) + baseTimeNanoseconds`. */
export function absoluteNs(ts: KinetoNumber, baseNs: bigint): bigint {
  return microsToNs(ts) + baseNs;
}

// ---- Name tables (Kineto's strings ↔ CUPTI enums) ----------------------------------------------------------------

const COPY_KINDS = ["Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"];
const MEMORY_KINDS = ["Unknown", "Pageable", "Pinned", "Device", "Array", "Managed", "Device Static", "Managed Static"];
const SYNC_KINDS: Record<string, number> = {
  "Event Sync": 1, "Stream Wait Event": 2, "Stream Sync": 3, "Context Sync": 4,
};
const MEMCPY_NAME = /^Memcpy (\S+) \((.+) -> (.+)\)$/;
const MEMSET_NAME = /^Memset \((.+)\)$/;

const kindIndex = (table: string[], s: string | undefined): number => Math.max(0, table.indexOf(s ?? ""));

/** Kineto's runtime blocklist and tracked driver calls: what rawtrace hides by default (kineto.md §2). */
const HIDDEN_RUNTIME = new Set([
  "cudaGetDevice", "cudaSetDevice", "cudaGetLastError", "cudaEventCreate", "cudaEventCreateWithFlags", "cudaEventDestroy",
]);
const TRACKED_DRIVER = new Set([
  "cuLaunchKernel", "cuLaunchKernelEx", "cuMemCreate", "cuMemMap", "cuMemUnmap", "cuMemRelease",
  "cuMemExportToShareableHandle", "cuMemImportFromShareableHandle",
]);

/** True when rawtrace keeps this API call by default (not on Kineto's blocklist, or a tracked driver call). */
export function apiKeptByDefault(cat: string, name: string): boolean {
  const base = name.replace(/_v\d+$/, "");
  return cat === "cuda_driver" ? TRACKED_DRIVER.has(base) : !HIDDEN_RUNTIME.has(base);
}

/** Most resident blocks per SM by compute capability (CUDA programming guide, "Compute Capabilities"). */
function maxBlocksPerSm(major: number, minor: number): number {
  if (major === 7 && minor === 5) return 16;
  if (major === 8 && minor === 9) return 24;
  if (major === 8 && minor >= 6) return 16;
  if (major === 12) return 32;
  return major >= 5 ? 32 : 16;
}

// ---- Conversion --------------------------------------------------------------------------------------------------

/** Options of {@link kinetoToRawtrace}. */
export interface RoundTripOptions {
  /** Which CUPTI generation's record layouts to write. */
  layout: CuptiLayout;
  /** Most records per ACTIVITY chunk (default 4096). */
  recordsPerChunk?: number;
}

/** What {@link convertKineto} wrote, per record kind, and what it had to skip or could not represent. */
export interface RoundTripStats {
  kernels: number;
  memcpys: number;
  memsets: number;
  runtime: number;
  driver: number;
  syncs: number;
  /**
   * CUDA_EVENT records made for event syncs and stream waits whose `wait_on_stream` and
   * `wait_on_cuda_event_record_corr_id` are known (no device timestamp: they place nothing, they only let the decoder
   * resolve the wait as Kineto did).
   */
  cudaEvents: number;
  externals: number;
  activityChunks: number;
  /** GPU or API events skipped: a non-numeric pid/tid, or no correlation. */
  skipped: number;
  /** Correlations seen with two different "External id" values (the first one is written). */
  externalConflicts: number;
  /** (domain, cbid) pairs seen with two different names (the first one is written). */
  apiNameConflicts: number;
  /** Peer-to-peer memcpys (written as plain MEMCPY on the executing device; fromDevice/toDevice are lost). */
  peerCopies: number;
}

/** An integer from a Kineto number or numeric string (truncated), else undefined. */
export const asInt = (v: unknown): number | undefined => {
  if (typeof v === "number" && Number.isFinite(v)) return Math.trunc(v);
  if (typeof v === "string" && /^-?\d+$/.test(v.trim())) return Number(v);
  return undefined;
};
const u32 = (v: number | undefined): number => (v === undefined ? 0 : v >>> 0);
const dims = (v: unknown): [number, number, number] => {
  const a = Array.isArray(v) ? v : [];
  return [asInt(a[0]) ?? 1, asInt(a[1]) ?? 1, asInt(a[2]) ?? 1];
};
/** An event's args object ({} when absent). */
export const argsOf = (e: KinetoEvent): Record<string, unknown> => (e.args && typeof e.args === "object" ? e.args : {});

/** The fields every GPU-side Kineto event needs, with its times as absolute ns (negative durations as 0). */
export interface TimedEvent {
  args: Record<string, unknown>;
  pid: number;
  tid: number;
  correlation: number;
  start: bigint;
  end: bigint;
}

/** {@link TimedEvent} of `e` (times from `baseNs`), or undefined when its pid, tid, correlation or ts is missing. */
export function timedEvent(e: KinetoEvent, baseNs: bigint): TimedEvent | undefined {
  const args = argsOf(e);
  const pid = asInt(e.pid);
  const tid = asInt(e.tid);
  const correlation = asInt(args.correlation);
  if (pid === undefined || tid === undefined || correlation === undefined || e.ts === undefined) return undefined;
  const start = absoluteNs(e.ts, baseNs);
  let dur = e.dur === undefined ? 0n : microsToNs(e.dur);
  if (dur < 0n) dur = 0n;
  return { args, pid, tid, correlation, start, end: start + dur };
}

/** Runs `main` with the command-line arguments when `moduleUrl` is the program being run (not imported). */
export function runIfMain(moduleUrl: string, name: string, main: (argv: string[]) => number): void {
  let isMain = false;
  try {
    isMain = !!process.argv[1] && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(moduleUrl));
  } catch {
    isMain = false;
  }
  if (!isMain) return;
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (e) {
    console.error(`${name}: ${(e as Error).message}`);
    process.exitCode = 1;
  }
}

/** The host process of the trace: the pid labelled "CPU", else the pid of the first API event. */
function hostProcess(events: KinetoEvent[]): { pid: number; name: string } {
  let pid: number | undefined;
  for (const e of events) {
    if (e.ph === "M" && e.name === "process_labels" && argsOf(e).labels === "CPU") {
      pid = asInt(e.pid);
      if (pid !== undefined) break;
    }
  }
  if (pid === undefined) {
    const api = events.find((e) => e.ph === "X" && (e.cat === "cuda_runtime" || e.cat === "cuda_driver"));
    pid = asInt(api?.pid) ?? 0;
  }
  const pn = events.find((e) => e.ph === "M" && e.name === "process_name" && asInt(e.pid) === pid);
  const name = pn ? argsOf(pn).name : undefined;
  return { pid, name: typeof name === "string" ? name : "" };
}

/**
 * Converts a Kineto trace to `.rawtrace` bytes and says what it wrote. Records follow the trace's event order,
 * ACTIVITY chunks hold at most `recordsPerChunk` records each.
 */
export function convertKineto(trace: KinetoTrace, opts: RoundTripOptions): { bytes: Uint8Array; stats: RoundTripStats } {
  const layout = opts.layout;
  if (!(layout in SIZES)) throw new RangeError(`unknown layout ${String(layout)} (cuda11, cuda12 or cuda13)`);
  const perChunk = opts.recordsPerChunk ?? 4096;
  if (!Number.isInteger(perChunk) || perChunk < 1) throw new RangeError(`recordsPerChunk must be ≥ 1, got ${perChunk}`);
  const base = traceBaseNs(trace);
  const events = trace.traceEvents;
  const stats: RoundTripStats = {
    kernels: 0, memcpys: 0, memsets: 0, runtime: 0, driver: 0, syncs: 0, cudaEvents: 0, externals: 0, activityChunks: 0,
    skipped: 0, externalConflicts: 0, apiNameConflicts: 0, peerCopies: 0,
  };

  const records: Uint8Array[] = [];
  const namePtrs = new Map<string, bigint>();
  const apiNames = new Map<string, [number, number, string]>();
  const externalOf = new Map<number, number>(); // correlation → External id written
  const apiThreads = new Set<string>();
  let minNs: bigint | undefined;
  let maxNs: bigint | undefined;

  for (const e of events) {
    if (e.ph !== "X") continue;
    const cat = e.cat;
    if (cat !== "kernel" && cat !== "gpu_memcpy" && cat !== "gpu_memset" && cat !== "cuda_runtime" &&
      cat !== "cuda_driver" && cat !== "cuda_sync") continue;
    const t = timedEvent(e, base);
    if (!t) {
      stats.skipped++;
      continue;
    }
    const { args: a, pid, tid, correlation: corr, start, end } = t;
    if (minNs === undefined || start < minNs) minNs = start;
    if (maxNs === undefined || end > maxNs) maxNs = end;

    const ext = asInt(a["External id"]);
    if (ext !== undefined) {
      const had = externalOf.get(corr);
      if (had === undefined) {
        externalOf.set(corr, ext);
        records.push(externalRecord(layout, 3, BigInt(ext), u32(corr)));
        stats.externals++;
      } else if (had !== ext) stats.externalConflicts++;
    }
    const name = e.name ?? "";
    const context = u32(asInt(a.context));
    switch (cat) {
      case "kernel": {
        let ptr = namePtrs.get(name);
        if (ptr === undefined) {
          ptr = 0x7f3a_0000_0000n + BigInt(namePtrs.size + 1) * 0x100n;
          namePtrs.set(name, ptr);
        }
        const [gridX, gridY, gridZ] = dims(a.grid);
        const [blockX, blockY, blockZ] = dims(a.block);
        records.push(kernelRecord(layout, {
          start, end, deviceId: u32(pid), contextId: context, streamId: u32(tid), correlationId: u32(corr),
          namePtr: ptr, gridX, gridY, gridZ, blockX, blockY, blockZ,
          registersPerThread: asInt(a["registers per thread"]) ?? 0,
          staticSharedMemory: asInt(a["shared memory"]) ?? 0, dynamicSharedMemory: 0,
          graphId: u32(asInt(a["graph id"])), graphNodeId: BigInt(asInt(a["graph node id"]) ?? 0),
          channelID: u32(asInt(a.channel)), channelType: u32(asInt(a.channel_type)),
        }));
        stats.kernels++;
        break;
      }
      case "gpu_memcpy": {
        const m = MEMCPY_NAME.exec(name);
        if (a.fromDevice !== undefined) stats.peerCopies++;
        records.push(memcpyRecord(layout, {
          start, end, deviceId: u32(pid), contextId: u32(asInt(a.context ?? a.inContext)), streamId: u32(tid),
          correlationId: u32(corr), bytes: BigInt(asInt(a.bytes) ?? 0),
          copyKind: kindIndex(COPY_KINDS, m?.[1]), srcKind: kindIndex(MEMORY_KINDS, m?.[2]),
          dstKind: kindIndex(MEMORY_KINDS, m?.[3]), async: true,
          graphId: u32(asInt(a["graph id"])), graphNodeId: BigInt(asInt(a["graph node id"]) ?? 0),
          channelID: u32(asInt(a.channel)), channelType: u32(asInt(a.channel_type)),
        }));
        stats.memcpys++;
        break;
      }
      case "gpu_memset": {
        const m = MEMSET_NAME.exec(name);
        records.push(memsetRecord(layout, {
          start, end, deviceId: u32(pid), contextId: context, streamId: u32(tid), correlationId: u32(corr),
          bytes: BigInt(asInt(a.bytes) ?? 0), memoryKind: kindIndex(MEMORY_KINDS, m?.[1]), async: true,
        }));
        stats.memsets++;
        break;
      }
      case "cuda_runtime":
      case "cuda_driver": {
        const domain = cat === "cuda_driver" ? 1 : 2;
        const cbid = u32(asInt(a.cbid));
        const key = `${domain}:${cbid}`;
        const had = apiNames.get(key);
        if (!had) apiNames.set(key, [domain, cbid, name]);
        else if (had[2] !== name) stats.apiNameConflicts++;
        records.push(apiRecord(layout, {
          kind: domain === 1 ? CK.DRIVER : CK.RUNTIME, cbid, start, end, processId: u32(pid), threadId: u32(tid),
          correlationId: u32(corr),
        }));
        apiThreads.add(`${u32(pid)}:${u32(tid)}`);
        if (domain === 1) stats.driver++;
        else stats.runtime++;
        break;
      }
      case "cuda_sync": {
        const kind = typeof a.cuda_sync_kind === "string" ? a.cuda_sync_kind : name;
        const stream = asInt(a.stream);
        // The recording the wait is on, as a CUDA_EVENT record before it (the decoder resolves waits in file order).
        const waitStream = asInt(a.wait_on_stream);
        const waitCorr = asInt(a.wait_on_cuda_event_record_corr_id);
        if (waitStream !== undefined && waitStream >= 0 && waitCorr !== undefined && waitCorr >= 0) {
          records.push(cudaEventRecord(layout, {
            correlationId: u32(waitCorr), contextId: context, streamId: u32(waitStream),
            eventId: u32(asInt(a.wait_on_cuda_event_id)), deviceId: u32(pid), deviceTimestamp: 0n,
          }));
          stats.cudaEvents++;
        }
        records.push(syncRecord(layout, {
          type: SYNC_KINDS[kind] ?? 0, start, end, correlationId: u32(corr), contextId: context,
          streamId: stream === undefined || stream === -1 ? 0xffffffff : u32(stream),
          cudaEventId: u32(asInt(a.wait_on_cuda_event_id)),
        }));
        stats.syncs++;
        break;
      }
    }
  }

  const host = hostProcess(events);
  const dist = trace.distributedInfo ?? {};
  const t0 = minNs !== undefined ? (minNs > 1000n ? minNs - 1000n : 1n) : (base > 0n ? base : 1n);
  const t1 = maxNs !== undefined ? maxNs + 1000n : t0 + 1000n;
  const anchor = (which: number, ns: bigint) => ({
    which, vendorNs: ns, realtimeNs: ns, monotonicNs: ns - t0 + 1_000_000_000n,
    monotonicRawNs: ns - t0 + 1_000_000_000n, boottimeNs: ns - t0 + 2_000_000_000n,
  });

  const w = RawtraceWriter.inMemory();
  w.header({
    vendor: 1, vendorVersion: LAYOUT_VERSION[layout],
    runtimeVersion: asInt(trace.cuda_runtime_version) ?? 0, driverVersion: asInt(trace.cuda_driver_version) ?? 0,
    pid: u32(host.pid), rank: asInt(dist.rank) ?? -1, worldSize: asInt(dist.world_size) ?? -1, startNs: t0,
    hostname: "roundtrip", commandLine: host.name, vendorVersionText: `kineto_to_rawtrace ${layout}`,
  });
  w.clock(anchor(0, t0));
  w.kindSizes(Object.entries(SIZES[layout]).map(([k, s]) => [Number(k), s] as const));
  if (apiNames.size) w.apiNames([...apiNames.values()]);
  if (namePtrs.size) w.strings([...namePtrs].map(([name, ptr]) => [ptr, name] as const));
  const devices: DeviceInfo[] = (trace.deviceProperties ?? []).map((d) => {
    const major = asInt(d.computeMajor) ?? 0;
    const minor = asInt(d.computeMinor) ?? 0;
    return {
      id: u32(asInt(d.id)), multiprocessors: u32(asInt(d.numSms)), globalMemoryBytes: BigInt(asInt(d.totalGlobalMem) ?? 0),
      memoryBandwidth: BigInt(asInt(d.memoryBandwidth) ?? 0), coreClockKhz: u32(asInt(d.clockRate)), ccMajor: major, ccMinor: minor,
      maxThreadsPerBlock: u32(asInt(d.maxThreadsPerBlock)), maxThreadsPerMultiprocessor: u32(asInt(d.maxThreadsPerMultiprocessor)),
      regsPerBlock: u32(asInt(d.regsPerBlock)), regsPerMultiprocessor: u32(asInt(d.regsPerMultiprocessor)),
      warpSize: u32(asInt(d.warpSize)), sharedMemPerBlock: u32(asInt(d.sharedMemPerBlock)),
      sharedMemPerMultiprocessor: u32(asInt(d.sharedMemPerMultiprocessor)),
      sharedMemPerBlockOptin: u32(asInt(d.sharedMemPerBlockOptin)),
      maxBlocksPerMultiprocessor: major ? maxBlocksPerSm(major, minor) : 0, name: d.name ?? "",
    };
  });
  if (devices.length) w.devices(devices);
  // Host thread names, from Kineto's "thread <tid> (<name>)" rows of the threads that made API calls.
  const threadNames = new Map<string, [number, number, string]>();
  for (const e of events) {
    if (e.ph !== "M" || e.name !== "thread_name") continue;
    const pid = asInt(e.pid);
    const tid = asInt(e.tid);
    const m = /^thread \d+ \((.*)\)$/.exec(String(argsOf(e).name ?? ""));
    if (pid === undefined || tid === undefined || !m || !apiThreads.has(`${u32(pid)}:${u32(tid)}`)) continue;
    threadNames.set(`${pid}:${tid}`, [u32(pid), u32(tid), m[1]]);
  }
  if (threadNames.size) w.threadNames([...threadNames.values()]);
  for (let i = 0; i < records.length; i += perChunk) {
    w.activity(concat(records.slice(i, i + perChunk)));
    stats.activityChunks++;
  }
  w.clock(anchor(1, t1));
  w.end();
  return { bytes: w.bytes(), stats };
}

/**
 * Converts a Kineto trace (from {@link readKinetoTrace}, or any parsed object: plain numbers work too, exact up to
 * double precision) to the bytes of a `.rawtrace` file holding its GPU side as raw CUPTI records of `opts.layout`.
 */
export function kinetoToRawtrace(trace: object, opts: RoundTripOptions): Uint8Array {
  return convertKineto(trace as KinetoTrace, opts).bytes;
}

// ---- Normalized view (what a round trip must preserve) -----------------------------------------------------------

/** A kernel, memcpy or memset: times in absolute Unix ns. Fields a category lacks are undefined. */
export interface ViewOp {
  cat: string;
  name: string;
  pid: number;
  tid: number;
  ts: bigint;
  dur: bigint;
  correlation: number;
  externalId?: number;
  grid?: number[];
  block?: number[];
  registersPerThread?: number;
  sharedMemory?: number;
  bytes?: number;
}

/** A runtime or driver API call. */
export interface ViewApi {
  cat: string;
  name: string;
  pid: number;
  tid: number;
  ts: bigint;
  dur: bigint;
  cbid: number;
  correlation: number;
  externalId?: number;
}

/**
 * A cuda_sync event. Its row (tid) is left out on purpose: Kineto moved "Stream Sync" rows to stream + 1000000 and
 * context syncs have no stream, so old traces and rawtrace place them differently; the stream arg is compared
 * instead (-1 and 4294967295 both mean "no stream").
 */
export interface ViewSync {
  name: string;
  pid: number;
  stream: number;
  ts: bigint;
  dur: bigint;
  correlation: number;
  externalId?: number;
  waitEventId?: number;
  /** Event syncs and stream waits: the stream and correlation id of the CUDA event recording waited on (-1 unknown). */
  waitStream?: number;
  waitCorr?: number;
}

/** An ac2g flow point, with the category of the event it sits on ("" when on none). */
export interface ViewFlow {
  ph: string;
  id: number;
  pid: number;
  /** The row, or "sync row" for flows on cuda_sync events (see {@link ViewSync}). */
  tid: number | string;
  ts: bigint;
  on: string;
}

/** The GPU side of a Kineto-format trace, normalized for comparison. */
export interface TraceView {
  ops: ViewOp[];
  api: ViewApi[];
  syncs: ViewSync[];
  flows: ViewFlow[];
}

const GPU_OPS = new Set(["kernel", "gpu_memcpy", "gpu_memset"]);

/** The normalized GPU side of a Kineto-format trace (the original, or the engine's output). */
export function kinetoView(trace: KinetoTrace): TraceView {
  const base = traceBaseNs(trace);
  const view: TraceView = { ops: [], api: [], syncs: [], flows: [] };
  const at = new Map<string, string>(); // pid/tid/ts/correlation → category
  for (const e of trace.traceEvents) {
    if (e.ph !== "X" || e.ts === undefined) continue;
    const cat = e.cat ?? "";
    if (!GPU_OPS.has(cat) && cat !== "cuda_runtime" && cat !== "cuda_driver" && cat !== "cuda_sync") continue;
    const a = argsOf(e);
    const pid = asInt(e.pid) ?? -1;
    const tid = asInt(e.tid) ?? -1;
    const ts = absoluteNs(e.ts, base);
    const dur = e.dur === undefined ? 0n : microsToNs(e.dur);
    const correlation = asInt(a.correlation) ?? -1;
    const externalId = asInt(a["External id"]);
    at.set(`${pid}/${tid}/${ts}/${correlation}`, cat);
    const name = e.name ?? "";
    if (GPU_OPS.has(cat)) {
      const op: ViewOp = { cat, name, pid, tid, ts, dur, correlation, externalId };
      if (cat === "kernel") {
        op.grid = dims(a.grid);
        op.block = dims(a.block);
        op.registersPerThread = asInt(a["registers per thread"]);
        op.sharedMemory = asInt(a["shared memory"]);
      } else op.bytes = asInt(a.bytes);
      view.ops.push(op);
    } else if (cat === "cuda_sync") {
      const s = asInt(a.stream);
      view.syncs.push({
        name, pid, stream: s === undefined || s === -1 || s === 0xffffffff ? -1 : s, ts, dur, correlation, externalId,
        waitEventId: asInt(a.wait_on_cuda_event_id),
        // An event sync written before Kineto had these fields: the same as one it could not resolve (-1).
        ...(a.wait_on_cuda_event_id !== undefined ? {
          waitStream: asInt(a.wait_on_stream) ?? -1,
          waitCorr: asInt(a.wait_on_cuda_event_record_corr_id) ?? -1,
        } : {}),
      });
    } else {
      view.api.push({ cat, name, pid, tid, ts, dur, cbid: asInt(a.cbid) ?? -1, correlation, externalId });
    }
  }
  for (const e of trace.traceEvents) {
    if ((e.ph !== "s" && e.ph !== "f") || e.cat !== "ac2g" || e.ts === undefined) continue;
    const pid = asInt(e.pid) ?? -1;
    const tid = asInt(e.tid) ?? -1;
    const id = asInt(e.id) ?? -1;
    const ts = absoluteNs(e.ts, base);
    const on = at.get(`${pid}/${tid}/${ts}/${id}`) ?? "";
    view.flows.push({ ph: e.ph, id, pid, tid: on === "cuda_sync" ? "sync row" : tid, ts, on });
  }
  return view;
}

/**
 * What the engine's output must contain after a round trip of `original`: all its kernels, memcpys, memsets and
 * syncs; the API calls rawtrace keeps by default ({@link apiKeptByDefault}); the "f" flows that sit on GPU events
 * (kernel, memcpy, memset, sync); and the "s" flows that sit on those API calls. Lone "f" flows on API calls
 * (Kineto writes one for every runtime call, linked to nothing) are not part of the contract.
 */
export function expectedRoundTripView(original: KinetoTrace): TraceView {
  const v = kinetoView(original);
  const api = v.api.filter((a) => apiKeptByDefault(a.cat, a.name));
  const kept = new Set(api.map((a) => `${a.pid}/${a.tid}/${a.ts}/${a.correlation}`));
  return {
    ops: v.ops,
    api,
    syncs: v.syncs,
    flows: v.flows.filter((f) =>
      f.ph === "f" ? GPU_OPS.has(f.on) || f.on === "cuda_sync" : kept.has(`${f.pid}/${f.tid}/${f.ts}/${f.id}`)),
  };
}

/** Result of comparing one category of a view. */
export interface CategoryMatch {
  /** Expected items found in the actual view with every compared field equal. */
  matched: number;
  /** Expected items. */
  total: number;
  /** Actual items that match no expected item. */
  extra: number;
  /** Those items. */
  extraItems: object[];
  /** Up to 5 explanations of unmatched expected items (closest actual item by correlation, field by field). */
  problems: string[];
}

/** Per-category comparison of an expected and an actual view. */
export interface ViewMatch {
  kernels: CategoryMatch;
  memcpy: CategoryMatch;
  memset: CategoryMatch;
  api: CategoryMatch;
  syncs: CategoryMatch;
  /** "f" flows (on GPU events). */
  flowEnds: CategoryMatch;
  /** "s" flows (on API calls). */
  flowStarts: CategoryMatch;
}

const sig = (o: object): string => JSON.stringify(o, (_k, v) => (typeof v === "bigint" ? `${v}n` : v));

function matchItems<T extends object>(expected: T[], actual: T[], key: (t: T) => string): CategoryMatch {
  const pool = new Map<string, number>();
  for (const a of actual) pool.set(sig(a), (pool.get(sig(a)) ?? 0) + 1);
  let matched = 0;
  const problems: string[] = [];
  for (const e of expected) {
    const s = sig(e);
    const n = pool.get(s) ?? 0;
    if (n > 0) {
      matched++;
      pool.set(s, n - 1);
      continue;
    }
    if (problems.length >= 5) continue;
    const near = actual.find((a) => key(a) === key(e));
    if (!near) problems.push(`missing ${sig(e)}`);
    else {
      const diffs = Object.keys({ ...e, ...near })
        .filter((k) => sig({ v: (e as Record<string, unknown>)[k] }) !== sig({ v: (near as Record<string, unknown>)[k] }))
        .map((k) => `${k}: expected ${sig({ v: (e as Record<string, unknown>)[k] }).slice(5, -1)} got ${sig({ v: (near as Record<string, unknown>)[k] }).slice(5, -1)}`);
      problems.push(`${key(e)}: ${diffs.join("; ")}`);
    }
  }
  const extraItems: object[] = [];
  for (const a of actual) {
    const n = pool.get(sig(a)) ?? 0;
    if (n > 0) {
      extraItems.push(a);
      pool.set(sig(a), n - 1);
    }
  }
  return { matched, total: expected.length, extra: extraItems.length, extraItems, problems };
}

/** Compares an expected view with an actual one: every compared field equal, as multisets per category. */
export function compareViews(expected: TraceView, actual: TraceView): ViewMatch {
  const ops = (v: TraceView, cat: string) => v.ops.filter((o) => o.cat === cat);
  const flows = (v: TraceView, ph: string) => v.flows.filter((f) => f.ph === ph && f.on !== "");
  const opKey = (o: ViewOp) => `${o.cat} correlation ${o.correlation} ts ${o.ts}`;
  return {
    kernels: matchItems(ops(expected, "kernel"), ops(actual, "kernel"), opKey),
    memcpy: matchItems(ops(expected, "gpu_memcpy"), ops(actual, "gpu_memcpy"), opKey),
    memset: matchItems(ops(expected, "gpu_memset"), ops(actual, "gpu_memset"), opKey),
    api: matchItems(expected.api, actual.api, (a) => `${a.name} correlation ${a.correlation}`),
    syncs: matchItems(expected.syncs, actual.syncs, (s) => `${s.name} correlation ${s.correlation}`),
    flowEnds: matchItems(flows(expected, "f"), flows(actual, "f"), (f) => `flow f ${f.id}`),
    flowStarts: matchItems(flows(expected, "s"), flows(actual, "s"), (f) => `flow s ${f.id}`),
  };
}

// ---- CLI ---------------------------------------------------------------------------------------------------------

const USAGE = "usage: tsx src/tools/kineto_to_rawtrace.ts in.json[.gz] -o out.rawtrace [--layout cuda11|cuda12|cuda13|cuda135] " +
  "[--records-per-chunk N]";

function main(argv: string[]): number {
  let layout: CuptiLayout = "cuda13";
  let perChunk = 4096;
  const args = parseToolArgs(argv, USAGE, {
    "--layout": { value: (v) => (layout = v as CuptiLayout) },
    "--records-per-chunk": { value: (v) => (perChunk = Number(v)) },
  });
  if (typeof args === "number") return args;
  if (!Object.hasOwn(LAYOUT_VERSION, layout)) {
    console.error(`--layout must be one of ${Object.keys(LAYOUT_VERSION).join(", ")}, got ${layout}`);
    return 2;
  }
  const { bytes, stats } = convertKineto(readKinetoTrace(args.input), { layout, recordsPerChunk: perChunk });
  writeToolOutput(args.output, bytes,
    `${layout}: kernels ${stats.kernels}, memcpy ${stats.memcpys}, ` +
    `memset ${stats.memsets}, runtime ${stats.runtime}, driver ${stats.driver}, sync ${stats.syncs}, ` +
    `external ${stats.externals}, ${stats.activityChunks} activity chunks` +
    (stats.skipped ? `, ${stats.skipped} events skipped` : "") +
    (stats.peerCopies ? `, ${stats.peerCopies} peer copies written as plain memcpy` : "") +
    (stats.externalConflicts ? `, ${stats.externalConflicts} conflicting External ids` : "") +
    (stats.apiNameConflicts ? `, ${stats.apiNameConflicts} conflicting API names` : ""),
  );
  return 0;
}

runIfMain(import.meta.url, "kineto_to_rawtrace", main);
