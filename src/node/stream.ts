/**
 * Conversion into any Node Writable (an HTTP response, a socket, a pipe), with the stream's back pressure applied
 * after every input window so memory stays bounded whatever the consumer's speed.
 */
import type { Writable } from "node:stream";
import { once } from "node:events";
import type { ByteSource, ConvertOptions, ConvertResult } from "../core/engine.js";
import { RawtraceError } from "../core/codes.js";
import { createEngine } from "./wasm.js";
import { fileSource, withGrowthWarning } from "./file_source.js";
import { BlockGzip } from "./block_gzip.js";

/** Options of {@link convertStream}. */
export interface ConvertStreamOptions extends Omit<ConvertOptions, "afterWindow"> {
  /** gzip what is written to the stream (Chrome JSON). */
  gzip?: boolean;
  /** gzip level 0–9 (0: rawtrace's encoder; 1–9: zlib's) of the gzip members (default: DEFAULT_GZIP_LEVEL of src/node/block_gzip.ts). */
  gzipLevel?: number;
  /** End the stream when done (default true). */
  end?: boolean;
}

/**
 * Converts `input` (a path, or any re-openable {@link ByteSource}) to Chrome JSON (or XSpace) and writes it to
 * `out`. Runs in the calling thread; resolves once every byte is handed to `out` (and `out` is ended, unless
 * `end: false`). Rejects when `out` fails.
 */
export async function convertStream(input: string | ByteSource, out: Writable, opts: ConvertStreamOptions = {}): Promise<ConvertResult> {
  const file = typeof input === "string" ? fileSource(input) : null;
  const src = file ?? (input as ByteSource);
  const engine = await createEngine();
  let failed: Error | null = null;
  let pressure = false;
  // gzip: independent members compressed in parallel (src/node/block_gzip.ts), handed to `out` in order.
  const gz = opts.gzip && opts.format !== "xspace"
    ? new BlockGzip((member) => {
      if (!failed && !out.write(member)) pressure = true;
    }, { level: opts.gzipLevel })
    : null;
  const onError = (e: Error) => {
    failed ??= e;
  };
  out.on("error", onError);
  try {
    const result = await engine.convert(src, (b) => {
      if (failed) return;
      if (gz) {
        if (!gz.write(b)) pressure = true;
      } else if (!out.write(Buffer.from(b))) pressure = true; // the view is valid only during this call: a copy
    }, {
      ...opts,
      afterWindow: async () => {
        if (failed) throw failed;
        if (pressure) {
          pressure = false;
          await gz?.drain();
          if (out.writableNeedDrain) await Promise.race([once(out, "drain"), once(out, "error")]);
        }
      },
    });
    await gz?.end();
    if (opts.end ?? true) {
      out.end();
      await once(out, "finish");
    }
    if (failed) throw failed;
    return file ? withGrowthWarning(file, result) : result;
  } catch (e) {
    if (e instanceof RawtraceError) throw e;
    throw new RawtraceError("IO", `${src.name}: ${(e as Error).message}`, src.name);
  } finally {
    file?.close();
    gz?.destroy();
    out.off("error", onError);
  }
}
