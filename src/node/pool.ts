/**
 * A reusable pool of worker threads, each running the WebAssembly core (src/node/worker.ts) through comlink's Node
 * adapter. Tasks queue for a free worker; workers start on first need (at most `size`), survive from task to task
 * and are shut down by {@link WorkerPool.close} (releaseProxy + terminate: no hanging process, no leaked worker).
 *
 * A worker that dies (out of memory, a crash) fails only the task it was running: the pool starts a new one for
 * the next task. Progress of running tasks is polled from shared memory ({@link WorkerPool.active}), never pushed
 * through callbacks.
 */
import { needOptions, needPath } from "./api_args.js";
import type { Worker } from "node:worker_threads";
import { availableParallelism, cpus } from "node:os";
import { basename, dirname, resolve } from "node:path";
import * as Comlink from "comlink";
import nodeEndpoint from "comlink/dist/esm/node-adapter.mjs";
import { RawtraceError, shownValue } from "../core/codes.js";
import { startWorker, stopWorker, workerEntry } from "./worker_start.js";
import { OutputFile, isStreamOutput, makeDir } from "./output.js";
import { checkOutputOptions } from "./convert.js";
import type { FileInfo } from "../core/engine.js";
import type { TraceStats } from "../core/stats.js";
import { PROGRESS_SLOTS, workerApi, type ConvertJob, type ConvertSummary, type PartJob, type PartSummary, type WorkerApi } from "./worker_api.js";

/** Options of {@link WorkerPool}. */
export interface PoolOptions {
  /** Worker threads (default: one per core). */
  jobs?: number;
  /**
   * Run the one task slot on this thread instead of a worker (the pool's size is then 1): no worker to start (about
   * 40–110 ms of a small conversion, most of it the new thread's own Node bootstrap). The core gives this thread's
   * event loop a turn after each input window (4 MiB, or one chunk where a chunk is larger), so signal handlers and
   * progress timers still run, and {@link WorkerPool.close} stops a running task there (it waits for that); but a
   * crash of the core (memory exhaustion) is this process's, not a worker's. The CLI asks for it for one input of at
   * most {@link IN_THREAD_MAX_BYTES}.
   */
  inThread?: boolean;
}

/**
 * Largest input the CLI converts on its own thread when it is the only one (96 MiB). Above it a worker converts
 * while this thread writes (Chrome JSON; ×1.26 at 1.1 GB on two cores), which pays for the worker's start: on two
 * cores the two were even at 78 MB (×0.98–1.01) and the worker and writer ×0.90–0.95 faster at 117 MB; on one
 * core the thread of its own was 8–10% faster at 78 MB (docs/performance/parallel.md).
 */
export const IN_THREAD_MAX_BYTES = 96 * 1024 * 1024;

/**
 * Whether the CLI converts its one input of `bytes` (counted inflated for a gzipped one) on its own thread: at most
 * {@link IN_THREAD_MAX_BYTES}, or any size when this process may run on one CPU only (`cpus`, default
 * `availableParallelism()`, which follows the affinity mask: `taskset -c 0`, a one-CPU container). There a worker
 * would only take turns with the writing thread on that CPU, after a Node bootstrap of its own: converting a 111 MB
 * dump to JSON took 0.33 s instead of 0.36 s (median of 7 alternating runs each, `taskset -c 1`, session 21).
 */
export function convertsInThread(bytes: number, cpus: number = defaultJobs()): boolean {
  return cpus <= 1 || bytes <= IN_THREAD_MAX_BYTES;
}

/** A task running on a worker, as {@link WorkerPool.active} reports it. */
export interface ActiveTask {
  /** Input path. */
  file: string;
  /** Input bytes read in the current pass, and the file size. */
  done: number;
  total: number;
  /** 1 index, 3 NVTX projection, 2 emit (0 before the first window). */
  pass: number;
}

interface Slot {
  worker: Worker | null;
  remote: Comlink.Remote<WorkerApi> | null;
  cells: BigInt64Array;
  /** Rejects the running call when the worker dies (set per task: a promise that lives as long as the worker would
   * keep every task's result that raced against it). */
  onDeath: ((e: Error) => void) | null;
  dead: boolean;
  task: { file: string; seq: number } | null;
  /** Rejects the running call when the pool is closed under it. */
  cancel: ((e: Error) => void) | null;
  /** In-thread: settles when the running task has stopped (close() waits for it). */
  running: Promise<void> | null;
}

