/**
 * Host-neutral driver of the WebAssembly core (Node and browser). Runs the two passes of a conversion over a
 * re-openable byte source, streaming input through the core's window and output through a sink callback.
 */
import { FATAL_MESSAGES, FATAL_NAMES, RawtraceError, WARN_NAMES, Warning, fill, type LossReport } from "./codes.js";
import { unsignedPointers, type CoreExports } from "./core_exports.js";
import { readFileInfo, vendorName } from "./file_info.js";
import { SNIFF_BYTES, describeStart } from "./sniff.js";

export { vendorName };

/** Sequential reader of a file's bytes. `read` fills `dst` from the start and returns bytes read (0 = end). */
export interface ByteReader {
  read(dst: Uint8Array): number | Promise<number>;
  close?(): void | Promise<void>;
}

/** A file the engine can read twice (two passes). */
export interface ByteSource {
  /** Name of the trace: the Chrome JSON traceName and FileInfo.file (a file's base name). */
  name: string;
  /** Where the bytes are, as the user named them (a file's path): errors name this (default: `name`). */
  path?: string;
  /** Size in bytes when known (progress). */
  size?: number;
  /**
   * A reader from the first byte. `pass` says which pass reads (1 index, 3 NVTX projection, 2 emit: a conversion's
   * last read), so a source that keeps the bytes of the first read (web/file_source.ts; the CLI's gzip source keeps
   * what it inflated) can let them go in pass 2. `alone`: no other pass follows this one (Engine.info reads pass 1
   * only), so there is nothing to keep for.
   */
  open(pass?: 1 | 2 | 3, alone?: boolean): ByteReader | Promise<ByteReader>;
  /**
   * Warnings only the source can see (codes.ts HOST_WARN_NAMES: a gzip stream damaged after its start, a file that
   * changed size meanwhile), asked once at the end of a conversion's last read with what the core found so far
   * (`info`): the core lists them in the output's end with its own (Chrome JSON `rawtrace.warnings`, XSpace warnings)
   * and in the result's `info.warnings`.
   */
  hostWarnings?(info: FileInfo): Warning[];
  /**
   * Offset (in the bytes read) from which they may not be the file's own, asked at the end of each pass's reads: a
   * damaged gzip stream's bytes after its first damage (garbage decoded from a damaged member, members placed after
   * it at shifted offsets). Each chunk there still checks its own payload; a buffer chunk the input's end cut, whose
   * checksum cannot be verified, is read no further than this. Undefined: every byte is the file's.
   */
  unverifiedFrom?(): number | undefined;
}

/**
 * Receives output bytes. The view points into WebAssembly memory and is valid only during the call: write it out
 * or copy it before returning. A sink may return a promise (an async write of its copy): the core's next input window
 * waits for it, and its rejection fails the conversion.
 */
// `void`, not `void | PromiseLike`: any function fits (one returning push()'s number too); the engine looks at what it
// returns all the same.
export type Sink = (bytes: Uint8Array) => void;

/**
 * Progress: bytes of the current pass done and total (when known); pass 1 = index, 2 = emit, 3 = the projection
 * pass that runs between them when the dump has NVTX ranges and a launch call comes after its device op in the file.
 * A promise it returns is waited for before the next window; its rejection fails the conversion, as a throw does.
 */
export type Progress = (done: number, total: number | undefined, pass: 1 | 2 | 3) => void;

/**
 * Where the core puts what would otherwise grow with the input (assembly/util/spill.ts): XSpace's buffered event
 * records once a line holds more than 1 MiB of them (assembly/emit/xspace_spill.ts) and the cold pages of its
 * correlation tables (assembly/util/paged.ts), so that its memory stays flat: bytes are appended in order and read
 * back by offset, synchronously. One store per conversion, closed at its end.
 */
export interface SpillStore {
  /** Appends `bytes` (a view into the core's memory, valid only during the call). */
  write(bytes: Uint8Array): void;
  /** Fills `dst` with the bytes written at `offset` (always bytes already written). */
  read(offset: number, dst: Uint8Array): void;
  /** Frees the storage. */
  close(): void;
}

/**
 * A {@link SpillStore} in JavaScript memory (the browser's default): the records leave the core's linear memory,
 * which never shrinks, but stay in the process. Node uses a temporary file (src/node/spill.ts).
 */
