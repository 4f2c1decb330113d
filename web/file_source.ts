/**
 * A ByteSource over a browser File (or Blob): each open() starts a new `File.stream()` (gunzipped through
 * DecompressionStream when the name ends in .gz) and hands the engine windows of it, so a multi-GB dump is never
 * one string or one ArrayBuffer. Progress follows the bytes read from the file itself (compressed for .gz).
 */
import type { ByteReader, ByteSource } from "../src/core/engine.js";

/** Thrown by a read after {@link FileByteSource.cancel}; crosses comlink with this name. */
export class CancelledError extends Error {
  override name = "CANCELLED";
  constructor() {
    super("cancelled");
  }
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
}

/** A re-openable source over `file`. */
export function fileByteSource(file: Blob, name: string): FileByteSource {
  const gz = isGzipName(name);
  let cancelled = false;
  let fileBytesRead = 0;
  return {
    name: gz ? name.replace(/\.gz$/i, "") : name,
    // Progress is reported against the file's own size; for .gz the engine's byte count is uncompressed.
    size: gz ? undefined : file.size,
    get fileBytesRead() {
      return fileBytesRead;
    },
    cancel() {
      cancelled = true;
    },
    open(): ByteReader {
      fileBytesRead = 0;
      let raw: ReadableStream<Uint8Array> = file.stream();
      if (gz) {
        const counted = raw.pipeThrough(
          new TransformStream<Uint8Array, Uint8Array>({
            transform(chunk, ctl) {
              fileBytesRead += chunk.byteLength;
              ctl.enqueue(chunk);
            },
          }),
        );
        raw = counted.pipeThrough(new DecompressionStream("gzip") as unknown as ReadableWritablePair<Uint8Array, Uint8Array>);
      }
      const reader = raw.getReader();
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
      let done = false;
      return {
        async read(dst: Uint8Array): Promise<number> {
          let n = 0;
          while (n < dst.length) {
            if (cancelled) throw new CancelledError();
            if (!pending || pending.length === 0) {
              if (done) break;
              refill();
              const r = await queue.shift()!;
              if (r.done) {
                done = true;
                break;
              }
              pending = r.value;
              if (!gz) fileBytesRead += pending.byteLength;
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
          await reader.cancel().catch(() => undefined);
        },
      };
    },
  };
}
