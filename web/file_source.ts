/**
 * A ByteSource over a browser File (or Blob): open() reads `File.stream()` or the given reader (the viewer's: a
 * thread of its own, web/slice_reader.ts), gunzipped member by member by rawtrace's own inflater when it is gzip
 * (src/core/gunzip.ts: what the CLI reads of a .gz, several members and damage included), and
 * hands the engine windows of it, so a multi-GB dump is never one string or one ArrayBuffer. With `keep` the file is
 * read once and later passes replay what was kept: packed by the reader thread (`keeper`: 3× smaller, unpacked on
 * that thread) or, without one, the chunks themselves in memory here. Progress follows the bytes of the file itself
 * (compressed for .gz).
 */
import type { ByteReader, ByteSource, FileInfo } from "../src/core/engine.js";
import type { Warning } from "../src/core/codes.js";
import { GzipStartError, addGzipDamage, gunzip, gzipDamageFor, type GunzipDamage } from "../src/core/gunzip.js";
import { GZIP_HEAD_BYTES, gzipMagicWarning, gzipStart, repairedGzip, repairedGzipNote } from "../src/core/gzip_magic.js";
export { gzipDamageFor, addGzipDamage } from "../src/core/gunzip.js";
import { freeNow, type KeepingReader } from "./slice_reader.js";

/** Thrown by a read after {@link FileByteSource.cancel}; crosses comlink with this name. */
export class CancelledError extends Error {
  override name = "CANCELLED";
  constructor() {
    super("cancelled");
  }
}

/**
 * Whether the file is gzip by its first bytes, whatever its name says (src/core/gzip_magic.ts gzipStart: gzip's magic
 * 1f 8b, or a gzip header one of whose first three bytes is damaged): {@link FileSourceOptions}' `gzip` and
 * `gzipMagicDamaged` for it.
 */
export async function gzipOptions(file: Blob): Promise<Pick<FileSourceOptions, "gzip" | "gzipMagicDamaged">> {
  const head = new Uint8Array(await file.slice(0, GZIP_HEAD_BYTES).arrayBuffer());
  const start = gzipStart(head);
  return start === "damaged" ? { gzip: true, gzipMagicDamaged: head } : { gzip: start === "gzip" };
}

/** Whether a file name says gzip. */
export function isGzipName(name: string): boolean {
  return /\.gz$/i.test(name);
}

export interface FileByteSource extends ByteSource {
  /** Makes the next read throw {@link CancelledError}. */
  cancel(): void;
  /** Bytes of the file read by the current pass (compressed bytes for .gz). */
  readonly fileBytesRead: number;
  /** How many times the file itself was read from its start (a kept file: once, whatever the passes). */
  readonly fileReads: number;
  /** Bytes kept for later passes now (packed bytes with a keeper, as of its last stream's end). */
  readonly keptBytes: number;
  /** Lets go of what is kept (ends the keeper's thread). The source cannot replay after this. */
  dispose(): void;
  /**
   * A .gz file damaged after giving bytes (a bad trailer, bytes after a member that start none and are not only
   * zeros at the end, a damaged block): where (compressed byte offset), how many bytes of dump it gave in all (what
   * was converted, members after the damage included) and what was wrong. The
   * page reports it as the CLI's GZIP_DAMAGED ({@link gzipDamageFor}); `truncated`: the file simply ends inside a
   * member, which only a cut in its trailer leaves unseen by the core's TRUNCATED.
   */
  readonly gzipDamage?: GunzipDamage;
  /** The file's first bytes when one of gzip's first three is damaged: read repaired, said as GZIP_MAGIC_DAMAGED. */
  readonly gzipMagicDamaged?: Uint8Array;
}

/** Bytes per block of kept file bytes (each block is freed as one piece). */
const KEEP_BLOCK = 32 << 20;

/**
 * Gives a kept block's memory back now: ArrayBuffer.prototype.transfer to length 0 detaches it and frees its
 * bytes. The blocks are allocated here (JS-owned), not the stream's own chunks: those are owned by the browser's
 * side of the stream and stay resident until the garbage collector runs, which a worker busy in WebAssembly
 * hardly lets happen (measured in Chromium 156: a gigabyte of released stream chunks stayed resident), and
 * `transfer(0)` does not free a buffer that was transferred in from another thread either.
 */
function release(c: Uint8Array): void {
  freeNow(c.buffer as ArrayBuffer);
}