export function memorySpill(): SpillStore {
  const parts: Uint8Array[] = [];
  const starts: number[] = [];
  let size = 0;
  return {
    write(bytes) {
      starts.push(size);
      parts.push(bytes.slice());
      size += bytes.length;
    },
    read(offset, dst) {
      // Runs are written and read whole or in pieces of one run: find the part holding `offset`, copy across parts.
      let lo = 0;
      let hi = starts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (starts[mid] <= offset) lo = mid;
        else hi = mid - 1;
      }
      let done = 0;
      for (let i = lo; done < dst.length; i++) {
        const p = parts[i];
        const from = offset + done - starts[i];
        const n = Math.min(p.length - from, dst.length - done);
        dst.set(p.subarray(from, from + n), done);
        done += n;
      }
    },
    close() {
      parts.length = 0;
    },
  };
}

/**
 * `rt_set_output`'s "no fixed time base" (assembly/emit/options.ts NO_BASE): 0 is a time base a merge can have (ranks
 * whose times lie in the first 45 days of 1970).
 */
const NO_BASE = 2n ** 64n - 1n;

/** Output formats the core writes. */
export const Output = { NONE: 0, CHROME_JSON: 1, XSPACE: 2, STATS: 3, TIMELINE: 4 } as const;

/**
 * One file's place in a multi-file output (`rawtrace merge`, src/core/merge.ts): applied by the core's emitters
 * (assembly/emit/options.ts).
 */
export interface MergeSlot {
  /**
   * Pid namespace slot ≥ 0 (the rank): Chrome pids become slot × 1000 + local (host processes 0..98, CUPTI overhead
   * 99, GPU d at 100 + d) and ac2g flow ids slot × 2^32 + correlation, so files never collide in one trace.
   */
  namespace: number;
  /** Put in front of every process_name, e.g. "rank 3 (node-a)". */
  label?: string;
  /**
   * Time base, Unix ns: Chrome baseTimeNanoseconds / XSpace profile start shared by every file. Ignored (the file
   * gets its own) when it is after the file's first event: check `ConvertResult.baseTimeNs`. A file with no time at
   * all (no event, collector start or clock anchor: a dump cut in its HEADER) takes it.
   */
  baseTimeNs?: bigint;
  /**
   * Chrome JSON: write the trace events only, each as `,\n{...}` (no header, no "Record Window End", no trailer),
   * so a host can stream file after file into one traceEvents array.
   */
  eventsOnly?: boolean;
  /**
   * XSpace: this file is one of several ranks on one host, written as a part that src/node/xspace_merge.ts joins
   * into the host's one XSpace (assembly/emit/options.ts): metadata ids interleaved by `index`, correlation ids
   * index × 2^32 + id, device planes numbered by the host's GPU ordinals, rows labelled with `label`.
   */
  xspaceHost?: XSpaceHostSlot;
}

/** A rank's place among the ranks of one host (XSpace host merge). */
export interface XSpaceHostSlot {
  /** Ranks on the host (≥ 2 to take effect). */
  ranks: number;
  /** This file's index among them, 0 ≤ index < ranks. */
  index: number;
  /**
   * Whether this file's step markers are the host's steps, which the other ranks' join (XProf roots; default: index
   * 0). src/core/merge.ts planXSpaceHosts picks the host's first rank that has step markers (FileInfo.stepNames).
   */
  producer?: boolean;
  /**
   * The host ordinal of this file's device 0 among devices `devices` does not list (a lost DEVICES chunk,
   * UNKNOWN_DEVICE): device `id` is `unmappedBase + id` (default 0: `id`). planXSpaceHosts puts each rank's above
   * every listed GPU of the host, 256 apart.
   */
  unmappedBase?: number;
  /** The host's GPU ordinal of each of this file's devices; `shared`: other ranks of the host write that plane too. */
  devices: Array<{ local: number; ordinal: number; shared: boolean }>;
}

/** Conversion options. */
export interface ConvertOptions {
  /**
   * Output format: Kineto-compatible Chrome Trace JSON (default) or an XSpace protobuf (`.xplane.pb`) for XProf and
   * TensorBoard's profile plugin (docs/xspace.md), or the viewer's timeline tables (src/core/timeline.ts), or
   * summary statistics (src/core/stats.ts: use `computeStats` there rather than this directly).
   */
  format?: "chrome" | "xspace" | "timeline" | "stats";
  /** Keep every API call (no Kineto blocklist of runtime calls and untracked driver calls). Default false. */
  allApi?: boolean;
  /** Progress callback, called once per input window. */
  onProgress?: Progress;
  /** traceName written into the Chrome JSON (default: the source name). */
  traceName?: string;
  /**
   * Awaited after each input window of the emit pass: lets a slow sink (gzip, a network stream) apply back
   * pressure so memory stays bounded.
   */
  afterWindow?: () => void | Promise<void>;
  /** This file's place in a multi-file output (merge): pid namespace, label, shared time base, events only. */
  merge?: MergeSlot;
  /**
   * Chrome JSON: project NVTX ranges onto the GPU streams their launches ran on (`gpu_user_annotation`, as Kineto
   * does). Default true.
   */
  gpuAnnotations?: boolean;
  /**
   * Which host ranges (NVTX) mark training steps: a regular expression tested against each range name (not
   * anchored: anchor it yourself). Default {@link DEFAULT_STEPS}, PyTorch's `ProfilerStep#N`. Steps become Kineto's
   * `ProfilerStep#N` user_annotation in Chrome JSON and XProf's step markers in XSpace (docs/analysis.md).
   */
  steps?: string | RegExp;
  /** Chrome JSON: this conversion is one worker's part of a file split over several (src/node/split.ts). */
  split?: SplitPart;
  /**
   * `format: "timeline"` only: instead of the tables, the Chrome JSON of the events named — each by the start, kind
   * and row its timeline record has — or of `"all"` events (src/core/details.ts reads the output: use
   * `eventDetails` there rather than this directly).
   */
  details?: "all" | DetailsTarget[];
}

