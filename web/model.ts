/**
 * What the page keeps per loaded file: the core's timeline tables (typed arrays only: no object per event), the
 * names decoded once, and labels for rows. Times in the tables are ns since the file's baseNs; `offset` maps them
 * onto the view's common time axis (web/layout.ts: ranks of one run line up, another run is aligned).
 */
import type { FileInfo } from "../src/core/engine.js";
import { Kind, RowClass, TL_NONE, TimelineEvents, TimelineLanes, decodeNames, type TimelineMeta } from "../src/core/timeline.js";

export interface LoadedFile {
  id: number;
  name: string;
  info: FileInfo;
  meta: TimelineMeta;
  events: TimelineEvents;
  lanes: TimelineLanes;
  names: string[];
  /** Short names for slice labels (kernel template/parameter lists dropped). */
  shortNames: string[];
  /** Each short name's last `::` part, for a slice too narrow for its short name ({@link sliceLabel}). */
  leafNames: string[];
  rowLabels: string[];
  /** Group (process or GPU) each row belongs to, as a label. */
  rowGroups: string[];
  /** ns added to the file's times to place them on the view axis. */
  offset: number;
  loadMs: number;
  coreBytes: number;
}

/** Row accessor: word k of row r (0 class, 1 a, 2 b, 3 name, 4 first lane, 5 lanes, 6 first event, 7 events). */
export function rowWord(f: LoadedFile, r: number, k: number): number {
  return f.meta.rows[r * 8 + k];
}

/** "void at::native::foo<4, float>(int, …)" → "at::native::foo". */
export function shortName(name: string): string {
  let s = (name.startsWith("void ") ? name.slice(5) : name).replace(/\(anonymous namespace\)::/g, "");
  let depth = 0;
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === "<") depth++;
    else if (c === ">") depth = Math.max(0, depth - 1);
    else if (c === "(" && depth === 0 && i > 0) break;
    else if (depth === 0) out += c;
  }
  s = out.trim();
  return s.length > 0 ? s : name;
}

/** A short name's last `::` part ("at::native::xpu::ReduceKernel" → "ReduceKernel"); the name itself without one. */
export function leafName(short: string): string {
  const at = short.lastIndexOf("::");
  return at >= 0 && at + 2 < short.length ? short.slice(at + 2) : short;
}

function processName(info: FileInfo): string {
  const argv0 = info.commandLine[0] ?? "";
  const base = argv0.slice(argv0.lastIndexOf("/") + 1);
  // python3 train.py: show the script, as people name their runs by it.
  if (/^python/.test(base) && info.commandLine[1]) return `${base} ${info.commandLine[1]}`;
  return base;
}

/** Builds the page-side record of a loaded file. */
export function makeLoadedFile(
  id: number, name: string, info: FileInfo, meta: TimelineMeta, events: TimelineEvents, loadMs: number, coreBytes: number,
): LoadedFile {
  const names = decodeNames(meta);
  const shortNames = names.map(shortName);
  const f: LoadedFile = {
    id, name, info, meta, events, names,
    lanes: new TimelineLanes(meta.lanes),
    shortNames,
    leafNames: shortNames.map(leafName),
    rowLabels: [],
    rowGroups: [],
    offset: 0,
    loadMs,
    coreBytes,
  };
  const proc = processName(info);
  const words = vendorWords(info.vendor);
  for (let r = 0; r < meta.header.rows; r++) {
    const cls = rowWord(f, r, 0);
    const a = rowWord(f, r, 1);
    const b = rowWord(f, r, 2);
    const nm = rowWord(f, r, 3);
    const named = nm !== TL_NONE ? ` (${names[nm]})` : "";
    let label: string;
    let group: string;
    if (cls < RowClass.GPU_ANNOTATIONS) {
      group = `CPU · pid ${a}${proc ? ` · ${proc}` : ""}`;
      label =
        cls === RowClass.HOST_RANGES ? `thread ${b}${named} · ${words.ranges}`
        : cls === RowClass.HOST_API ? `thread ${b}${named} · ${words.api}`
        : `thread ${b} · ${words.overhead}`;
    } else {
      const dev = info.devices.find((d) => d.id === a);
      group = `GPU ${a}${dev ? ` · ${dev.name}` : ""}`;
      label =
        cls === RowClass.GPU_STREAM ? `stream ${b}${named}`
        : cls === RowClass.GPU_ANNOTATIONS ? `stream ${b} · annotations`
        : cls === RowClass.GPU_SYNC ? `stream ${b} (sync)`
        : cls === RowClass.GPU_CONTEXT_SYNC ? "context sync"
        : cls === RowClass.GPU_COUNTER ? `counter${named}`
        : words.overhead;
    }
    f.rowLabels.push(label);
    f.rowGroups.push(group);
  }
  return f;
}

/** Display name of a CUDA graph (it has none in the name table): by its graph id, as in the JSON. */
export function graphName(id: number): string {
  return `CUDA Graph ${id}`;
}