/** The most workers a pool may have (`jobs`, the CLI's `--jobs`). */
export const MAX_JOBS = 1024;

/** Default pool size: one worker per core, at most {@link MAX_JOBS}. */
export function defaultJobs(): number {
  return Math.min(MAX_JOBS, Math.max(1, typeof availableParallelism === "function" ? availableParallelism() : cpus().length));
}

/**
 * `jobs` as a pool's size: its whole part, which must be 1 to {@link MAX_JOBS} (USAGE otherwise). Bounded because
 * every slot (its progress cells in shared memory) is made up front: 2^32 threw from the slots' array and ten
 * million took gigabytes before the first task.
 */
function checkedJobs(jobs: number): number {
  // A whole number of type number: 2.5 was floored, "4" converted (docs/node-api.md: anything else is USAGE).
  if (typeof jobs !== "number" || !Number.isInteger(jobs) || jobs < 1 || jobs > MAX_JOBS) {
    throw new RawtraceError("USAGE", `jobs must be a whole number from 1 to ${MAX_JOBS}, not ${shownValue(jobs)}`);
  }
  return jobs;
}

/**
 * Workers of a pool made for `inputs` inputs (the CLI's `--jobs`, the API's `jobs` without a `pool`): `jobs`
 * (default one per core), at most one per input — except one Chrome JSON input (`splittable`), which N − 1 workers
 * convert while the main thread writes it (src/node/split.ts): `jobs` as given, by default two on two cores or more.
 */
export function poolJobs(inputs: number, jobs?: number, splittable = false): number {
  // A `jobs` out of range is the caller's mistake, refused as the pool's constructor (and the CLI's --jobs) refuse
  // it, not clamped to MAX_JOBS silently.
  if (jobs !== undefined) jobs = checkedJobs(jobs);
  const cap = splittable && inputs === 1 ? (jobs === undefined ? 2 : Infinity) : Math.max(1, inputs);
  // At most MAX_JOBS: more than 1,024 inputs with no `jobs` would ask for one worker each.
  return Math.min(jobs ?? defaultJobs(), cap, MAX_JOBS);
}

/**
 * Rebuilds a worker's error on this side as a RawtraceError: its name, message, and the file and offset it is about
 * (the worker sends them: src/node/worker_errors.ts).
 */
function rethrow(e: unknown, file: string): never {
  if (e instanceof RawtraceError) {
    if (e.file !== undefined) throw e;
    // The worker died under this task ("worker stopped: …"): say which file it was working on.
    throw new RawtraceError(e.code, `${file}: ${e.message}`, file, e.offset);
  }
  const err = e as Error & { file?: unknown; offset?: unknown };
  const name = err?.name && /^[A-Z_]+$/.test(err.name) ? err.name : "INTERNAL";
  const message = err?.message ?? String(e);
  const about = typeof err?.file === "string" ? err.file : file;
  const offset = typeof err?.offset === "number" ? err.offset : undefined;
  throw new RawtraceError(name, message.includes(basename(about)) ? message : `${about}: ${message}`, about, offset);
}

/** A pool of core workers. Create it, run tasks, then `await pool.close()`. */
export class WorkerPool {
  /** Number of workers at most. */
  readonly size: number;
  private readonly slots: Slot[];
  private readonly free: number[];
  private readonly waiting: Array<(slot: number) => void> = [];
  private seq = 0;
  private closed = false;
  /** The first close()'s work: a second call waits for it too (its workers stopped, its tasks rejected). */
  private closing: Promise<void> | null = null;
  private readonly inThread: boolean;

  constructor(opts: PoolOptions = {}) {
    needOptions("WorkerPool", opts);
    const n = opts.inThread ? 1 : opts.jobs === undefined ? defaultJobs() : checkedJobs(opts.jobs);
    this.size = n;
    this.inThread = !!opts.inThread;
    this.slots = Array.from({ length: n }, () => ({
      worker: null, remote: null, onDeath: null, dead: false, task: null, cancel: null, running: null,
      cells: new BigInt64Array(new SharedArrayBuffer(PROGRESS_SLOTS * 8)),
    }));
    this.free = this.slots.map((_, i) => n - 1 - i);
  }