/**
 * A timeline event as the viewer names it for its details (src/core/details.ts): its record's start (ns since the
 * tables' base), kind and row (class, a, b: src/core/timeline.ts TimelineMeta rows).
 */
export interface DetailsTarget {
  start: number;
  kind: number;
  rowClass: number;
  a: number;
  b: number;
}

/**
 * One worker's part of a split Chrome JSON conversion (assembly/split.ts): the ACTIVITY chunks are cut into
 * `segments` runs in file order, dealt round-robin — worker `worker` of `workers` emits segments worker, worker +
 * workers, … and decodes the others before its last one. Worker 0 writes the header; worker `workers` − 1 writes
 * the end.
 */
export interface SplitPart {
  worker: number;
  workers: number;
  /** Segments (rounded up to a multiple of `workers`; at least `workers`). */
  segments: number;
  /**
   * Called, synchronously, as segments go by: `event` 0 this worker starts emitting `segment` (the host may block
   * here until its writer has caught up); 1 or 2 the segment's bytes have all gone to the sink (2: this worker has
   * written an event since its header — what decides whether the next non-empty segment keeps its comma).
   */
  onSegment?: (segment: number, event: 0 | 1 | 2) => void;
  /** The end writer (worker `workers` − 1), before it writes the end: the other workers' state (blocks until they are done). */
  takeEarlier?: () => SplitState;
}

/**
 * What a worker that does not write the end hands the end writer: its rows (24-byte entries {table | segment << 32,
 * key, value}, in segment order), last event end, overhead flag, events.
 */
export interface SplitState {
  rows: Uint8Array;
  lastEndNs: bigint;
  overhead: boolean;
  events: bigint;
}

/** What a conversion recognises in the ranges: GPU projections and training steps (docs/analysis.md). */
export type AnalysisOptions = Pick<ConvertOptions, "gpuAnnotations" | "steps">;

/** The default step pattern: the ranges PyTorch's profiler writes around each step. */
export const DEFAULT_STEPS = /^ProfilerStep#\d+$/;

/** `steps` as a RegExp; a bad pattern is a USAGE error naming it. */
export function stepPattern(steps: string | RegExp | undefined): RegExp {
  if (steps === undefined) return DEFAULT_STEPS;
  if (steps instanceof RegExp) return new RegExp(steps.source, steps.flags.replace(/[gy]/g, ""));
  // Anything else became the source text of its String(): {} marked '[object Object]'-like ranges as steps.
  if (typeof steps !== "string") {
    throw new RawtraceError("USAGE", `steps must be a RegExp or its source text, not ${steps === null ? "null" : `a value of type ${typeof steps}`}`);
  }
  try {
    return new RegExp(steps, "u");
  } catch (e) {
    throw new RawtraceError("USAGE", `--steps: '${steps}' is not a regular expression (${(e as Error).message})`);
  }
}

/** The step number a range name carries (`ProfilerStep#12` → 12, as HTA reads it), or -1. */
export function stepNumberOf(name: string): number {
  const m = /ProfilerStep\s*#\s*(\d+)/.exec(name);
  if (!m) return -1;
  const n = Number(m[1]);
  return n <= 0x7fffffff ? n : -1;
}

/** A device as the dump describes it. Memory in bytes, bandwidth in bytes/s, clock in kHz. */
export interface DeviceSummary {
  id: number;
  name: string;
  multiprocessors: number;
  globalMemoryBytes: number;
  memoryBandwidth: number;
  coreClockKhz: number;
  computeCapability: string;
  uuid: string;
  /** AMD GPUs: the gfx target (e.g. `gfx90a`), compute units being `multiprocessors`; absent for others. */
  arch?: string;
  /**
   * The rest of Kineto's deviceProperties, by Kineto's names (maxThreadsPerBlock, warpSize, …; for AMD GPUs also
   * gfxTargetVersion, simdPerCu and maxWavesPerCu, as Kineto's ROCm build writes them).
   */
  limits: Record<string, number>;
}

