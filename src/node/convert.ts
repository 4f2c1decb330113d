/**
 * Node conversions of one file: `.rawtrace` → Chrome JSON (`.json`, or `.json.gz` through streaming gzip), written
 * straight from the core's output window to the file descriptor. Peak memory does not grow with the input.
 */
import { closeSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { createGzip, constants as zc } from "node:zlib";
import { createWriteStream } from "node:fs";
import { once } from "node:events";
import type { ConvertOptions, ConvertResult, FileInfo } from "../core/engine.js";
import { RawtraceError } from "../core/codes.js";
import { createEngine } from "./wasm.js";
import { fileSource } from "./file_source.js";

/** Options of {@link convertFile}. */
export interface ConvertFileOptions extends Omit<ConvertOptions, "afterWindow"> {
  /** gzip the output (default: when the output path ends in .gz). */
  gzip?: boolean;
}

/**
 * Converts `input` (.rawtrace) to Chrome JSON at `output`. Writes to `output + ".tmp"` and renames on success, so
 * a failed conversion never leaves a half-written file under the final name.
 */
export async function convertFile(input: string, output: string, opts: ConvertFileOptions = {}): Promise<ConvertResult> {
  const src = fileSource(input);
  const engine = await createEngine();
  const tmp = `${output}.tmp`;
  const gzip = opts.gzip ?? output.endsWith(".gz");
  try {
    let result: ConvertResult;
    if (!gzip) {
      const fd = openSync(tmp, "w");
      try {
        result = await engine.convert(src, (b) => {
          let off = 0;
          while (off < b.length) off += writeSync(fd, b, off, b.length - off);
        }, opts);
      } finally {
        closeSync(fd);
      }
    } else {
      const gz = createGzip({ level: zc.Z_DEFAULT_COMPRESSION, chunkSize: 1 << 20 });
      const file = createWriteStream(tmp);
      gz.pipe(file);
      let pressure = false;
      result = await engine.convert(src, (b) => {
        // The view is only valid during this call: gzip gets a copy.
        if (!gz.write(Buffer.from(b))) pressure = true;
      }, {
        ...opts,
        afterWindow: async () => {
          if (pressure) {
            pressure = false;
            await once(gz, "drain");
          }
        },
      });
      gz.end();
      await once(file, "close");
    }
    renameSync(tmp, output);
    return result;
  } catch (e) {
    rmSync(tmp, { force: true });
    if (e instanceof RawtraceError) throw e;
    throw new RawtraceError("IO", `${input}: ${(e as Error).message}`, input);
  }
}

/** Reads a file's header, devices, record counts, time span and warnings (pass 1 only). */
export async function infoFile(input: string): Promise<FileInfo> {
  const engine = await createEngine();
  return engine.info(fileSource(input));
}
