/**
 * Summary statistics of a trace (host-neutral: Node CLI and API, browser viewer): GPU busy %, kernels by total
 * time, memcpy bytes and bandwidth per direction, API time by call. The core aggregates them from the normalized
 * events in one emit pass (assembly/emit/stats.ts) and hands back one compact binary result, decoded here.
 *
 * Definitions:
 * - trace span: first start to last end over every event of the file (what a Chrome trace of it shows, minus the
 *   derived gpu_user_annotation spans);
 * - busy time of a device: the length of the union of its kernel, memcpy and memset intervals (overlapping work on
 *   several streams counts once); busy % = busy time / trace span;
 * - bandwidth of a copy direction: its bytes / the summed duration of its copies (bytes per ns = GB/s).
 */
import { Engine, type ByteSource, type ConvertOptions, type ConvertResult } from "./engine.js";

/** Event kinds of the normalized model (assembly/model/event.ts EvKind). */
export const EventKind = {
  KERNEL: 1, MEMCPY: 2, MEMSET: 3, API_RUNTIME: 4, API_DRIVER: 5, SYNC: 6, EVENT_RECORD: 7, OVERHEAD: 8, RANGE: 9,
  INSTANT: 10, GRAPH: 11,
} as const;

/**
 * Short names of {@link EventKind} values: what `rawtrace stats` prints (text, --json, --csv) instead of numbers.
 */
export const KIND_NAMES: Record<number, string> = {
  1: "kernel", 2: "memcpy", 3: "memset", 4: "runtime", 5: "driver", 6: "sync", 7: "event", 8: "overhead", 9: "range",
  10: "instant", 11: "graph",
};

/** The name of an {@link EventKind} value ("kernel", "memcpy", …; `kind N` for a value this build does not know). */
export function kindName(kind: number): string {
  return KIND_NAMES[kind] ?? `kind ${kind}`;
}

/** Category names of {@link EventKind} values, as the Chrome JSON names them. */
export const KIND_CATEGORY: Record<number, string> = {
  1: "kernel", 2: "gpu_memcpy", 3: "gpu_memset", 4: "cuda_runtime", 5: "cuda_driver", 6: "cuda_sync",
  7: "cuda_event", 8: "overhead", 9: "user_annotation", 10: "user_annotation", 11: "cuda_graph",
};

/** CUPTI copy kinds (the numbering the core reports) → the direction Kineto puts in memcpy names. */
export const COPY_DIRECTIONS: Record<number, string> = {
  0: "Unknown", 1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD", 7: "DtoA", 8: "DtoD", 9: "HtoH",
  10: "PtoP",
};

/** One device. Times in ns, bytes in bytes. */
export interface DeviceStats {
  id: number;
  /** Union of kernel, memcpy and memset intervals. */
  busyNs: number;
  /** busyNs / trace span × 100 (0 when the span is empty). */
  busyPercent: number;
  kernels: number;
  kernelNs: number;
  memcpys: number;
  memcpyNs: number;
  /** Bytes of its memcpys; null when some of them have no byte count in their records (Gaudi's DMA entries). */
  memcpyBytes: number | null;
  memsets: number;
  memsetNs: number;
  /** Bytes of its memsets; null when some of them have no byte count in their records. */
  memsetBytes: number | null;
  /** First start and last end of this device's work, Unix ns (0n when none). */
  firstNs: bigint;
  lastNs: bigint;
}

/** Count and durations of the events of one (kind, name). */
export interface NameStats {
  /** {@link EventKind} value. */
  kind: number;
  name: string;
  count: number;
  totalNs: number;
  minNs: number;
  maxNs: number;
  meanNs: number;
}

/** Memcpys of one direction. */
export interface CopyStats {
  /** CUPTI copy kind (1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP, …). */
  copyKind: number;
  /** "HtoD", "DtoH", … with " (peer)" for peer-to-peer copies between devices. */
  direction: string;
  peer: boolean;
  count: number;
  /** Bytes moved; null for copies whose vendor records have no byte count (Gaudi's DMA entries), a row of their own. */
  bytes: number | null;
  totalNs: number;
  maxNs: number;
  /** bytes / totalNs (= GB/s); 0 when no time; null when the bytes are unknown. */
  bandwidthGBs: number | null;
}

/** Statistics of one file. */
export interface TraceStats {
  /** Events aggregated (derived GPU annotation spans excluded). */
  events: number;
  /** Trace span, Unix ns (0n when no event). */
  startNs: bigint;
  endNs: bigint;
  spanNs: number;
  devices: DeviceStats[];
  /** Every (kind, name) with its count and time, in first-seen order. */
  names: NameStats[];
  copies: CopyStats[];
  /** Device intervals the busy-time union was computed over (after coalescing). */
  intervals: number;
}