/** What pass 1 learned about a file (`rawtrace info`). Times are Unix-epoch ns as bigint. */
export interface FileInfo {
  file: string;
  bytes: number;
  vendor: string;
  vendorVersion: number;
  /** The tracing library's own version text (rocprofiler-sdk: its runtime version, e.g. `1.0.0`; "" when none). */
  vendorVersionText: string;
  runtimeVersion: number;
  driverVersion: number;
  /** The HEADER's process id (0 when the dump has none). */
  pid: number;
  /**
   * The process the conversion gives the program's events: the HEADER's pid, or, when the HEADER is lost or failed its
   * checksum (NO_HEADER, HEADER_DAMAGED), the first process of its API records (CUDA, XPU) or of its THREAD_NAMES
   * (ROCm, Gaudi); when none gives one, the HEADER's even if damaged (what the conversion uses; HEADER_DAMAGED says
   * it may be wrong); 0 when the dump has no HEADER and nothing tells.
   */
  programPid: number;
  rank: number;
  localRank: number;
  worldSize: number;
  hostname: string;
  commandLine: string[];
  collectorStartNs: bigint;
  firstNs: bigint;
  lastNs: bigint;
  chunks: number;
  activityChunks: number;
  activityBytes: number;
  /** Records the collector lost (approximate above 2^53: see {@link FileInfo.droppedRecordsText}). */
  droppedRecords: number;
  /**
   * The exact dropped-record total in decimal; the core saturates it at 2^64 − 1 instead of wrapping, and then this
   * reads "≥ 18446744073709551615".
   */
  droppedRecordsText: string;
  /**
   * Whole buffers of records the collector lost, counted apart from {@link droppedRecords} because their records were
   * never counted: the CUDA collector's memory cap, a write error, an exit flush that ran out of time (docs/format.md
   * §8, reasons 2–4).
   */
  droppedBuffers: number;
  complete: boolean;
  externalCorrelations: number;
  /** Activity buffers that started before the previous one (real dumps have some; outputs do not depend on it). */
  outOfOrderBuffers: number;
  devices: DeviceSummary[];
  /** Records per vendor kind name (e.g. CONCURRENT_KERNEL). */
  records: Record<string, number>;
  warnings: Warning[];
  /** Input bytes the conversion skipped because they were damaged (zeros and no ranges when none). */
  loss: LossReport;
  /**
   * The CLOCK anchors the alignment used (Unix ns = vendor ns + offset, with linear drift between start and end
   * anchors): vendor clock and CLOCK_REALTIME readings, as bigint ns; absent when the dump has none.
   */
  clock: { start?: { vendorNs: bigint; realtimeNs: bigint }; end?: { vendorNs: bigint; realtimeNs: bigint } };
  /**
   * Distinct host range names that mark training steps by the step pattern (Engine.info's `steps`, default
   * `ProfilerStep#N`): 0 when the file has none; given by Engine.info (pass 1 alone), not by conversions.
   */
  stepNames?: number;
}

/** Result of a conversion. */
export interface ConvertResult {
  info: FileInfo;
  events: number;
  bytesOut: number;
  apiCallsHidden: number;
  /**
   * Output time base, Unix ns: Chrome JSON baseTimeNanoseconds, or for XSpace the profile start (Task Environment
   * profile_start_time; line timestamps are relative to it).
   */
  baseTimeNs: bigint;
  /** Host ranges recognised as training steps (`steps`). */
  steps: number;
  /** A split conversion's worker that does not write the end: what the end writer needs from it. */
  split?: SplitState;
}

const dec = new TextDecoder("utf-8", { fatal: false });
const enc = new TextEncoder();

/**
 * One instance of the core. Not re-entrant: run one conversion at a time per Engine (use one Engine per worker).
 */
export class Engine {
  private sink: Sink | null = null;
  private bytesOut = 0;
  private busy = false;

  private constructor(private readonly x: CoreExports) {}

  /** Current size of the core's linear memory in bytes (it only grows; drop the Engine to free it). */
  get memoryBytes(): number {
    return this.x.memory.buffer.byteLength;
  }

