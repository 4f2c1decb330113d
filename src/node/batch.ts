/**
 * The batch pipeline: many dumps converted in parallel on a {@link WorkerPool}, each worker streaming file to file.
 * One bad file fails alone: the others are converted and the result lists every failure.
 *
 * Outputs go next to their inputs, or into `outDir`: `<stem>.json` (`.json.gz` with gzip), or for XSpace the
 * TensorBoard/XProf layout `<stem>_xprof/plugins/profile/<run>/<host>.xplane.pb`. Existing files are never
 * overwritten without `force`; two inputs that would write the same output fail the second one. Outputs are opened
 * as src/node/output.ts describes (exclusive temporaries published when complete, `-`, FIFOs and devices written
 * directly, never over an input); a default output name never equals an input (`trace.json` converts to
 * `trace.json.json`).
 */
import { needOptions, needPath, needPaths } from "./api_args.js";
import { closeSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { RawtraceError, type LossReport, type Warning } from "../core/codes.js";
import type { AnalysisOptions } from "../core/engine.js";
import { checkOutputOptions, xspaceProfilePath } from "./convert.js";
import { isGzipFile } from "./file_source.js";
import { gzipByName } from "./block_gzip.js";
import { dumpName, stemOf } from "./inputs.js";
import { InputSet, OutputFile, createTemp, makeDir, isInput, isStreamOutput } from "./output.js";
import { removeOwned } from "./owned.js";
import { WorkerPool, poolJobs, type ActiveTask } from "./pool.js";
import { convertSplit, convertingWorkers } from "./split.js";

/** Options of {@link convertBatch}. */
export interface BatchOptions {
  /** "chrome" (default) or "xspace". */
  format?: "chrome" | "xspace";
  /** gzip Chrome JSON outputs (`.json.gz`). Default: when `output` ends in .gz. */
  gzip?: boolean;
  /** gzip level 0–9 (0: rawtrace's encoder; 1–9: zlib's) of gzip outputs (default: DEFAULT_GZIP_LEVEL of src/node/block_gzip.ts). */
  gzipLevel?: number;
  /** Directory for the outputs (created when missing). Default: next to each input. */
  outDir?: string;
  /**
   * Exactly one input only: its output (Chrome: the file; XSpace: a log directory, or one `.xplane.pb` file).
   */
  output?: string;
  /** Overwrite existing outputs. */
  force?: boolean;
  /** Keep every API call (no Kineto blocklist). */
  allApi?: boolean;
  /** GPU annotations on/off and the step pattern (docs/analysis.md). */
  analysis?: AnalysisOptions;
  /**
   * Workers when no `pool` is given (default: one per core, at most one per input; two for one Chrome JSON input,
   * which N − 1 workers convert while this thread writes it, as the CLI's `--jobs`).
   */
  jobs?: number;
  /** A pool to run on (left open); default: a pool made for this call and closed at its end. */
  pool?: WorkerPool;
  /**
   * Called once when a file is done (converted or failed). An exception it throws (or the rejection of the promise an
   * async one returns: the batch waits for it) does not change that file's result: the batch runs to its end, then
   * rejects with the first such exception (the caller's bug is not a file's).
   */
  onFile?: (r: FileResult) => void;
  /** Called every `progressMs` (default 200) while the batch runs. */
  onProgress?: (p: BatchProgress) => void;
  progressMs?: number;
}

/** The outcome of one input. */
export interface FileResult {
  input: string;
  /** The output written (the final path: for XSpace logdirs, the .xplane.pb inside). */
  output?: string;
  ok: boolean;
  events: number;
  bytesIn: number;
  bytesOut: number;
  seconds: number;
  warnings: Warning[];
  /** Damaged input bytes the conversion skipped (converted files only). */
  loss?: LossReport;
  /** Why the file failed: stable code (docs/errors.md) and message. */
  error?: { code: string; message: string };
  /**
   * Workers that converted this output: N − 1 for the Chrome JSON of the only input of `--jobs N` (N ≥ 2), the
   * main thread writing it (src/node/split.ts); else 1 (always 1 for XSpace, which is never split).
   */
  workers?: number;
  /** The main thread wrote the output while the workers converted (the only Chrome JSON input with `--jobs` ≥ 2). */
  writer?: boolean;
}

/** What a batch did. */
export interface BatchResult {
  files: FileResult[];
  ok: number;
  failed: number;
  events: number;
  bytesIn: number;
  bytesOut: number;
  seconds: number;
  jobs: number;
}

/** Progress of a running batch. Bytes are input bytes; a file in flight counts by its pass and position. */
export interface BatchProgress {
  files: number;
  filesDone: number;
  filesFailed: number;
  bytesTotal: number;
  bytesDone: number;
  seconds: number;
  active: ActiveTask[];
}

/** Share of a file's work done at (pass, done/total): index ≈ 25 %, NVTX projection 10 %, emit the rest. */
export function fileFraction(t: ActiveTask): number {
  const f = t.total > 0 ? Math.min(1, t.done / t.total) : 0;
  return t.pass === 1 ? 0.25 * f : t.pass === 3 ? 0.25 + 0.1 * f : t.pass === 2 ? 0.35 + 0.65 * f : 0;
}

/**
 * Whether `p` is standard input or a descriptor by name (`-` becomes /dev/stdin; /dev/fd/N, /proc/self/fd/N: the
 * file behind it may be a regular one, redirected, but its folder is /dev), or exists as something other than a
 * regular file or a folder (a FIFO, a device, a socket).
 */
function existsAsSpecial(p: string): boolean {
  if (p === "/dev/stdin" || /^\/(dev|proc\/self)\/fd\/\d+$/.test(p)) return true;
  let st;
  try {
    st = statSync(p);
  } catch (e) {
    // Missing or unreachable (a symlink loop, a path through a file, a name too long): said as the input's open says
    // it, before an output beside it is tried (whose lock file failed with the same error, named after the output).
    throw new RawtraceError("IO", `${p}: cannot open: ${(e as Error).message}`, p);
  }
  return !st.isFile() && !st.isDirectory();
}

/** Size of the file at `p` in bytes (0 when it cannot be read). */
export function sizeOf(p: string): number {
  try {
    return statSync(p).size;
  } catch {
    return 0;
  }
}

function failure(input: string, e: unknown): FileResult {
  const err = e as Error;
  const code = err instanceof RawtraceError ? err.code : err?.name && /^[A-Z_]+$/.test(err.name) ? err.name : "IO";
  return {
    input, ok: false, events: 0, bytesIn: sizeOf(input), bytesOut: 0, seconds: 0, warnings: [],
    error: { code, message: err?.message ?? String(e) },
  };
}

/**
 * Worker threads a batch used at most: one per input up to the pool's size; for one input split across threads
 * (src/node/split.ts), its converting workers and the writer.
 */
function threadsUsed(size: number, results: FileResult[]): number {
  if (results.length !== 1) return Math.min(size, Math.max(1, results.length));
  const r = results[0];
  return Math.min(size, (r?.workers ?? 1) + (r?.writer ? 1 : 0));
}

/** Converts many `.rawtrace` files in parallel. Never throws for a bad file: see {@link FileResult.error}. */
export async function convertBatch(inputs: string[], opts: BatchOptions = {}): Promise<BatchResult> {
  // Checked before anything is made (a string was spread into characters after outDir was created: a TypeError).
  needPaths("convertBatch", inputs);
  needOptions("convertBatch", opts);
  if (opts.outDir !== undefined) needPath("convertBatch", "outDir", opts.outDir);
  if (opts.output !== undefined) needPath("convertBatch", "output", opts.output);
  const format = opts.format ?? "chrome";
  if (opts.output !== undefined && opts.outDir !== undefined) {
    throw new RawtraceError("USAGE", "output and outDir: give one (output names one file, outDir a folder for many)");
  }
  if (opts.output !== undefined && inputs.length !== 1) {
    throw new RawtraceError("USAGE", "-o (Node API: output) names one output: use --out-dir (outDir) with several inputs");
  }
  checkOutputOptions({ ...opts, format }, opts.output, "convertBatch");
  if (opts.outDir === "-") throw new RawtraceError("USAGE", "outDir '-': outDir names a folder, not standard output");
  // Checked also with a pool of the caller's, which it then does not size (a bad value was accepted silently).
  const jobs = poolJobs(inputs.length, opts.jobs, format === "chrome");
  const pool = opts.pool ?? new WorkerPool({ jobs });
  // After a bad `jobs`; not for no input (nothing would go there).
  if (opts.outDir && inputs.length > 0) makeDir(opts.outDir, "the output folder (--out-dir; Node API: outDir)");
  const t0 = performance.now();
  const sizes = inputs.map(sizeOf);
  const bytesTotal = sizes.reduce((a, b) => a + b, 0);
  const results: FileResult[] = new Array(inputs.length);
  const claimed = new Map<string, string>(); // output → input
  let doneBytes = 0;
  let filesDone = 0;
  let filesFailed = 0;
  let callbackError: { e: unknown } | null = null;
  const asyncCallbacks: Promise<void>[] = []; // an async onFile's promises, waited for at the end
  const finish = (i: number, r: FileResult) => {
    results[i] = r;
    filesDone++;
    if (!r.ok) filesFailed++;
    doneBytes += sizes[i];
    const p = callGuarded(() => opts.onFile?.(r), (e) => (callbackError ??= { e }));
    if (p) asyncCallbacks.push(p);
  };
  const progress = progressReports(opts.onProgress, () => {
    const active = pool.active();
    const inflight = active.reduce((n, t) => n + fileFraction(t) * t.total, 0);
    return {
      files: inputs.length, filesDone, filesFailed, bytesTotal, bytesDone: doneBytes + inflight,
      seconds: (performance.now() - t0) / 1000, active,
    };
  }, opts.progressMs);
  // The inputs by path and by device and inode, once for the whole batch: every output is checked against them.
  const ins = new InputSet(inputs);
  // One lane per worker takes the inputs in order: an input's output (its temporary and lock file) is opened only
  // when a lane takes it, just before its conversion, so that at most one output per worker is open at a time.
  // Opening every output before queueing its conversion held two descriptors and a lock per input: 1,000 inputs
  // failed with EMFILE under `ulimit -n 1024`, and a shard killed with SIGKILL left a lock for every queued input.
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < inputs.length; i = next++) {
      const input = inputs[i];
      let r: FileResult;
      try {
        r = format === "xspace" ? await oneXSpace(pool, input, ins, opts, claimed) : await oneChrome(pool, input, ins, opts, claimed, inputs.length === 1);
      } catch (e) {
        r = failure(input, e);
      }
      finish(i, r);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(pool.size, inputs.length) }, lane));
  } finally {
    progress.stop();
    if (!opts.pool) await pool.close();
  }
  await Promise.all(asyncCallbacks);
  if (callbackError) throw (callbackError as { e: unknown }).e;
  progress.last();
  await progress.settled();
  progress.rethrow();
  const ok = results.filter((r) => r.ok);
  return {
    files: results, ok: ok.length, failed: results.length - ok.length,
    events: ok.reduce((n, r) => n + r.events, 0), bytesIn: ok.reduce((n, r) => n + r.bytesIn, 0),
    bytesOut: ok.reduce((n, r) => n + r.bytesOut, 0), seconds: (performance.now() - t0) / 1000, jobs: threadsUsed(pool.size, results),
  };
}

