/**
 * Worker-thread entry of the batch pipeline (its own esbuild entry point: dist/node/worker.js). Each worker owns one
 * instance of the core and works file to file: it opens the input and writes the output itself, so no file bytes
 * cross postMessage; only paths, options and small result objects do (comlink over the Node adapter).
 *
 * Progress is not sent back through comlink.proxy callbacks (proxies over MessageChannel are broken in Node, and a
 * busy worker would not answer anyway): the worker stores it in a SharedArrayBuffer the pool polls
 * ({@link PROGRESS_SLOTS}).
 */
import { parentPort, workerData } from "node:worker_threads";
import * as Comlink from "comlink";
import nodeEndpoint from "comlink/dist/esm/node-adapter.mjs";
import type { AnalysisOptions, Engine, FileInfo, MergeSlot, SplitState } from "../core/engine.js";
import { computeStats, type TraceStats } from "../core/stats.js";
import { convertFile } from "./convert.js";
import { createEngine } from "./wasm.js";
import { withFileSource, withGrowthWarning } from "./file_source.js";
import { segmentOutput, type PartJob } from "./split_protocol.js";
import { sendErrorDetails } from "./worker_errors.js";

/** Progress cells (BigInt64Array over the SharedArrayBuffer): task sequence, bytes done, bytes total, pass. */
export const PROGRESS_SLOTS = 4;

/** One conversion a worker runs. */
export interface ConvertJob {
  input: string;
  output: string;
  format?: "chrome" | "xspace";
  /** gzip the output (Chrome JSON only). */
  gzip?: boolean;
  /** gzip level of the output (0: rawtrace's encoder; 1–9: zlib's). */
  gzipLevel?: number;
  allApi?: boolean;
  traceName?: string;
  merge?: MergeSlot;
  /**
   * An open descriptor of this process to write to (threads share descriptors): the pool's caller opened the output
   * (src/node/output.ts) and publishes or removes it; `output` then only names it in messages.
   */
  fd?: number;
  /** GPU annotations and step pattern (a RegExp survives the structured clone). */
  analysis?: AnalysisOptions;
}

/** What a worker returns for one conversion (structured-cloned back). */
export interface ConvertSummary {
  input: string;
  output: string;
  events: number;
  apiCallsHidden: number;
  bytesIn: number;
  bytesOut: number;
  seconds: number;
  baseTimeNs: bigint;
  /** Host ranges recognised as training steps. */
  steps: number;
  info: FileInfo;
}

export type { PartJob } from "./split_protocol.js";

/** What a part returns. */
export interface PartSummary extends ConvertSummary {
  /** A worker that does not write the end: its state for the end writer. */
  split?: SplitState;
}

/** The API a worker exposes. */
export interface WorkerApi {
  convert(job: ConvertJob, seq: number): Promise<ConvertSummary>;
  part(job: ConvertJob, part: PartJob, seq: number): Promise<PartSummary>;
  info(input: string, seq: number): Promise<FileInfo>;
  stats(input: string, allApi: boolean, seq: number): Promise<{ stats: TraceStats; info: FileInfo; seconds: number }>;
}

function progress(cells: BigInt64Array | null, seq: number) {
  if (cells) {
    Atomics.store(cells, 1, 0n);
    Atomics.store(cells, 2, 0n);
    Atomics.store(cells, 3, 0n);
    Atomics.store(cells, 0, BigInt(seq));
  }
  return (done: number, total: number | undefined, pass: 1 | 2 | 3) => {
    if (!cells) return;
    Atomics.store(cells, 1, BigInt(done));
    Atomics.store(cells, 2, BigInt(total ?? 0));
    Atomics.store(cells, 3, BigInt(pass));
  };
}

let engine: Engine | null = null;
/** Whether this thread's core yields to the event loop after each input window (set by {@link workerApi}). */
let yieldEachWindow = false;
/** A macrotask turn of this thread's event loop: signal handlers and timers run in it. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
/** This worker's core instance (reused file after file: its memory is allocated once). */
async function core(): Promise<Engine> {
  engine ??= await createEngine();
  engine.windowYield = yieldEachWindow ? turn : null;
  return engine;
}

/** Runs `fn`; after a failure inside the core (a bug, memory exhaustion) the next file gets a fresh instance. */
async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    // A trap, or a write error thrown through the core's output callback: start the next file on a fresh instance.
    if ((e as Error).name === "INTERNAL" || (e as Error).name === "IO") engine = null;
    throw e;
  }
}

/**
 * The conversions a worker offers, storing progress in `cells` (the pool's shared cells of this slot; null: none).
 * A worker thread exposes it over comlink; {@link WorkerPool} with `inThread` calls it directly on its own thread,
 * with `inThread` set: the core then gives the event loop a turn after each 4 MiB input window (signals, progress).
 */
export function workerApi(cells: BigInt64Array | null, inThread = false): WorkerApi {
  yieldEachWindow = inThread;
  return {
    async convert(job, seq) {
      const t0 = performance.now();
      const r = await guarded(async () => convertFile(job.input, job.output, {
        format: job.format, gzip: job.gzip, gzipLevel: job.gzipLevel, allApi: job.allApi, traceName: job.traceName, merge: job.merge, fd: job.fd, ...job.analysis,
        onProgress: progress(cells, seq), engine: await core(),
      }));
      return {
        input: job.input, output: job.output, events: r.events, apiCallsHidden: r.apiCallsHidden, bytesIn: r.info.bytes, bytesOut: r.bytesOut,
        seconds: (performance.now() - t0) / 1000, baseTimeNs: r.baseTimeNs, steps: r.steps, info: r.info,
      };
    },
    async part(job, part, seq) {
      const t0 = performance.now();
      const out = segmentOutput(part, job.input);
      try {
        const r = await guarded(async () => withFileSource(job.input, async (src) => {
          const res = await (await core()).convert(src, out.sink, {
            allApi: job.allApi, traceName: job.traceName, ...job.analysis, split: out.split, onProgress: progress(cells, seq),
          });
          out.finish();
          return withGrowthWarning(src, res);
        }));
        return {
          input: job.input, output: job.output, events: r.events, apiCallsHidden: r.apiCallsHidden, bytesIn: r.info.bytes, bytesOut: r.bytesOut,
          seconds: (performance.now() - t0) / 1000, baseTimeNs: r.baseTimeNs, steps: r.steps, info: r.info, split: r.split,
        };
      } finally {
        part.port.close();
      }
    },
    async info(input, seq) {
      return guarded(async () => withFileSource(input, async (src) =>
        withGrowthWarning(src, { info: await (await core()).info(src, { onProgress: progress(cells, seq) }) }).info));
    },
    async stats(input, allApi, seq) {
      const t0 = performance.now();
      const { stats, result } = await guarded(async () => withFileSource(input, async (src) => {
        const r = await computeStats(await core(), src, { allApi, onProgress: progress(cells, seq) });
        withGrowthWarning(src, r.result);
        return r;
      }));
      return { stats, info: result.info, seconds: (performance.now() - t0) / 1000 };
    },
  };
}

if (parentPort) {
  sendErrorDetails();
  const cells = workerData?.progress ? new BigInt64Array(workerData.progress as SharedArrayBuffer) : null;
  Comlink.expose(workerApi(cells), nodeEndpoint(parentPort));
}