/**
 * Resolves after the event loop has run the tasks already queued (a MessageChannel round trip: setTimeout(0) is
 * clamped to 4 ms when nested); immediately where there is no MessageChannel.
 */
function nextTask(): Promise<void> {
  if (typeof MessageChannel === "undefined") return Promise.resolve();
  return new Promise((ok) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => {
      ch.port1.close();
      ok();
    };
    ch.port2.postMessage(0);
  });
}

/** Options of {@link fileByteSource}. */
export interface FileSourceOptions {
  /** The file is gzip-compressed (the caller looked at its first bytes: {@link gzipOptions}); default: by name. */
  gzip?: boolean;
  /**
   * With `gzip`: the file's first bytes (at least 3), one of gzip's 1f 8b 08 among them damaged ({@link gzipOptions}):
   * the file is read with them repaired, and said (GZIP_MAGIC_DAMAGED).
   */
  gzipMagicDamaged?: Uint8Array;
  /**
   * Read the file once: the first open() keeps the file's bytes (as read: compressed for .gz) in memory, chunk by
   * chunk, and later opens replay them instead of reading the file again; the emit pass (open(2), a conversion's
   * last read) lets each chunk go as soon as it is handed over, so the kept bytes shrink while the timeline grows.
   */
  keep?: boolean;
  /** Bytes per block of kept bytes (default 32 MiB; tests use small ones). */
  blockBytes?: number;
  /**
   * Reads the file instead of `File.stream()` (null: fall back to it): the viewer's reader thread
   * (web/slice_reader.ts `readerThreadStream`); `keep` says whether this read is kept. Kept chunks are copied into
   * blocks either way: a buffer that arrived from another thread is not freed by `transfer(0)` (Chromium 156: 1.05
   * GiB of transferred slices stayed resident after it; copied into blocks and dropped, they were collected).
   */
  read?: (file: Blob, keep: boolean) => ReadableStream<Uint8Array> | null;
  /**
   * With `keep`: the reader thread that keeps the file for the later passes (web/slice_reader.ts
   * `keepingReaderThread`), used instead of `read` and of keeping the chunks here; {@link FileByteSource.dispose}
   * closes it.
   */
  keeper?: KeepingReader | null;
  /** The compiled gzip reader (build/inflate.wasm), asked for on the first read of a gzip file. */
  inflate?: () => Promise<WebAssembly.Module>;
}

/** The chunks of `s` as an async iterable; ending the iteration early cancels the stream. */
async function* chunksOf(s: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const r = s.getReader();
  let done = false;
  try {
    for (;;) {
      const c = await r.read();
      if (c.done) {
        done = true;
        return;
      }
      yield c.value;
    }
  } finally {
    if (!done) await r.cancel().catch(() => undefined);
  }
}