/**
 * Progress reports of a batch or merge: `make()`'s figures to `onProgress` every `ms` (none without a callback). An
 * exception from the callback stops the reports and is kept, not thrown from the timer (where it would end the host
 * process): the call rethrows it at its end, as it does an exception from `onFile`.
 */
export function progressReports(onProgress: ((p: BatchProgress) => void) | undefined, make: () => BatchProgress, ms = 200) {
  let error: { e: unknown } | null = null;
  const pending: Promise<void>[] = [];
  const report = () => {
    if (!onProgress || error) return;
    const p = callGuarded(() => onProgress(make()), (e) => {
      error ??= { e };
      clearInterval(timer);
    });
    if (p) pending.push(p);
  };
  const timer = onProgress ? setInterval(report, ms) : undefined;
  return {
    /** Stops the timer. */
    stop: () => clearInterval(timer),
    /** The last report (every file done). */
    last: report,
    /** Waits for the promises an async callback returned (their rejections are kept for `rethrow`). */
    settled: async () => {
      await Promise.all(pending.splice(0));
    },
    /** Throws what the callback threw, if it did. */
    rethrow: () => {
      if (error) throw error.e;
    },
  };
}

/**
 * Calls a caller's callback: what it throws, or what the promise it returns (an async callback) rejects with, goes to
 * `onError` — never an unhandled rejection, which would end the host process. Returns a promise that settles with that
 * promise (never rejecting), to wait for; undefined when the callback returned no promise.
 */
