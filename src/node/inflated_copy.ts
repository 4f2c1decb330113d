/**
 * The decompressed bytes of a gzip input's index pass, kept for the same conversion's later passes in an unnamed
 * temporary file: each later pass then reads them back (the page cache's copy) instead of inflating the file again.
 * Inflating the 1e6-record bench dump (78 MB) took 0.27–0.41 s per pass here; reading the copy back takes 3–5 ms.
 * The copy stays within a budget of its folder's free space — an eighth of it, so that the output (Chrome JSON is
 * about 3.6 times the dump) and the copies of other conversions running beside it still find room when they share
 * the file system; 256 MiB at most on a tmpfs, whose pages are memory — and is given up past it, or on any write
 * error: the later passes then inflate the file as before.
 */
import { closeSync, readSync, statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTemp, writeAll } from "./output.js";
import { removeOwned } from "./owned.js";

/** statfs's f_type of a tmpfs (linux/magic.h TMPFS_MAGIC): its files are held in memory. */
const TMPFS_MAGIC = 0x01021994;
/** Most bytes kept on a tmpfs (memory, as much as the copy's size). */
const TMPFS_BUDGET = 256 << 20;

/** A reader over the kept bytes, as ByteSource.open returns. */
export interface CopyReader {
  read(dst: Uint8Array): Promise<number>;
  close(): Promise<void>;
}

/**
 * One pass's decompressed bytes, appended as the pass gives them ({@link append}), readable once the pass ended
 * whole ({@link finish}). Owns its descriptor: {@link close} releases it (the file has no name from its creation).
 */
export class InflatedCopy {
  private size = 0;
  private done = false;

  private constructor(private fd: number, private readonly budget: number) {}

  /**
   * A new empty copy in folder `dir` (the system's temporary folder), or null when none can be made there (no room,
   * a folder that cannot be written): the caller inflates every pass then. `budget`: most bytes kept (default: an
   * eighth of the folder's free space, 256 MiB at most on a tmpfs).
   */
  static start(dir = tmpdir(), budget?: number): InflatedCopy | null {
    if (budget === undefined) {
      try {
        const fs = statfsSync(dir);
        budget = Math.floor((fs.bavail * fs.bsize) / 8);
        if (fs.type === TMPFS_MAGIC) budget = Math.min(budget, TMPFS_BUDGET);
      } catch {
        return null;
      }
      if (budget < 1 << 20) return null;
    }
    try {
      const t = createTemp(join(dir, "rawtrace-inflated"), "copy", true);
      removeOwned(t.path); // unnamed at once: the copy goes with the descriptor, also on SIGKILL
      return new InflatedCopy(t.fd, budget);
    } catch {
      return null;
    }
  }

  /** Whether every byte of the pass is kept: later passes may read it. */
  get complete(): boolean {
    return this.done && this.fd >= 0;
  }

  /**
   * Keeps `b` (the next bytes the pass gave; only read). Returns false, and gives the copy up, when it would outgrow
   * its budget or the write fails (a full disk): the caller drops it.
   */
  append(b: Uint8Array): boolean {
    if (this.fd < 0 || this.done) return false;
    if (this.size + b.length > this.budget) {
      this.close();
      return false;
    }
    try {
      writeAll(this.fd, b, "the temporary copy of a gzip input's bytes");
    } catch {
      this.close();
      return false;
    }
    this.size += b.length;
    return true;
  }

  /** The pass gave every byte: the copy is complete. */
  finish(): void {
    if (this.fd >= 0) this.done = true;
  }

  /** A reader of the kept bytes from the first (positional reads: several may read one after another). */
  reader(): CopyReader {
    let pos = 0;
    return {
      read: async (dst: Uint8Array) => {
        if (this.fd < 0) throw new Error("the temporary copy of a gzip input's bytes was released");
        const n = readSync(this.fd, dst, 0, Math.min(dst.length, this.size - pos), pos);
        pos += n;
        return n;
      },
      close: async () => {},
    };
  }

  /** Releases the copy (its bytes go with the descriptor). */
  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
    this.done = false;
  }
}
