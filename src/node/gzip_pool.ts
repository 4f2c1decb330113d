/**
 * A small pool of worker threads running rawtrace's gzip encoder (src/node/gzip_worker.ts): {@link GzipPool.gzip}
 * sends a block (its ArrayBuffer is transferred, not copied) to an idle worker, starting one when all are busy and
 * fewer than the pool's size run, or queues it, and resolves with the block's gzip member. A member depends only on its block, so the bytes never depend on which worker or in
 * which order. Idle workers do not keep the process alive; a worker that dies fails its block and every queued
 * one, and the pool is replaced on the next {@link sharedGzipPool}.
 */
import type { Worker } from "node:worker_threads";
import { availableParallelism, cpus } from "node:os";
import { RawtraceError } from "../core/codes.js";
import { startWorker, stopWorker, workerEntry } from "./worker_start.js";
import type { GzipAnswer, GzipRequest } from "./gzip_worker.js";

interface Job {
  seq: number;
  buffer: ArrayBuffer;
  length: number;
  resolve: (member: Buffer) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  job: Job | null;
}

/** Worker threads compressing blocks into gzip members. */
export class GzipPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private readonly threads: number;
  /** Block buffers given back by the workers, for {@link buffer}. */
  private readonly spare: ArrayBuffer[] = [];
  private seq = 0;
  /** Why the pool stopped (a worker died, or {@link close}); null while it works. */
  broken: Error | null = null;

  /** `threads`: the most workers it starts (at least 1), each only when a block finds the others busy. */
  constructor(threads: number) {
    this.threads = Math.max(1, Math.floor(threads));
  }

  /**
   * A buffer of `bytes` for the next block: one a worker gave back when there is one of that size (a fresh 1 MiB
   * buffer costs page faults and zeroing each time), else a new one.
   */
  buffer(bytes: number): ArrayBuffer {
    while (this.spare.length > 0) {
      const b = this.spare.pop()!;
      if (b.byteLength === bytes) return b;
    }
    return new ArrayBuffer(bytes);
  }

  /** Workers started so far. */
  get started(): number {
    return this.slots.length;
  }

  /** Compresses the first `length` bytes of `buffer` (which is transferred: unusable here afterwards) into one member. */
  gzip(buffer: ArrayBuffer, length: number): Promise<Buffer> {
    if (!Number.isInteger(length) || length < 0 || length > buffer.byteLength) {
      return Promise.reject(new RangeError(`gzip block of ${length} bytes in a buffer of ${buffer.byteLength}`));
    }
    if (this.broken) return Promise.reject(this.broken);
    return new Promise<Buffer>((resolve, reject) => {
      this.queue.push({ seq: this.seq++, buffer, length, resolve, reject });
      this.dispatch();
    });
  }

  /**
   * Starts workers until `n` run (at most the pool's size), before any block needs them: a worker takes ≈ 50 ms to
   * start (a thread, its isolate, the encoder's module), which a writer that knows blocks are coming can overlap with
   * work that makes no output yet (the conversion's index pass). Idle workers still let the process exit.
   */
  warm(n: number): void {
    if (this.broken) return;
    while (this.slots.length < Math.min(n, this.threads)) this.slots.push(this.start());
  }

  /** Stops the workers; blocks not yet compressed fail. */
  async close(): Promise<void> {
    this.fail(new RawtraceError("INTERNAL", "gzip pool closed"));
    await Promise.all(this.slots.map((s) => stopWorker(s.worker)));
  }

  private start(): Slot {
    const worker = startWorker(workerEntry(import.meta.url, "gzip_worker"));
    const slot: Slot = { worker, job: null };
    worker.on("message", (a: GzipAnswer) => {
      const job = slot.job;
      if (!job || job.seq !== a.seq) return;
      slot.job = null;
      worker.unref();
      if (this.spare.length < 2 * this.threads) this.spare.push(a.buffer);
      if (a.member) job.resolve(Buffer.from(a.member));
      else job.reject(new RawtraceError("INTERNAL", `gzip worker: ${a.error}`));
      this.dispatch();
    });
    const died = (why: string) => this.fail(new RawtraceError("INTERNAL", `gzip worker stopped: ${why}`));
    worker.on("error", (e) => died(e.message));
    worker.on("exit", (code) => died(`exit code ${code}`));
    worker.unref(); // after the listeners: adding a "message" listener refs the worker again
    return slot;
  }

  private dispatch(): void {
    const busy = this.slots.every((s) => s.job);
    if (busy && this.queue.length > 0 && this.slots.length < this.threads) this.slots.push(this.start());
    for (const slot of this.slots) {
      if (this.queue.length === 0) return;
      if (slot.job) continue;
      const job = this.queue.shift()!;
      slot.job = job;
      slot.worker.ref(); // a block in flight keeps the process alive until its member is back
      const req: GzipRequest = { seq: job.seq, buffer: job.buffer, length: job.length };
      slot.worker.postMessage(req, [job.buffer]);
    }
  }

  private fail(e: Error): void {
    if (this.broken) return;
    this.broken = e;
    for (const s of this.slots) {
      s.job?.reject(e);
      s.job = null;
      s.worker.unref();
    }
    for (const j of this.queue.splice(0)) j.reject(e);
    if (shared === this) shared = null;
  }
}

let shared: GzipPool | null = null;

/**
 * Most workers of {@link sharedGzipPool}: one per core, at most 4 (as libuv's thread pool that zlib's levels use).
 * Two keep up with one conversion thread here; each pool belongs to one thread, so `batch --jobs N` may start up to
 * N times this many, each only when its blocks need it.
 */
export function gzipThreads(): number {
  const cores = typeof availableParallelism === "function" ? availableParallelism() : cpus().length;
  return Math.max(1, Math.min(4, cores));
}

/** The pool this thread's gzip writers share, made on first use ({@link gzipThreads} workers at most). */
export function sharedGzipPool(): GzipPool {
  if (!shared || shared.broken) shared = new GzipPool(gzipThreads());
  return shared;
}