export function callGuarded(call: () => unknown, onError: (e: unknown) => void): Promise<void> | undefined {
  try {
    const r = call();
    if (r !== null && typeof r === "object" && typeof (r as PromiseLike<unknown>).then === "function") {
      return Promise.resolve(r as PromiseLike<unknown>).then(() => {}, onError);
    }
  } catch (e) {
    onError(e);
  }
  return undefined;
}

/** Claims `output` for `input`: two inputs may not write one file. */
function claim(claimed: Map<string, string>, output: string, input: string): void {
  const key = resolve(output);
  const other = claimed.get(key);
  if (other !== undefined) {
    throw new RawtraceError("USAGE", `${input}: same output as ${other} (${output}): give them different names, or convert them with different --out-dir folders (Node API: outDir)`, input);
  }
  claimed.set(key, input);
}

/**
 * The default output of `input` in `dir`: `<stem><ext>`, or `<name><ext>` when that would be one of the inputs
 * (`trace.json` → `trace.json.json`, never the input itself).
 */
export function defaultOutput(input: string, outDir: string | undefined, ext: string, inputs: readonly string[] | InputSet): string {
  // Beside the input, unless it is not a regular file (standard input, a FIFO, a device): `/dev/stdin.json` is no
  // place for a trace.
  if (outDir === undefined && existsAsSpecial(input)) {
    throw new RawtraceError("USAGE", `${input}: standard input, a pipe or a device has no folder to put the output beside: name it with -o or --out-dir (Node API: output or outDir)`, input);
  }
  const dir = outDir ?? dirname(input);
  const plain = join(dir, `${stemOf(input)}${ext}`);
  if (!isInput(plain, inputs)) return plain;
  const full = join(dir, `${basename(input)}${ext}`);
  if (!isInput(full, inputs)) return full;
  throw new RawtraceError("USAGE", `${input}: every default output name is an input: use -o or --out-dir (Node API: output or outDir)`, input);
}

