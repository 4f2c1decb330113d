/**
 * Conversion into any Node Writable (an HTTP response, a socket, a pipe), with the stream's back pressure applied
 * after every input window so memory stays bounded whatever the consumer's speed.
 */
import type { Writable } from "node:stream";
import { once } from "node:events";
import { createGzip, constants as zc } from "node:zlib";
import type { ByteSource, ConvertOptions, ConvertResult } from "../core/engine.js";
import { RawtraceError } from "../core/codes.js";
import { createEngine } from "./wasm.js";
import { fileSource, withGrowthWarning } from "./file_source.js";

/** Options of {@link convertStream}. */
export interface ConvertStreamOptions extends Omit<ConvertOptions, "afterWindow"> {
  /** gzip what is written to the stream (Chrome JSON). */
  gzip?: boolean;
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
  const gz = opts.gzip && opts.format !== "xspace" ? createGzip({ level: zc.Z_DEFAULT_COMPRESSION, chunkSize: 1 << 20 }) : null;
  const w: Writable = gz ?? out;
  if (gz) gz.pipe(out, { end: opts.end ?? true });
  let failed: Error | null = null;
  const onError = (e: Error) => {
    failed ??= e;
  };
  out.on("error", onError);
  gz?.on("error", onError);
  let pressure = false;
  try {
    const result = await engine.convert(src, (b) => {
      if (failed) return;
      // The view is valid only during this call: the stream gets a copy.
      if (!w.write(Buffer.from(b))) pressure = true;
    }, {
      ...opts,
      afterWindow: async () => {
        if (failed) throw failed;
        if (pressure) {
          pressure = false;
          await Promise.race([once(w, "drain"), once(w, "error")]);
        }
      },
    });
    if (gz) {
      gz.end();
      if (opts.end ?? true) await once(out, "finish");
      else await once(gz, "end");
    } else if (opts.end ?? true) {
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
    out.off("error", onError);
  }
}