  /**
   * Instantiates the core from its compiled `WebAssembly.Module` or its `.wasm` bytes (an ArrayBuffer or a typed
   * array). Typed `object` rather than `WebAssembly.Module | BufferSource` (which accept any object anyway): those
   * names come from the DOM library, and `rawtrace/node`'s declarations must type-check in a Node project without it.
   */
  static async create(wasm: object): Promise<Engine> {
    let engine: Engine | null = null;
    const imports = {
      env: {
        // Pointers and lengths are the core's usize / u32, which arrive as signed i32: past 2 GiB of core memory they
        // would be negative offsets (a RangeError building the view), so they are read unsigned.
        rt_write: (ptr: number, len: number) => engine!.onWrite(ptr >>> 0, len >>> 0),
        rt_spill_write: (ptr: number, len: number) => engine!.onSpillWrite(ptr >>> 0, len >>> 0),
        rt_spill_read: (offset: bigint, ptr: number, len: number) => engine!.onSpillRead(offset, ptr >>> 0, len >>> 0),
        rt_split_segment: (segment: number, event: number) => engine!.onSegment?.(segment, event as 0 | 1 | 2),
        abort: (_msg: number, _file: number, line: number, col: number) => {
          throw new RawtraceError("INTERNAL", `rawtrace core aborted at ${line}:${col}`);
        },
      },
    };
    const inst = wasm instanceof WebAssembly.Module
      ? await WebAssembly.instantiate(wasm, imports)
      : (await WebAssembly.instantiate(wasm as BufferSource, imports)).instance;
    engine = new Engine(unsignedPointers(inst.exports as unknown as CoreExports));
    return engine;
  }

  /**
   * Makes the spill storage of each conversion (default {@link memorySpill}; Node sets its first 16 MiB in memory,
   * the rest in a temporary file: src/node/spill.ts tieredSpill).
   */
  spillFactory: () => SpillStore = memorySpill;

  /**
   * Awaited after each input window of every pass when set (4 MiB, or one whole chunk where a chunk is larger: the
   * window grows to the largest chunk): a host that runs the core on a thread that must stay responsive (Node's
   * main thread: src/node/pool.ts `inThread`) gives its event loop a turn there, so signal handlers and progress
   * timers run during a conversion; it may throw to stop the conversion there. Null (the default): no yield.
   */
  windowYield: (() => Promise<void>) | null = null;
  private spill: SpillStore | null = null;
  /**
   * Largest XSpace written, bytes: protobuf's message limit, 2^31 − 1 (XProf cannot open more). A larger one stops
   * with XSPACE_TOO_LARGE before any output. Only tests lower it, to keep their inputs small.
   */
  xspaceMaxBytes = 0x7fffffff;
  /**
   * Test-only: a line's XSpace records spill once its full chunk holds this many bytes (0: 1 MiB, the default;
   * 0xffffffff: never). Smaller values exercise many spilled runs on small inputs; the output bytes never change.
   */
  xspaceSpillBytes = 0;
  /**
   * Test-only: bytes of in-order XSpace records kept in memory past each line's largest chunk before lines spill
   * (−1: the core's default, 32 MiB, or 0 when {@link Engine.xspaceSpillBytes} is set). The output bytes never change.
   */
  xspaceKeepBytes = -1;
  /**
   * Test-only: false makes a record that arrives before the last of its XSpace line mark the line out of order (sorted
   * at the end, the oracle) instead of settling among the line's last records. The output bytes never change.
   */
  xspaceSettle = true;
  /**
   * Test-only: how a timeline conversion resolves launch ↔ device-work partners: "auto" (by a table indexed by
   * correlation id, or by sorting when the ids are sparse), "table" or "sorted". The output bytes never change.
   */
  partnerMode: "auto" | "table" | "sorted" = "auto";
  /**
   * Test-only: resident bytes of each of the core's paged correlation tables (0: 8 MiB, the default); colder pages
   * go to the spill storage (assembly/util/paged.ts). Small values force eviction; the output bytes never change.
   */
  pagedBudgetBytes = 0;
  /** Bytes spilled by the last conversion (XSpace records beyond 1 MiB per line, cold pages of paged tables). */
  spilledBytes = 0;

  private onSpillWrite(ptr: number, len: number): void {
    this.spill ??= this.spillFactory();
    this.spill.write(new Uint8Array(this.x.memory.buffer, ptr, len));
    this.spilledBytes += len;
  }

  private onSpillRead(offset: bigint, ptr: number, len: number): void {
    this.spill!.read(Number(offset), new Uint8Array(this.x.memory.buffer, ptr, len));
  }

  private onSegment: SplitPart["onSegment"] | null = null;

  private onWrite(ptr: number, len: number): void {
    this.bytesOut += len;
    this.noteAsync(this.sink?.(new Uint8Array(this.x.memory.buffer, ptr, len)));
  }