async function oneChrome(
  pool: WorkerPool, input: string, inputs: InputSet, opts: BatchOptions, claimed: Map<string, string>, only: boolean,
): Promise<FileResult> {
  const gzip = opts.gzip ?? gzipByName(opts.output);
  const output = opts.output ?? defaultOutput(input, opts.outDir, gzip ? ".json.gz" : ".json", inputs);
  claim(claimed, output, input);
  const file = OutputFile.open(output, { force: opts.force, inputs });
  try {
    const job = { input, output, gzip, gzipLevel: opts.gzipLevel, allApi: opts.allApi, traceName: dumpName(input), fd: file.fd, analysis: opts.analysis };
    // One input and several threads: this one writes while the others convert (src/node/split.ts), the same bytes.
    const writer = only && pool.size > 1;
    // A gzipped dump is decompressed whole by every worker in every pass: one converting worker (and the writer).
    const workers = writer ? convertingWorkers(pool.size, isGzipFile(input) ? 0 : sizeOf(input)) : 1;
    const r = writer ? await convertSplit(pool, job, file.fd, workers) : await pool.convert(job);
    file.commit();
    return {
      input, output, ok: true, events: r.events, bytesIn: r.bytesIn, bytesOut: r.bytesOut, seconds: r.seconds,
      warnings: r.info.warnings, loss: r.info.loss, workers, writer,
    };
  } catch (e) {
    file.abort();
    throw e;
  }
}

