/**
 * Conversion into any Node Writable (an HTTP response, a socket, a pipe), with the stream's back pressure applied
 * after every input window so memory stays bounded whatever the consumer's speed.
 */
import type { Writable } from "node:stream";
import { once } from "node:events";
import { finished } from "node:stream/promises";
import type { ByteSource, ConvertOptions, ConvertResult } from "../core/engine.js";
import { RawtraceError } from "../core/codes.js";
import { createEngine } from "./wasm.js";
import { fileSource, withSourceWarnings } from "./file_source.js";
import { BlockGzip } from "./block_gzip.js";
import { callerCallback, checkOutputOptions } from "./convert.js";

/** Options of {@link convertStream}. */
export interface ConvertStreamOptions extends Omit<ConvertOptions, "afterWindow" | "format"> {
  /** Chrome JSON (default) or XSpace (docs/xspace.md). */
  format?: "chrome" | "xspace";
  /** gzip what is written to the stream (Chrome JSON). */
  gzip?: boolean;
  /** gzip level 0–9 (0: rawtrace's encoder; 1–9: zlib's) of the gzip members (default: DEFAULT_GZIP_LEVEL of src/node/block_gzip.ts). */
  gzipLevel?: number;
  /** End the stream when done (default true). */
  end?: boolean;
}

/** Why `out` cannot take bytes any more (destroyed or already ended), or null while it can. */
function gone(out: Writable): string | null {
  if (out.destroyed) return "the output stream was destroyed";
  if (out.writableEnded) return "the output stream was already ended";
  return null;
}

/**
 * Converts `input` (a path, or any re-openable {@link ByteSource}) to Chrome JSON (or XSpace) and writes it to
 * `out`. Runs in the calling thread; resolves once every byte is handed to `out` (and `out` is ended and finished,
 * unless `end: false`).
 *
 * Rejects with `IO` when `out` fails, is destroyed or closes before the end (an HTTP client that goes away), or was
 * already ended or destroyed; the conversion stops at the next input window. When the conversion fails after bytes
 * reached `out`, `out` is destroyed (a half-written trace must not look complete: an HTTP response is aborted, not
 * ended); when it fails before the first byte, `out` is left as it was, so that a server can still answer
 * with an error status. With `end: false` the caller owns `out` either way.
 */
export async function convertStream(input: string | ByteSource, out: Writable, opts: ConvertStreamOptions = {}): Promise<ConvertResult> {
  // A Node stream is refused even when it has an open() of its own (fs.ReadStream's, deprecated, reopens the file).
  if (typeof input !== "string" && (typeof input !== "object" || input === null || typeof (input as ByteSource).open !== "function" ||
    typeof (input as unknown as { pipe?: unknown }).pipe === "function")) {
    throw new RawtraceError("USAGE", "convertStream: the input must be a path or a ByteSource (fileSource, memorySource), not a Node stream or other value");
  }
  if (out === null || typeof out !== "object" || typeof (out as { write?: unknown }).write !== "function") {
    throw new RawtraceError("USAGE", `convertStream: the output must be a Writable stream, not ${out === null ? "null" : typeof out}`);
  }
  checkOutputOptions(opts, undefined, "convertStream");
  // Checked before the input is opened: a stream already gone must not cost a spooled copy of standard input.
  const already = gone(out);
  if (already) {
    const name = typeof input === "string" ? input : input.path ?? input.name;
    throw new RawtraceError("IO", `${name}: ${already} before the conversion started`, name);
  }
  const file = typeof input === "string" ? fileSource(input) : null;
  const src = file ?? (input as ByteSource);
  let engine: Awaited<ReturnType<typeof createEngine>>;
  try {
    engine = await createEngine();
  } catch (e) {
    file?.close();
    throw e;
  }
  let failed: Error | null = null;
  const callback = callerCallback();
  let pressure = false;
  let wrote = false;
  // gzip: independent members compressed in parallel (src/node/block_gzip.ts), handed to `out` in order.
  const gz = opts.gzip && opts.format !== "xspace"
    ? new BlockGzip((member) => {
      if (failed) return;
      wrote = true;
      if (!out.write(member)) pressure = true;
    }, { level: opts.gzipLevel })
    : null;
  // Settles when `out` fails or closes: every wait below races it, so a stream that goes away cannot leave the
  // conversion waiting for a 'drain' or 'finish' that never comes.
  let lost!: (e: Error) => void;
  const lostPromise = new Promise<never>((_, reject) => (lost = reject));
  lostPromise.catch(() => {});
  const onError = (e: Error) => {
    failed ??= e;
    lost(failed);
  };
  // Ended by us (opts.end): a finish or close after it is the normal end; before it, someone else ended the stream,
  // whose later writes are dropped with an error only their callbacks see (before: the call resolved, the bytes lost).
  let endedByUs = false;
  const ENDED = "the output stream was ended by another party before the conversion ended";
  const CLOSED = "the output stream closed before the conversion ended";
  const fail = (why: string) => {
    failed ??= new Error(why);
    lost(failed);
  };
  const onClose = () => {
    if (!(out.writableFinished && endedByUs)) fail(out.writableFinished ? ENDED : CLOSED);
  };
  const onFinish = () => {
    if (!endedByUs) fail(ENDED);
  };
  /** A stream ended or destroyed meanwhile without an event yet (end() emits 'finish' only after its buffer drains). */
  const check = () => {
    if (!failed && !endedByUs && gone(out)) fail(out.destroyed ? CLOSED : ENDED);
  };
  out.on("error", onError);
  out.on("close", onClose);
  out.on("finish", onFinish);
  try {
    const result = await engine.convert(src, (b) => {
      check();
      if (failed) return;
      if (gz) {
        if (!gz.write(b)) pressure = true;
        return;
      }
      wrote = true;
      if (!out.write(Buffer.from(b))) pressure = true; // the view is valid only during this call: a copy
    }, {
      ...opts,
      onProgress: callback.wrap(opts.onProgress),
      afterWindow: async () => {
        check();
        if (failed) throw failed;
        if (pressure) {
          pressure = false;
          if (gz) await Promise.race([gz.drain(), lostPromise]);
          if (out.writableNeedDrain) {
            // once() with a signal: its listener goes when the stream is lost instead of staying on `out`.
            const stop = new AbortController();
            const drained = once(out, "drain", { signal: stop.signal });
            drained.catch(() => {}); // rejected by the abort below once the race is over
            try {
              await Promise.race([drained, lostPromise]);
            } finally {
              stop.abort();
            }
          }
        }
      },
    });
    if (gz) await Promise.race([gz.end(), lostPromise]);
    check();
    if (failed) throw failed;
    if (opts.end ?? true) {
      endedByUs = true;
      out.end();
      await Promise.race([finished(out, { readable: false }), lostPromise]);
    }
    if (failed) throw failed;
    return file ? withSourceWarnings(file, result) : result;
  } catch (e) {
    // Errors name the input as the caller gave it (ByteSource.path: a path, not just its base name).
    const where = src.path ?? src.name;
    // What the caller's own onProgress threw is passed on as thrown, not disguised as a problem with the files.
    const err = e instanceof RawtraceError || callback.threw(e) ? e : new RawtraceError("IO", `${where}: ${(e as Error).message}`, where);
    // Destroyed without an error argument: that would emit 'error' on `out` after our listener is gone.
    if (wrote && (opts.end ?? true) && !out.destroyed) out.destroy();
    throw err;
  } finally {
    file?.close();
    gz?.destroy();
    out.off("error", onError);
    out.off("close", onClose);
    out.off("finish", onFinish);
  }
}