  /** The input's first bytes ({@link SNIFF_BYTES} at most), gathered by the first windows of each pass. */
  private head = new Uint8Array(SNIFF_BYTES);
  private headLen = 0;

  /** Promises a sink or progress callback returned during the current window (awaited before the next one). */
  private pending: PromiseLike<unknown>[] = [];

  /** Keeps a callback's promise for {@link settlePending}; anything else is ignored. */
  private noteAsync(r: unknown): void {
    if (r !== null && typeof r === "object" && typeof (r as PromiseLike<unknown>).then === "function") {
      const p = Promise.resolve(r as PromiseLike<unknown>);
      p.catch(() => {}); // observed by settlePending: never an unhandled rejection
      this.pending.push(p);
    }
  }

  /** Waits for the callbacks' promises of the window just fed; the first rejection fails the conversion. */
  private async settlePending(): Promise<void> {
    if (this.pending.length === 0) return;
    const ps = this.pending;
    this.pending = [];
    await Promise.all(ps);
  }

  private u8(): Uint8Array {
    return new Uint8Array(this.x.memory.buffer);
  }

  private async pump(
    src: ByteSource, pass: 1 | 2 | 3, onProgress?: Progress, afterWindow?: () => void | Promise<void>,
    beforeEnd?: () => void, alone = false,
  ): Promise<void> {
    const x = this.x;
    const reader = await src.open(pass, alone);
    let done = 0;
    this.headLen = 0;
    try {
      for (;;) {
        // Read straight into the core's input window: no intermediate copy.
        const free = x.rt_input_free();
        const n = await reader.read(new Uint8Array(x.memory.buffer, x.rt_input_ptr(), free));
        if (n === 0) break;
        // A custom reader's count is checked: NaN or a fraction made the loop never end, more than asked read as
        // "engine called out of order".
        if (!Number.isInteger(n) || n < 0 || n > free) {
          throw new RawtraceError("API_MISUSE", `${src.path ?? src.name}: offset ${done}: the source's read() returned ${String(n)}, not a whole number of bytes from 0 to the ${free} asked for`, src.path ?? src.name, done);
        }
        if (this.headLen < SNIFF_BYTES) {
          // The file's first bytes, for BAD_MAGIC's hint of what the file is instead (core/sniff.ts).
          const k = Math.min(n, SNIFF_BYTES - this.headLen);
          this.head.set(new Uint8Array(x.memory.buffer, x.rt_input_ptr(), k), this.headLen);
          this.headLen += k;
        }
        done += n;
        // Where the source's bytes stop being the file's own, once it knows (a gzip reader learns of a damage before it
        // gives a byte past it, or right after the damaged member's bytes): a buffer chunk that fails its checksum
        // across it keeps its records before it (format/container.ts keptBefore).
        const unverifiedNow = src.unverifiedFrom?.();
        if (unverifiedNow !== undefined && x.rt_set_unverified_from) x.rt_set_unverified_from(BigInt(unverifiedNow));
        const fed = x.rt_feed(n);
        await this.settlePending();
        if (!fed) break;
        this.noteAsync(onProgress?.(done, src.size, pass));
        await this.settlePending();
        if (afterWindow) await afterWindow();
        if (this.windowYield) await this.windowYield();
      }
      if (x.rt_fatal_code() === 0) beforeEnd?.();
      const unverified = src.unverifiedFrom?.();
      if (unverified !== undefined && x.rt_set_unverified_from) x.rt_set_unverified_from(BigInt(unverified));
      x.rt_end_pass();
      await this.settlePending();
    } catch (e) {
      this.pending = []; // a failed conversion's callbacks are not waited for by the next one
      if (e instanceof WebAssembly.RuntimeError) {
        // A trap inside the core is a bug (or memory exhaustion): report it against the file and offset.
        const where = src.path ?? src.name;
        const err = new RawtraceError("INTERNAL", `${where}: offset ~${done}: rawtrace core failed (${e.message})`, where, done);
        err.stack = `${err.stack}\nCaused by: ${e.stack}`;
        throw err;
      }
      throw e;
    } finally {
      await reader.close?.();
    }
    this.throwIfFatal(src.path ?? src.name);
  }

  private throwIfFatal(file: string): void {
    const code = this.x.rt_fatal_code();
    if (code === 0) return;
    const name = FATAL_NAMES[code] ?? `FATAL_${code}`;
    const offset = Number(this.x.rt_fatal_offset());
    const detail = this.x.rt_fatal_detail();
    let msg = fill(FATAL_MESSAGES[name] ?? name, detail);
    if (name === "BAD_MAGIC") msg += describeStart(this.head.subarray(0, this.headLen));
    throw new RawtraceError(name, `${file}: offset ${offset}: ${msg}`, file, offset);
  }

