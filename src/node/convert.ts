/**
 * Node conversions of one file: `.rawtrace` → Chrome JSON (`.json`, or `.json.gz` through streaming gzip) or XSpace
 * (`format: "xspace"`, a `.xplane.pb`), written straight from the core's output window to the file descriptor.
 * Chrome JSON peak memory does not grow with the input; XSpace buffers ~32 bytes per event in the core
 * (docs/xspace.md).
 */
import { closeSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { createGzip, constants as zc } from "node:zlib";
import { createWriteStream } from "node:fs";
import { once } from "node:events";
import type { ConvertOptions, ConvertResult, Engine, FileInfo } from "../core/engine.js";
import { RawtraceError } from "../core/codes.js";
import { createEngine } from "./wasm.js";
import { fileSource } from "./file_source.js";

/** Options of {@link convertFile}. */
export interface ConvertFileOptions extends Omit<ConvertOptions, "afterWindow"> {
  /** gzip the output (default: when the output path ends in .gz). */
  gzip?: boolean;
  /** Core instance to use (one conversion at a time; default: a new one). Workers reuse theirs. */
  engine?: Engine;
}

/**
 * Converts `input` (.rawtrace) to Chrome JSON (or XSpace with `format: "xspace"`) at `output`. Writes to
 * `output + ".tmp"` and renames on success, so a failed conversion never leaves a half-written file under the final
 * name. XSpace is never gzipped (XProf reads plain `.xplane.pb`).
 */
export async function convertFile(input: string, output: string, opts: ConvertFileOptions = {}): Promise<ConvertResult> {
  const src = fileSource(input);
  const engine = opts.engine ?? (await createEngine());
  const tmp = `${output}.tmp`;
  const gzip = opts.format === "xspace" ? false : opts.gzip ?? output.endsWith(".gz");
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

/**
 * Where TensorBoard and XProf look for one host's XSpace of one profiling run:
 * `<logdir>/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.xplane.pb`, the run named after `profileStartNs` (Unix ns,
 * UTC) and the file after `hostname`, made safe for a file name (XProf takes the host name from the file stem).
 */
export function xspaceProfilePath(logdir: string, profileStartNs: bigint, hostname: string): string {
  const d = new Date(Number(profileStartNs / 1000000n));
  const p2 = (n: number) => String(n).padStart(2, "0");
  const run = `${d.getUTCFullYear()}_${p2(d.getUTCMonth() + 1)}_${p2(d.getUTCDate())}_` +
    `${p2(d.getUTCHours())}_${p2(d.getUTCMinutes())}_${p2(d.getUTCSeconds())}`;
  let host = hostname.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "");
  if (host === "") host = "unknown_host";
  return join(logdir, "plugins", "profile", run, `${host}.xplane.pb`);
}