/** Display name of event i (CUDA graphs have none in the table: named by their graph id, as in the JSON). */
export function eventName(f: LoadedFile, i: number): string {
  const n = f.events.name(i);
  if (n !== TL_NONE) return f.names[n];
  if (f.events.kind(i) === Kind.GRAPH) return graphName(f.events.word(i, 9));
  return "(unnamed)";
}

/** The value of counter sample i (words 9 and 10: low and high 32 bits). */
export function counterValue(f: LoadedFile, i: number): number {
  return f.events.word(i, 9) + f.events.word(i, 10) * 2 ** 32;
}

/** What a vendor's host rows, ranges and tracer overhead are called (the CUDA names for CUDA dumps). */
export interface VendorWords {
  api: string;
  runtime: string;
  driver: string;
  ranges: string;
  overhead: string;
}

const CUDA_WORDS: VendorWords = {
  api: "CUDA API", runtime: "CUDA runtime API", driver: "CUDA driver API", ranges: "NVTX", overhead: "CUPTI overhead",
};

/** The words for `vendor` (FileInfo.vendor: cuda, rocm, rocm-roctracer, xpu, hpu); CUDA's for any other. */
export function vendorWords(vendor: string): VendorWords {
  if (vendor === "rocm" || vendor === "rocm-roctracer") {
    return { api: "HIP API", runtime: "HIP runtime API", driver: "HSA API", ranges: "ROCTx", overhead: "rocprofiler overhead" };
  }
  if (vendor === "xpu") return { api: "SYCL / Level Zero API", runtime: "SYCL API", driver: "Level Zero API", ranges: "ranges", overhead: "PTI overhead" };
  if (vendor === "hpu") return { api: "Synapse API", runtime: "Synapse API", driver: "Synapse API", ranges: "ranges", overhead: "Synapse profiler overhead" };
  return CUDA_WORDS;
}

/**
 * Whether a vendor's copy and fill records carry their byte count, direction, memory kinds, devices and fill value
 * (where they do, a 0 is a 0). Synapse's do not (docs/decoders/hpu.md: "copies have no byte count"); a Gaudi copy's
 * bytes are its `bytes_moved` argument where it has one (assembly/decode/synapse.ts), else unknown.
 */
export function copyRecordsComplete(vendor: string): boolean {
  return vendor !== "hpu";
}

/** The kind name shown for event kind `k` of a file of `vendor` ({@link KIND_NAMES}, with the vendor's API words). */
export function kindLabel(k: number, vendor: string): string {
  const w = vendorWords(vendor);
  if (k === Kind.API_RUNTIME) return w.runtime;
  if (k === Kind.API_DRIVER) return w.driver;
  if (k === Kind.OVERHEAD) return w.overhead;
  if ((k === Kind.RANGE || k === Kind.INSTANT) && w.ranges !== "NVTX") {
    const what = k === Kind.RANGE ? "range" : "marker";
    return w.ranges === "ranges" ? what : `${w.ranges} ${what}`;
  }
  return KIND_NAMES[k] ?? `kind ${k}`;
}

export const KIND_NAMES: Record<number, string> = {
  [Kind.KERNEL]: "kernel",
  [Kind.MEMCPY]: "memcpy",
  [Kind.MEMSET]: "memset",
  [Kind.API_RUNTIME]: "CUDA runtime API",
  [Kind.API_DRIVER]: "CUDA driver API",
  [Kind.SYNC]: "synchronization",
  [Kind.EVENT_RECORD]: "CUDA event",
  [Kind.OVERHEAD]: "CUPTI overhead",
  [Kind.RANGE]: "NVTX range",
  [Kind.INSTANT]: "NVTX marker",
  [Kind.GRAPH]: "CUDA graph",
  [Kind.GPU_RANGE]: "NVTX range on GPU",
  [Kind.COUNTER]: "counter sample",
};

/** CUPTI memcpy kinds. */
export const COPY_KINDS: Record<number, string> = {
  1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD", 7: "DtoA", 8: "DtoD", 9: "HtoH", 10: "PtoP",
};

/** First index in [lo, hi) whose start is ≥ t. */
export function lowerBoundStart(ev: TimelineEvents, lo: number, hi: number, t: number): number {
  while (lo < hi) {
    const m = (lo + hi) >>> 1;
    if (ev.start(m) < t) lo = m + 1;
    else hi = m;
  }
  return lo;
}

/** First index in [lo, hi) whose end is ≥ t (ends are sorted in a non-overlapping lane). */
export function lowerBoundEnd(ev: TimelineEvents, lo: number, hi: number, t: number): number {
  while (lo < hi) {
    const m = (lo + hi) >>> 1;
    if (ev.end(m) < t) lo = m + 1;
    else hi = m;
  }
  return lo;
}

/** Global lane index of event i (rows list their lanes contiguously). */
export function laneOf(f: LoadedFile, i: number): number {
  return rowWord(f, f.events.row(i), 4) + f.events.lane(i);
}