  /** Hands the source's own warnings ({@link ByteSource.hostWarnings}) to the core before the output's end. */
  private hostWarnings(src: ByteSource): void {
    const x = this.x;
    if (!src.hostWarnings || !x.rt_host_warn) return;
    const u64 = (v: unknown) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
    for (const w of src.hostWarnings(this.readInfo(src.name))) {
      const code = (WARN_NAMES as readonly string[]).indexOf(w.code);
      // A custom source's numbers are checked: what is not a whole number ≥ 0 (count ≥ 1) is not a warning to list.
      if (code < 0 || !u64(w.offset) || !u64(w.detail) || !u64(w.count) || w.count === 0) continue;
      x.rt_host_warn(code, BigInt(w.offset), BigInt(w.detail), BigInt(w.count));
    }
  }

  private readInfo(file: string): FileInfo {
    return readFileInfo(this.x, file);
  }

  private begin(): void {
    if (this.busy) throw new RawtraceError("API_MISUSE", "Engine is already converting; use one Engine per conversion");
    this.busy = true;
    this.pending = [];
    this.x.rt_reset();
    this.spilledBytes = 0;
    this.x.rt_set_paged_budget?.(this.pagedBudgetBytes >>> 0);
  }

  /**
   * After pass 1: tests each distinct range name against `re` (host side: the core has no regular expressions) and
   * marks the matches as step names, with the number a `ProfilerStep#N` name carries (model/steps.ts). Returns how
   * many names it marked.
   */
  private markSteps(re: RegExp): number {
    const x = this.x;
    const n = x.rt_step_names();
    let marked = 0;
    for (let i = 0; i < n; i++) {
      const p = x.rt_step_name_ptr(i);
      const len = x.rt_step_name_len();
      if (p === 0 || len === 0) continue;
      const name = dec.decode(this.u8().subarray(p, p + len));
      if (re.test(name)) {
        x.rt_step_mark(i, stepNumberOf(name));
        marked++;
      }
    }
    return marked;
  }

  /**
   * Pass 1 only: what the file holds, and (`stepNames`) how many distinct host range names mark training steps by
   * `steps` (default: PyTorch's `ProfilerStep#N`).
   */
  async info(src: ByteSource, opts: Pick<ConvertOptions, "onProgress" | "steps"> = {}): Promise<FileInfo> {
    this.begin();
    try {
      const x = this.x;
      x.rt_begin_index();
      await this.pump(src, 1, opts.onProgress, undefined, undefined, true);
      const info = this.readInfo(src.name);
      info.stepNames = this.markSteps(stepPattern(opts.steps));
      return info;
    } finally {
      this.busy = false;
      this.spill?.close(); // cold pages of the index pass's tables may have spilled
      this.spill = null;
    }
  }

  /** A split conversion's worker that does not write the end, after its pass 2: what the end writer needs from it. */
  private splitExport(): SplitState {
    const x = this.x;
    const p = x.rt_split_export();
    const n = x.rt_split_rows();
    return {
      rows: this.u8().slice(p, p + n * 24), lastEndNs: x.rt_split_state(0), overhead: x.rt_split_state(1) !== 0n,
      events: x.rt_split_state(2),
    };
  }

  /** The end writer, before its end: takes the other workers' state. */
  private splitImport(s: SplitState): void {
    const x = this.x;
    const p = x.rt_alloc(Math.max(1, s.rows.length));
    this.u8().set(s.rows, p);
    x.rt_split_import(p, s.rows.length / 24, s.lastEndNs, s.overhead ? 1 : 0, s.events);
  }

