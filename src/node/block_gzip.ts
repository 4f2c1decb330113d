/**
 * gzip in parallel blocks: the byte stream is cut into fixed-size blocks, each compressed on its own as one gzip
 * member on libuv's thread pool (node:zlib's async `gzip`), and the members are written in order. Concatenated
 * members are one valid gzip file (RFC 1952 §2.2) that gunzip, Python's `gzip` and Node's `zlib` read as the
 * whole stream. Block boundaries depend only on the byte count, never on timing, so the output is the same bytes
 * on every run. The cost against one stream: each block starts with an empty dictionary (the first 32 KiB of a
 * block find no earlier matches) plus 18 bytes of member header and trailer; docs/performance/gzip.md has the figures.
 *
 * Level 0 is rawtrace's own encoder (assembly/deflate, src/node/fast_gzip.ts) in a pool of worker threads
 * (src/node/gzip_pool.ts), the default: faster than zlib's level 1 on Chrome JSON and a little smaller. Levels 1–9
 * are zlib's, on libuv's thread pool.
 */
import { gzip, type ZlibOptions } from "node:zlib";
import { availableParallelism } from "node:os";
import { sharedGzipPool } from "./gzip_pool.js";
import { RawtraceError, shownValue } from "../core/codes.js";

/**
 * The gzip level rawtrace gzips Chrome JSON at unless told otherwise (`--gzip-level`): 0, its own encoder, faster
 * than zlib's level 1 and a little smaller; chosen by measurement, docs/performance/gzip.md.
 */
export const DEFAULT_GZIP_LEVEL = 0;

/** Whether an output named `path` is gzipped by its name: it ends in `.gz`, in any case (`x.JSON.GZ` too). */
export function gzipByName(path: string | undefined): boolean {
  return path !== undefined && /\.gz$/i.test(path);
}

/**
 * Checks a gzip level: 0 (rawtrace's own encoder, the fastest) or a zlib level from 1 (fastest) to 9 (smallest);
 * returns it, or throws USAGE. The conversions check it before they open any output, so a wrong level leaves no
 * temporary file or lock behind.
 */
export function checkGzipLevel(level: number): number {
  if (typeof level !== "number" || !Number.isInteger(level) || level < 0 || level > 9) {
    throw new RawtraceError("USAGE", `gzip level must be a whole number from 0 to 9, not ${shownValue(level)}`);
  }
  return level;
}

/** Options of {@link BlockGzip}. */
export interface BlockGzipOptions {
  /** Uncompressed bytes per gzip member (default 1 MiB). */
  blockBytes?: number;
  /** 0 (rawtrace's encoder) or zlib level 1–9 (default {@link DEFAULT_GZIP_LEVEL}). */
  level?: number;
  /** Blocks being compressed at once before {@link BlockGzip.write} asks for a drain (default: cores, at least 2). */
  inFlight?: number;
}

interface Pending {
  done: boolean;
  out?: Buffer;
}

/** A gzip writer whose blocks compress in parallel; `out` receives the compressed members, in order. */
export class BlockGzip {
  private readonly blockBytes: number;
  private readonly opts: ZlibOptions;
  private readonly own: boolean;
  private readonly limit: number;
  private block: Buffer;
  private fill = 0;
  private started = false;
  private readonly queue: Pending[] = [];
  private failed: Error | null = null;
  private wake: (() => void) | null = null;
  private destroyed = false;

  constructor(private readonly out: (b: Buffer) => void, o: BlockGzipOptions = {}) {
    this.blockBytes = o.blockBytes ?? 1 << 20;
    if (!Number.isInteger(this.blockBytes) || this.blockBytes < 1) throw new RangeError(`blockBytes ${this.blockBytes}`);
    // An output buffer that holds a whole member (deflate's worst case is the input plus 5 bytes per 16 KiB block,
    // plus the header and trailer): each block is then one job on the thread pool. With zlib's default 16 KiB, a
    // block needs a round trip through the converting thread's event loop per 16 KiB of output, and the pool
    // waits for that thread between them.
    const level = checkGzipLevel(o.level ?? DEFAULT_GZIP_LEVEL);
    this.own = level === 0;
    this.opts = { level, chunkSize: this.blockBytes + (this.blockBytes >> 10) + 1024 };
    this.limit = Math.max(1, o.inFlight ?? Math.max(2, availableParallelism()));
    // Level 0's workers start now, while the producer works on what comes before its first bytes (a conversion's
    // index pass), not when the first blocks are waiting for them: as many as blocks may be in flight, at most 2.
    if (this.own) sharedGzipPool().warm(Math.min(2, this.limit));
    this.block = this.newBlock();
  }

  /** A block buffer; for level 0 one that owns its whole ArrayBuffer (moved to a worker thread and given back). */
  private newBlock(): Buffer {
    return this.own ? Buffer.from(sharedGzipPool().buffer(this.blockBytes)) : Buffer.allocUnsafe(this.blockBytes);
  }

  /** Blocks submitted and not yet written. */
  get pending(): number {
    return this.queue.length;
  }

  /** Copies `b` in; returns false when as many blocks as allowed are being compressed (call {@link drain}). */
  write(b: Uint8Array): boolean {
    if (this.failed) throw this.failed;
    let at = 0;
    while (at < b.length) {
      const n = Math.min(b.length - at, this.blockBytes - this.fill);
      this.block.set(b.subarray(at, at + n), this.fill);
      this.fill += n;
      at += n;
      if (this.fill === this.blockBytes) this.submit();
    }
    return this.queue.length < this.limit;
  }

  /** Waits until fewer than the allowed blocks are being compressed; throws the first error. */
  async drain(): Promise<void> {
    while (!this.failed && this.queue.length >= this.limit) await new Promise<void>((res) => (this.wake = res));
    if (this.failed) throw this.failed;
  }

  /** Compresses what is left and waits until every member is written; throws the first error. */
  async end(): Promise<void> {
    if (this.failed) throw this.failed;
    if (this.fill > 0 || !this.started) this.submit(); // an empty stream is still one (empty) gzip member
    while (!this.failed && this.queue.length > 0) await new Promise<void>((res) => (this.wake = res));
    if (this.failed) throw this.failed;
  }

  /** Drops what is not written yet (after a failure elsewhere). */
  destroy(): void {
    this.destroyed = true;
    this.queue.length = 0;
    this.wake?.();
  }

  private submit(): void {
    const block = this.block;
    const length = this.fill;
    this.block = this.newBlock();
    this.fill = 0;
    this.started = true;
    const p: Pending = { done: false };
    this.queue.push(p);
    const done = (err: Error | null, out?: Buffer) => {
      if (this.destroyed) return;
      if (err) this.failed ??= err;
      p.done = true;
      p.out = out;
      this.flush();
    };
    if (this.own) {
      sharedGzipPool().gzip(block.buffer as ArrayBuffer, length).then((out) => done(null, out), (e: Error) => done(e));
    } else {
      gzip(length === this.blockBytes ? block : block.subarray(0, length), this.opts, done);
    }
  }

  /** Writes the finished members at the head of the queue, in order. */
  private flush(): void {
    while (!this.failed && this.queue.length > 0 && this.queue[0].done) {
      const p = this.queue.shift()!;
      try {
        this.out(p.out!);
      } catch (e) {
        this.failed = e as Error;
      }
    }
    const w = this.wake;
    this.wake = null;
    w?.();
  }
}