  /**
   * Converts one file on a worker (the worker reads `job.input` and writes the output). Without `job.fd`, this
   * thread opens `job.output` as convertFile does (exclusive temporary and lock; an existing file is EXISTS unless
   * `job.force`) and
   * publishes it when the worker is done, or removes it when the task fails or the pool is closed under it: a
   * worker that is terminated cannot clean up after itself.
   */
  async convert(job: ConvertJob): Promise<ConvertSummary> {
    needOptions("WorkerPool.convert", job);
    needPath("WorkerPool.convert", "input", job?.input);
    if (job.fd === undefined) needPath("WorkerPool.convert", "output", job.output);
    if (job.fd !== undefined) return this.run(job.input, (r, seq) => r.convert(job, seq));
    checkOutputOptions(job, job.output, "WorkerPool.convert");
    // An XSpace file makes its folder, as convertFile does (before 2026-12-03: IO "folder does not exist" here).
    if (job.format === "xspace" && !isStreamOutput(job.output)) makeDir(dirname(resolve(job.output)), "the output's folder");
    const file = OutputFile.open(job.output, { force: job.force, inputs: [job.input] });
    try {
      const r = await this.run(job.input, (remote, seq) => remote.convert({ ...job, fd: file.fd }, seq));
      file.commit();
      return r;
    } catch (e) {
      file.abort();
      throw e;
    }
  }

  /** Runs one part of a split conversion (src/node/split.ts); the last part's port is transferred to its worker. */
  convertPart(job: ConvertJob, part: PartJob): Promise<PartSummary> {
    return this.run(job.input, (r, seq) => r.part(job, part.port ? Comlink.transfer(part, [part.port]) : part, seq));
  }

  /**
   * Pass 1 of one file on a worker: header, devices, records, time span, clock anchors, warnings, and how many range
   * names mark steps by `opts.steps` (FileInfo.stepNames).
   */
  info(input: string, opts: { steps?: string | RegExp } = {}): Promise<FileInfo> {
    needPath("WorkerPool.info", "input", input);
    return this.run(input, (r, seq) => r.info(input, seq, opts.steps));
  }

  /** Statistics of one file, computed on a worker. */
  stats(input: string, opts: { allApi?: boolean } = {}): Promise<{ stats: TraceStats; info: FileInfo; seconds: number }> {
    needPath("WorkerPool.stats", "input", input);
    needOptions("WorkerPool.stats", opts);
    return this.run(input, (r, seq) => r.stats(input, !!opts.allApi, seq));
  }

  /** Tasks running now, with the progress their workers last stored. */
  active(): ActiveTask[] {
    const out: ActiveTask[] = [];
    for (const s of this.slots) {
      if (!s.task) continue;
      const cur = Atomics.load(s.cells, 0) === BigInt(s.task.seq);
      out.push({
        file: s.task.file,
        done: cur ? Number(Atomics.load(s.cells, 1)) : 0,
        total: cur ? Number(Atomics.load(s.cells, 2)) : 0,
        pass: cur ? Number(Atomics.load(s.cells, 3)) : 0,
      });
    }
    return out;
  }

  /**
   * Stops every worker (releaseProxy + terminate). Tasks still queued and tasks running are rejected with
   * API_MISUSE (their outputs removed); the pool cannot be reused.
   */
  close(): Promise<void> {
    this.closing ??= this.closeNow();
    return this.closing;
  }

  private async closeNow(): Promise<void> {
    this.closed = true;
    for (const w of this.waiting.splice(0)) w(-1);
    const running = this.slots.filter((s) => s.task !== null).map((s) => ({ s, file: s.task!.file }));
    const onThisThread = this.slots.map((s) => s.running);
    await Promise.all(this.slots.map((s) => this.stop(s)));
    // A task on this thread stops at its next input window (API_MISUSE) or ends: wait, so that nothing is written
    // after its caller has removed the output.
    await Promise.all(onThisThread);
    // Rejected once their workers have stopped: the caller may then close the descriptors those workers wrote to.
    for (const { s, file } of running) {
      s.cancel?.(new RawtraceError("API_MISUSE", `the worker pool was closed while a worker was on ${file}`, file));
      s.task = null; // active() lists nothing once the pool is closed
    }
  }