  /** Converts `src` to Chrome JSON (or XSpace with `format: "xspace"`), streaming the output into `sink`. */
  async convert(src: ByteSource, sink: Sink, opts: ConvertOptions = {}): Promise<ConvertResult> {
    const f = opts.format;
    if (f !== undefined && f !== "chrome" && f !== "xspace" && f !== "timeline" && f !== "stats") {
      throw new RawtraceError("USAGE", `unknown output format '${String(f)}' (chrome, xspace, timeline or stats)`);
    }
    this.begin();
    try {
      const x = this.x;
      x.rt_set_option(1, opts.allApi ? 1 : 0);
      x.rt_begin_index();
      await this.pump(src, 1, opts.onProgress);
      this.markSteps(stepPattern(opts.steps));
      // XSpace carries no gpu_user_annotation spans (its device events get nvtx_range instead): no projection pass.
      const project = opts.gpuAnnotations !== false && opts.format !== "xspace" && opts.format !== "stats";
      if (project && x.rt_needs_projection()) {
        // NVTX ranges: map launch calls to ranges (gpu_user_annotation spans), in pass 2 as it decodes when every
        // launch call precedes its device ops in the file, else in an extra pass before emitting.
        if (x.rt_begin_project() !== 0) await this.pump(src, 3, opts.onProgress);
      }
      const name = enc.encode(opts.traceName ?? src.name);
      const p = x.rt_alloc(name.length);
      this.u8().set(name, p);
      x.rt_set_trace_name(p, name.length);
      this.sink = sink;
      this.bytesOut = 0;
      const m = opts.merge;
      const label = enc.encode(m?.label ?? "");
      const lp = x.rt_alloc(label.length);
      this.u8().set(label, lp);
      x.rt_set_output(m?.baseTimeNs ?? NO_BASE, m ? m.namespace : -1, m?.eventsOnly ? 1 : 0, lp, label.length);
      const h = m?.xspaceHost;
      const devs = h?.devices ?? [];
      const dp = x.rt_alloc(Math.max(1, devs.length * 12));
      const dv = new DataView(x.memory.buffer, dp, Math.max(1, devs.length * 12));
      devs.forEach((d, i) => {
        dv.setUint32(i * 12, d.local, true);
        dv.setUint32(i * 12 + 4, d.ordinal, true);
        dv.setUint32(i * 12 + 8, d.shared ? 1 : 0, true);
      });
      const producer = h ? (h.producer ?? h.index === 0) : true;
      x.rt_set_xspace_host(h ? h.ranks : 1, h ? h.index : 0, producer ? 1 : 0, h?.unmappedBase ?? 0, dp, devs.length);
      const sp = opts.split;
      if (sp && !x.rt_split_set) throw new Error("this core cannot split a conversion (built before rt_split_set)");
      const split = sp && (opts.format ?? "chrome") === "chrome" ? sp : undefined;
      x.rt_split_set?.(split?.worker ?? 0, split?.workers ?? 0, split?.segments ?? 0);
      this.onSegment = split?.onSegment ?? null;
      x.rt_set_xspace_limit?.(BigInt(this.xspaceMaxBytes));
      x.rt_set_xspace_spill?.(this.xspaceSpillBytes >>> 0);
      if (this.xspaceKeepBytes >= 0) x.rt_set_xspace_keep?.(this.xspaceKeepBytes >>> 0);
      x.rt_set_xspace_settle?.(this.xspaceSettle ? 1 : 0);
      x.rt_set_partner_mode?.(this.partnerMode === "table" ? 1 : this.partnerMode === "sorted" ? 2 : 0);
      const d = opts.details;
      if (d !== undefined) {
        if (opts.format !== "timeline") throw new RawtraceError("USAGE", "details: only with format timeline");
        if (!x.rt_details_all || !x.rt_details_target) throw new Error("this core cannot write details (built before rt_details_all)");
        if (d === "all") x.rt_details_all();
        else for (const t of d) x.rt_details_target(t.start, t.kind, t.rowClass, t.a, t.b);
      }
      x.rt_begin_emit(
        opts.format === "xspace" ? Output.XSPACE : opts.format === "timeline" ? Output.TIMELINE
          : opts.format === "stats" ? Output.STATS : Output.CHROME_JSON,
      );
      const endWriter = !split || split.worker === split.workers - 1;
      const take = split && endWriter ? split.takeEarlier : undefined;
      // The end writer closes its segments before it waits: the other workers may need them written to finish.
      await this.pump(src, 2, opts.onProgress, opts.afterWindow, endWriter ? () => {
        if (take) {
          x.rt_split_close();
          this.splitImport(take());
        }
        this.hostWarnings(src);
      } : undefined);
      const info = this.readInfo(src.name);
      return {
        split: endWriter ? undefined : this.splitExport(),
        info,
        events: Number(x.rt_info(15)),
        bytesOut: this.bytesOut,
        apiCallsHidden: Number(x.rt_info(16)),
        baseTimeNs: BigInt.asUintN(64, x.rt_info(19)),
        steps: x.rt_steps_found(),
      };
    } finally {
      this.sink = null;
      this.onSegment = null;
      this.busy = false;
      this.spill?.close();
      this.spill = null;
    }
  }
}

/** A ByteSource over bytes already in memory (tests, small inputs), read in windows like a file. */
export function memorySource(bytes: Uint8Array, name = "memory.rawtrace"): ByteSource {
  return {
    name,
    size: bytes.length,
    open() {
      let off = 0;
      return {
        read(dst: Uint8Array) {
          const n = Math.min(dst.length, bytes.length - off);
          dst.set(bytes.subarray(off, off + n));
          off += n;
          return n;
        },
      };
    },
  };
}