/**
 * XSpace: one `.xplane.pb` when `output` names one (or standard output, a FIFO, a device), else the
 * TensorBoard/XProf layout under a log directory. The run directory is named after the profile start, known only
 * once the conversion is done, so the file is written to an exclusive temporary in `<logdir>/plugins/profile/`
 * first and published in place (removed if that fails).
 */
async function oneXSpace(
  pool: WorkerPool, input: string, inputs: InputSet, opts: BatchOptions, claimed: Map<string, string>,
): Promise<FileResult> {
  const single = opts.output !== undefined && (/\.xplane\.pb$/i.test(opts.output) || isStreamOutput(opts.output));
  if (single) {
    claim(claimed, opts.output!, input);
    if (!isStreamOutput(opts.output!)) makeDir(dirname(resolve(opts.output!)), "the output's folder");
    const file = OutputFile.open(opts.output!, { force: opts.force, inputs });
    try {
      const r = await pool.convert({ input, output: opts.output!, format: "xspace", allApi: opts.allApi, fd: file.fd, analysis: opts.analysis });
      file.commit();
      return {
        input, output: opts.output!, ok: true, events: r.events, bytesIn: r.bytesIn, bytesOut: r.bytesOut,
        seconds: r.seconds, warnings: r.info.warnings, loss: r.info.loss, workers: 1, writer: false,
      };
    } catch (e) {
      file.abort();
      throw e;
    }
  }
  const logdir = opts.output ?? defaultOutput(input, opts.outDir, "_xprof", inputs);
  const profileDir = join(logdir, "plugins", "profile");
  makeDir(profileDir, "the XProf log directory");
  const tmp = createTemp(join(profileDir, "rawtrace.xplane.pb"));
  let file: OutputFile | null = null;
  // The temporary's descriptor is ours to close until OutputFile.adopt takes it: adopt closes it itself when it
  // fails, and closing the number again could close a file another thread opened meanwhile (before 2026-12-03 it was
  // closed twice after a refused output: EXISTS without --force).
  let fdOurs = true;
  try {
    const r = await pool.convert({ input, output: logdir, format: "xspace", allApi: opts.allApi, fd: tmp.fd, analysis: opts.analysis });
    const final = xspaceProfilePath(logdir, r.baseTimeNs, r.info.hostname);
    claim(claimed, final, input);
    makeDir(dirname(final), "the XProf run folder");
    fdOurs = false;
    file = OutputFile.adopt(final, tmp.path, tmp.fd, { force: opts.force, inputs });
    file.commit();
    return {
      input, output: final, ok: true, events: r.events, bytesIn: r.bytesIn, bytesOut: r.bytesOut, seconds: r.seconds,
      warnings: r.info.warnings, loss: r.info.loss, workers: 1, writer: false,
    };
  } catch (e) {
    if (file) file.abort();
    else {
      if (fdOurs) closeSync(tmp.fd);
      removeOwned(tmp.path);
    }
    throw e;
  }
}