/** A re-openable source over `file`. */
export function fileByteSource(file: Blob, name: string, opts: FileSourceOptions = {}): FileByteSource {
  const gz = opts.gzip ?? isGzipName(name);
  let cancelled = false;
  let fileBytesRead = 0;
  let fileReads = 0;
  // The file's bytes kept by the first read (opts.keep), in blocks; complete once that read reached the end.
  let kept: (Uint8Array | null)[] | null = null;
  let keptComplete = false;
  let gzipDamage: GunzipDamage | undefined;
  if (gz && !opts.inflate) throw new Error(`${name}: a gzip file needs the inflate module (FileSourceOptions.inflate)`);

  /** Appends `v` to the kept blocks. */
  let keptBytes = 0;
  const block = opts.blockBytes ?? KEEP_BLOCK;
  const keepBytes = (blocks: (Uint8Array | null)[], v: Uint8Array): void => {
    while (v.length > 0) {
      let last = blocks[blocks.length - 1];
      if (!last || last.length === last.buffer.byteLength) {
        // Sized by what the file has left, so a small file keeps no more than its size.
        const left = file.size - keptBytes;
        last = new Uint8Array(new ArrayBuffer(left >= v.length ? Math.min(block, left) : block), 0, 0);
        blocks.push(last);
      }
      const k = Math.min(v.length, last.buffer.byteLength - last.length);
      keptBytes += k;
      const grown = new Uint8Array(last.buffer, 0, last.length + k);
      grown.set(v.subarray(0, k), last.length);
      blocks[blocks.length - 1] = grown;
      v = v.subarray(k);
    }
  };

  /** `s` with its bytes counted as the current pass's file bytes; `each` sees every chunk, `end` runs at its end. */
  const counted = (s: ReadableStream<Uint8Array>, each?: (c: Uint8Array) => void, end?: () => void): ReadableStream<Uint8Array> => {
    const reader = s.getReader();
    return new ReadableStream<Uint8Array>({
      async pull(ctl) {
        const r = await reader.read();
        if (r.done) {
          end?.();
          ctl.close();
          return;
        }
        fileBytesRead += r.value.byteLength;
        each?.(r.value);
        ctl.enqueue(r.value);
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    }, { highWaterMark: 0 });
  };

  /** The file's own bytes (compressed for .gz), counted; from memory when kept, else from the file. */
  const rawStream = (pass: number | undefined): ReadableStream<Uint8Array> => {
    const keeper = opts.keep ? opts.keeper : null;
    if (keeper) {
      // The reader thread keeps the file: replay from it once it has all of it (the emit pass releases it).
      if (keeper.complete) return counted(keeper.replay(pass === 2));
      fileReads++;
      return counted(keeper.read());
    }
    if (kept && keptComplete) {
      const chunks = kept;
      const drop = pass === 2;
      let k = 0;
      return new ReadableStream<Uint8Array>({
        async pull(ctl) {
          if (k >= chunks.length) {
            ctl.close();
            return;
          }
          // Replaying memory resolves every read as a microtask: let the event loop run once per block, so that a
          // cancel (a message to this worker) lands while the later passes run, not after them.
          await nextTask();
          const c = chunks[k];
          if (!c) throw new Error(`${name}: the file's bytes were already released`);
          if (drop) chunks[k] = null;
          k++;
          fileBytesRead += c.byteLength;
          ctl.enqueue(c);
        },
      }, { highWaterMark: 0 });
    }
    fileReads++;
    const keep = opts.keep ? (kept = []) : null;
    keptComplete = false;
    keptBytes = 0;
    const read = opts.read?.(file, !!keep) ?? file.stream();
    if (!keep) return counted(read);
    return counted(read, (c) => keepBytes(keep, c), () => (keptComplete = true));
  };

  /**
   * A reader of the decompressed bytes of `raw`. Damage is kept for the page to say (GZIP_DAMAGED); a file that simply
   * ends inside a member is said only where the core does not report the truncated dump (gzipDamageFor), as the CLI.
   */
  const gunzipReader = (raw: ReadableStream<Uint8Array>) => {
    const out = (async function* () {
      let given = 0;
      let first: GunzipDamage | undefined;
      const input = opts.gzipMagicDamaged ? repairedGzip(chunksOf(raw)) : chunksOf(raw);
      for await (const c of gunzip(await opts.inflate!(), input, (d) => {
        first = d;
        gzipDamage ??= { ...d };
      })) {
        given += c.length;
        yield c;
      }
      // Damaged or cut before it gave a byte: nothing to convert (the read fails, naming where, as the CLI).
      if (first && given === 0) {
        throw new GzipStartError(first.compressedAt, first.message + (opts.gzipMagicDamaged ? repairedGzipNote(opts.gzipMagicDamaged) : ""));
      }
      // What was converted: every byte given, also those of the members after the damage (a bad trailer, bytes
      // skipped between members), as the CLI says; not the zeros given in place of a damaged member's lost bytes.
      if (gzipDamage) {
        const filler = first?.filler ?? 0;
        gzipDamage.filler = filler;
        if (first?.overrun) gzipDamage.overrun = first.overrun;
        // Set after the damage was handed over when a later damage found it (zeros skipped between members first).
        if (first?.verifiedTo !== undefined) gzipDamage.verifiedTo ??= first.verifiedTo;
        gzipDamage.decompressed = given - filler;
      }
    })();
    return {
      read: async (): Promise<ReadableStreamReadResult<Uint8Array>> => {
        const r = await out.next();
        return r.done ? { done: true, value: undefined } : { done: false, value: r.value };
      },
      cancel: async (): Promise<void> => {
        await out.return(undefined);
      },
    };
  };

  return {
    name: gz ? name.replace(/\.gz$/i, "") : name,
    // Progress is reported against the file's own size; for .gz the engine's byte count is uncompressed.
    size: gz ? undefined : file.size,
    get fileBytesRead() {
      return fileBytesRead;
    },
    get fileReads() {
      return fileReads;
    },
    get gzipDamage() {
      return gzipDamage;
    },
    gzipMagicDamaged: gz ? opts.gzipMagicDamaged : undefined,
    // Where a damaged .gz's bytes stop being the file's own (its first damage's verifiedTo, in bytes of the dump):
    // the core reads no cut buffer chunk past it, as in the CLI.
    unverifiedFrom() {
      return gzipDamage?.verifiedTo;
    },
    // A .gz damaged after its start: said in the output's end too (an exported Chrome JSON's rawtrace.warnings).
    hostWarnings(info: FileInfo) {
      const w = gzipDamageFor(gzipDamage, info.warnings);
      const m = gz && opts.gzipMagicDamaged ? [gzipMagicWarning(opts.gzipMagicDamaged)] : [];
      return w ? [...m, w] : m;
    },
    get keptBytes() {
      if (opts.keep && opts.keeper) return opts.keeper.keptBytes;
      return kept ? kept.reduce((n, c) => n + (c ? c.byteLength : 0), 0) : 0;
    },
    cancel() {
      cancelled = true;
    },
    dispose() {
      opts.keeper?.close();
      kept = null;
      keptComplete = false;
    },
    open(pass?: 1 | 2 | 3): ByteReader {
      fileBytesRead = 0;
      // The emit pass over kept bytes frees each block once copied (not for .gz: the decompressor may still read it).
      const free = pass === 2 && !!kept && keptComplete && !gz;
      // Chunks of a keeping reader go back to it once copied, to carry the next slices (not for .gz: the
      // decompressor may still hold them).
      const keeper = opts.keep && opts.keeper && !gz ? opts.keeper : null;
      const used = (c: Uint8Array) => {
        if (free) release(c);
        else keeper?.giveBack(c);
      };
      const raw = rawStream(pass);
      // Gzip: every member, and what a damaged one still holds (a cut file: what it held, as the CLI).
      const reader = gz ? gunzipReader(raw) : raw.getReader();
      // Read-ahead: the next chunk is always being fetched while the core works on the current window, so file
      // reading (in the browser's I/O thread) overlaps with decoding instead of alternating with it.
      const AHEAD = 4;
      const queue: Promise<ReadableStreamReadResult<Uint8Array>>[] = [];
      let ended = false;
      const refill = () => {
        while (!ended && queue.length < AHEAD) {
          const p = reader.read();
          queue.push(p);
          p.then((r) => {
            if (r.done) ended = true;
          }, () => undefined);
        }
      };
      let pending: Uint8Array | null = null;
      let current: Uint8Array | null = null;
      let done = false;
      return {
        async read(dst: Uint8Array): Promise<number> {
          let n = 0;
          while (n < dst.length) {
            if (cancelled) throw new CancelledError();
            if (!pending || pending.length === 0) {
              if (done) break;
              refill();
              let r: ReadableStreamReadResult<Uint8Array>;
              try {
                r = await queue.shift()!;
              } catch (e) {
                if (!gz || cancelled) throw e;
                // Nothing of it could be read (GzipStartError: at which compressed byte, and why).
                throw new Error(`cannot decompress (damaged gzip): ${(e as Error).message}`);
              }
              if (r.done) {
                done = true;
                break;
              }
              if (current) used(current);
              pending = current = r.value;
              refill();
            }
            const k = Math.min(pending.length, dst.length - n);
            dst.set(pending.subarray(0, k), n);
            pending = pending.subarray(k);
            n += k;
          }
          return n;
        },
        async close() {
          if (current) used(current);
          current = pending = null;
          await reader.cancel().catch(() => undefined);
        },
      };
    },
  };
}

/**
 * Adds the source's own warnings to a conversion's `warnings` in the host's words, as the CLI's withSourceWarnings:
 * GZIP_DAMAGED ({@link addGzipDamage}) and GZIP_MAGIC_DAMAGED (the bytes found), replacing the core's entries for
 * them. Returns `warnings`.
 */
export function addSourceWarnings(warnings: Warning[], src: FileByteSource): Warning[] {
  addGzipDamage(warnings, src.gzipDamage);
  if (src.gzipMagicDamaged) {
    const w = gzipMagicWarning(src.gzipMagicDamaged);
    const i = warnings.findIndex((x) => x.code === w.code);
    if (i < 0) warnings.push(w);
    else warnings[i] = w;
  }
  return warnings;
}
