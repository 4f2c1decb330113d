/**
 * What a worker of the batch pipeline does (src/node/worker.ts runs it in a worker thread; {@link WorkerPool} with
 * `inThread` calls it on its own thread). Each instance owns one instance of the core and works file to file: it
 * opens the input and writes the output itself, so no file bytes cross postMessage; only paths, options and small
 * result objects do (comlink over the Node adapter).
 *
 * Progress is not sent back through comlink.proxy callbacks (proxies over MessageChannel are broken in Node, and a
 * busy worker would not answer anyway): the worker stores it in a SharedArrayBuffer the pool polls
 * ({@link PROGRESS_SLOTS}).
 *
 * This module has no side effects: importing it (the pool does, and so do the bundles of the CLI and of
 * `rawtrace/node`) starts nothing and touches no `parentPort` — a host's own worker thread may import `rawtrace/node`.
 */
import { readFile } from "node:fs/promises";
import { RawtraceError } from "../core/codes.js";
import type { AnalysisOptions, Engine, FileInfo, MergeSlot, SplitState } from "../core/engine.js";
import { computeStats, type TraceStats } from "../core/stats.js";
import { convertFile } from "./convert.js";
import { createEngine, turn } from "./wasm.js";
import { withFileSource, withSourceWarnings } from "./file_source.js";
import { segmentOutput, type PartJob } from "./split_protocol.js";

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
  /** Replace an existing `output` ({@link WorkerPool.convert} without `fd`; otherwise EXISTS, as convertFile). */
  force?: boolean;
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
  info(input: string, seq: number, steps?: string | RegExp): Promise<FileInfo>;
  stats(input: string, allApi: boolean, seq: number): Promise<{ stats: TraceStats; info: FileInfo; seconds: number }>;
}

function progress(cells: BigInt64Array | null, seq: number) {
  if (cells) {
    Atomics.store(cells, 1, 0n);
    Atomics.store(cells, 2, 0n);
    Atomics.store(cells, 3, 0n);
    Atomics.store(cells, 0, BigInt(seq));
  }
  return (done: number, total: number | undefined, pass: 1 | 2 | 3): Promise<void> | undefined => {
    if (cells) {
      Atomics.store(cells, 1, BigInt(done));
      Atomics.store(cells, 2, BigInt(total ?? 0));
      Atomics.store(cells, 3, BigInt(pass));
    }
    return pass === 2 ? testHold() : undefined;
  };
}


/** Whether {@link testHold} held a conversion of this thread already. */
let held = false;

/**
 * A test hook, off unless the environment variable RAWTRACE_TEST_HOLD names a FIFO: the first progress report of an
 * emit pass on this thread (the output is being written) reads that FIFO to its end, asynchronously (the engine
 * waits for the promise; signal handlers and timers go on running), so the conversion stays in progress, its
 * temporaries and lock in place, until the test closes the FIFO's write end. The test knows the conversion got there
 * when it can open that end (a FIFO opens for writing only once a reader holds it): it then signals or kills a run
 * that is provably not finished, on a machine of any speed (test/node/output.test.ts, test/node/stale_lock.test.ts).
 */
function testHold(): Promise<void> | undefined {
  const fifo = process.env.RAWTRACE_TEST_HOLD;
  if (!fifo || held) return undefined;
  held = true;
  return readFile(fifo).then(() => {});
}

/** Options of {@link workerApi} on the pool's own thread. */
export interface InThreadOptions {
  /**
   * Asked after each input window's turn of the event loop: true stops the running task there with API_MISUSE
   * (the pool was closed under it), so that nothing is written after its caller gave up the output.
   */
  cancelled(): boolean;
}

/**
 * The conversions a worker offers, storing progress in `cells` (the pool's shared cells of this slot; null: none),
 * each instance with a core of its own (made on first need, reused file after file). A worker thread exposes it over
 * comlink; {@link WorkerPool} with `inThread` calls it directly on its own thread, with `inThread` given: the core
 * then gives the event loop a turn after each input window (4 MiB, or one chunk where a chunk is larger), so signal
 * handlers and progress timers run, and stops there once `inThread.cancelled()`.
 */
export function workerApi(cells: BigInt64Array | null, inThread?: InThreadOptions): WorkerApi {
  let engine: Engine | null = null;
  /** A turn of the event loop, then stop if the pool was closed meanwhile. */
  const windowYield = inThread
    ? async () => {
      await turn();
      if (inThread.cancelled()) throw new RawtraceError("API_MISUSE", "the worker pool was closed during the task");
    }
    : null;
  /** This instance's core (reused file after file: its memory is allocated once). */
  const core = async (): Promise<Engine> => {
    engine ??= await createEngine();
    engine.windowYield = windowYield;
    return engine;
  };
  /** Runs `fn`; after a failure inside the core (a bug, memory exhaustion) the next file gets a fresh instance. */
  const guarded = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (e) {
      // A trap, a write error thrown through the core's output callback, or a task stopped mid-pass: the next file
      // starts on a fresh instance.
      const name = (e as Error).name;
      if (name === "INTERNAL" || name === "IO" || name === "API_MISUSE") engine = null;
      throw e;
    }
  };
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
          return withSourceWarnings(src, res);
        }));
        return {
          input: job.input, output: job.output, events: r.events, apiCallsHidden: r.apiCallsHidden, bytesIn: r.info.bytes, bytesOut: r.bytesOut,
          seconds: (performance.now() - t0) / 1000, baseTimeNs: r.baseTimeNs, steps: r.steps, info: r.info, split: r.split,
        };
      } finally {
        part.port.close();
      }
    },
    async info(input, seq, steps) {
      return guarded(async () => withFileSource(input, async (src) =>
        withSourceWarnings(src, { info: await (await core()).info(src, { onProgress: progress(cells, seq), steps }) }).info));
    },
    async stats(input, allApi, seq) {
      const t0 = performance.now();
      const { stats, result } = await guarded(async () => withFileSource(input, async (src) => {
        const r = await computeStats(await core(), src, { allApi, onProgress: progress(cells, seq) });
        withSourceWarnings(src, r.result);
        return r;
      }));
      return { stats, info: result.info, seconds: (performance.now() - t0) / 1000 };
    },
  };
}