const MAGIC = 0x54535452; // "RTST"
const dec = new TextDecoder("utf-8");

/** Decodes the core's stats result (the output bytes of a `format: "stats"` conversion). */
export function decodeStats(bytes: Uint8Array): TraceStats {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 64 || dv.getUint32(0, true) !== MAGIC) throw new Error("not a rawtrace stats result");
  if (dv.getUint32(4, true) !== 2) throw new Error(`stats result version ${dv.getUint32(4, true)} is not 2`);
  const nDev = dv.getUint32(8, true);
  const nNames = dv.getUint32(12, true);
  const nCopies = dv.getUint32(16, true);
  const nameBytes = dv.getUint32(20, true);
  const u = (o: number) => Number(dv.getBigUint64(o, true));
  const startNs = dv.getBigUint64(32, true);
  const endNs = dv.getBigUint64(40, true);
  const spanNs = endNs > startNs ? Number(endNs - startNs) : 0;
  let o = 64;
  const devices: DeviceStats[] = [];
  for (let i = 0; i < nDev; i++, o += 96) {
    const busyNs = u(o + 8);
    devices.push({
      id: dv.getUint32(o, true), busyNs, busyPercent: spanNs > 0 ? (busyNs / spanNs) * 100 : 0,
      kernels: u(o + 16), kernelNs: u(o + 24), memcpys: u(o + 32), memcpyNs: u(o + 40),
      memcpyBytes: (dv.getUint32(o + 4, true) & 1) !== 0 ? null : u(o + 48),
      memsets: u(o + 56), memsetNs: u(o + 64),
      memsetBytes: (dv.getUint32(o + 4, true) & 2) !== 0 ? null : u(o + 72),
      firstNs: dv.getBigUint64(o + 80, true), lastNs: dv.getBigUint64(o + 88, true),
    });
  }
  const copies: CopyStats[] = [];
  for (let i = 0; i < nCopies; i++, o += 40) {
    const copyKind = dv.getUint32(o, true);
    const peer = (dv.getUint32(o + 4, true) & 1) !== 0;
    const unknown = (dv.getUint32(o + 4, true) & 2) !== 0;
    const bytesMoved = u(o + 16);
    const totalNs = u(o + 24);
    copies.push({
      copyKind, peer, direction: (COPY_DIRECTIONS[copyKind] ?? `kind ${copyKind}`) + (peer ? " (peer)" : ""),
      count: u(o + 8), bytes: unknown ? null : bytesMoved, totalNs, maxNs: u(o + 32),
      bandwidthGBs: unknown ? null : totalNs > 0 ? bytesMoved / totalNs : 0,
    });
  }
  const textAt = o + nNames * 48;
  if (textAt + nameBytes > bytes.length) throw new Error("stats result is truncated");
  const names: NameStats[] = [];
  for (let i = 0; i < nNames; i++, o += 48) {
    const off = dv.getUint32(o + 4, true);
    const len = dv.getUint32(o + 8, true);
    const count = u(o + 16);
    const totalNs = u(o + 24);
    const kind = dv.getUint32(o, true);
    const name = dec.decode(bytes.subarray(textAt + off, textAt + off + len));
    names.push({
      kind, name: name === "" && kind === EventKind.GRAPH ? "CUDA Graph" : name, count, totalNs,
      minNs: u(o + 32), maxNs: u(o + 40), meanNs: count ? totalNs / count : 0,
    });
  }
  return { events: u(24), startNs, endNs, spanNs, devices, names, copies, intervals: u(48) };
}

/** Names of one kind sorted by total time, largest first (e.g. top kernels: `byTotal(s, EventKind.KERNEL, 10)`). */
export function byTotal(stats: TraceStats, kind: number | number[], limit = Infinity): NameStats[] {
  const kinds = Array.isArray(kind) ? kind : [kind];
  return stats.names
    .filter((n) => kinds.includes(n.kind))
    .sort((a, b) => b.totalNs - a.totalNs || a.name.localeCompare(b.name))
    .slice(0, limit);
}

/** Runs the stats pass over `src` with `engine` and decodes the result. */
export async function computeStats(
  engine: Engine, src: ByteSource, opts: Pick<ConvertOptions, "allApi" | "onProgress"> = {},
): Promise<{ stats: TraceStats; result: ConvertResult }> {
  const parts: Uint8Array[] = [];
  const result = await engine.convert(src, (b) => parts.push(b.slice()), { ...opts, format: "stats" });
  const total = parts.reduce((n, p) => n + p.length, 0);
  const all = new Uint8Array(total);
  let off = 0;
  for (const p of parts) {
    all.set(p, off);
    off += p.length;
  }
  return { stats: decodeStats(all), result };
}