  /**
   * `await using pool = new WorkerPool()` (TypeScript 5.2+ explicit resource management): closes the pool. The
   * well-known symbol itself, so the declaration (dist/types) keeps the method and `await using` type-checks.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private async stop(s: Slot): Promise<void> {
    const w = s.worker;
    const r = s.remote;
    s.worker = null;
    s.remote = null;
    s.onDeath = null;
    if (r && w) r[Comlink.releaseProxy]();
    if (w) await stopWorker(w);
  }

  private start(s: Slot): void {
    if (this.inThread) {
      // The worker's own API, called directly: the same code and core as a worker's, on this thread.
      s.remote = workerApi(s.cells, { cancelled: () => this.closed }) as unknown as Comlink.Remote<WorkerApi>;
      return;
    }
    const w = startWorker(workerEntry(import.meta.url, "worker"), { workerData: { progress: s.cells.buffer } });
    s.worker = w;
    s.dead = false;
    s.remote = Comlink.wrap<WorkerApi>(nodeEndpoint(w));
    const dead = (why: string) => {
      if (s.worker !== w || s.dead) return; // stopped on purpose, or said already
      s.dead = true;
      s.onDeath?.(new RawtraceError("INTERNAL", `worker stopped: ${why}`));
    };
    w.once("error", (e) => dead(e.message));
    w.once("exit", (code) => dead(`exit code ${code}`));
  }

  /** A free worker slot for a task on `file` (named by the error when the pool is closed before the task runs). */
  private acquire(file: string): Promise<number> {
    if (this.closed) return Promise.reject(new RawtraceError("API_MISUSE", `${file}: the worker pool is closed`, file));
    const i = this.free.pop();
    if (i !== undefined) return Promise.resolve(i);
    return new Promise((resolve, reject) => {
      this.waiting.push((slot) => (slot < 0 ? reject(new RawtraceError("API_MISUSE", `${file}: the worker pool was closed before its turn`, file)) : resolve(slot)));
    });
  }

  private release(i: number): void {
    const next = this.waiting.shift();
    if (next) next(i);
    else this.free.push(i);
  }

  /** Runs `fn` on a free worker (queued until one is free); errors come back as RawtraceError. */
  private async run<T>(file: string, fn: (remote: Comlink.Remote<WorkerApi>, seq: number) => Promise<T>): Promise<T> {
    const i = await this.acquire(file);
    // Closed between the slot being handed over and this task resuming: start no worker after close().
    if (this.closed) {
      this.release(i);
      throw new RawtraceError("API_MISUSE", `${file}: the worker pool was closed`, file);
    }
    const s = this.slots[i];
    const seq = ++this.seq;
    s.task = { file, seq };
    const cancelled = new Promise<never>((_, reject) => (s.cancel = reject));
    cancelled.catch(() => {}); // observed by the race below
    let died: Promise<never> | null = null;
    try {
      // A worker that died while idle is replaced first; then this task's own death watch (stop() clears it).
      if (s.dead) await this.stop(s);
      died = new Promise<never>((_, reject) => (s.onDeath = reject));
      died.catch(() => {});
      if (!s.remote) this.start(s);
      // Busy workers keep the process alive; idle ones do not (a forgotten close() cannot hang the process).
      s.worker?.ref();
      const call = fn(s.remote!, seq) as Promise<T>;
      if (this.inThread) {
        // This thread runs the task: close() cannot stop it from outside. It stops at its next input window once
        // the pool is closed, close() waits for that, and a task that ends after close() fails all the same.
        s.running = call.then(() => {}, () => {});
        const r = await call;
        if (this.closed) throw new RawtraceError("API_MISUSE", `the worker pool was closed while it was on ${file}`, file);
        return r;
      }
      return await Promise.race([call, died!, cancelled]);
    } catch (e) {
      return rethrow(e, file);
    } finally {
      // A worker that died is replaced at its next task; one whose call failed normally is kept.
      if (s.dead) await this.stop(s);
      else s.worker?.unref();
      s.task = null;
      s.cancel = null;
      s.onDeath = null;
      s.running = null;
      this.release(i);
    }
  }
}
