/**
 * Node conversions of one file: `.rawtrace` → Chrome JSON (`.json`, or `.json.gz` through streaming gzip) or XSpace
 * (`format: "xspace"`, a `.xplane.pb`), written straight from the core's output window to the file descriptor.
 * Chrome JSON peak memory does not grow with the input; XSpace buffers ~32 bytes per event in the core
 * (docs/xspace.md).
 */
import { needBool, needOptions, needPath, noSignal } from "./api_args.js";
import { dirname, join, resolve } from "node:path";
import type { ConvertOptions, ConvertResult, Engine, FileInfo } from "../core/engine.js";
import { RawtraceError, shownValue } from "../core/codes.js";
import { createEngine } from "./wasm.js";
import { fileSource, withSourceWarnings } from "./file_source.js";
import { FdSink, OutputFile, ioError, isStreamOutput, makeDir } from "./output.js";
import { checkGzipLevel, gzipByName } from "./block_gzip.js";
import { fnv1a32 } from "./shard.js";

/** Options of {@link convertFile}. */
export interface ConvertFileOptions extends Omit<ConvertOptions, "afterWindow" | "format"> {
  /** Chrome JSON (default) or XSpace (`.xplane.pb`, docs/xspace.md). */
  format?: "chrome" | "xspace";
  /** gzip the output (default: when the output path ends in .gz). */
  gzip?: boolean;
  /** gzip level 0–9 (0: rawtrace's encoder; 1–9: zlib's) of the gzip output (default: DEFAULT_GZIP_LEVEL of src/node/block_gzip.ts). */
  gzipLevel?: number;
  /** Core instance to use (one conversion at a time; default: a new one). Workers reuse theirs. */
  engine?: Engine;
  /** Replace an existing output file (never an input). */
  force?: boolean;
  /**
   * Write to this open descriptor instead of opening `output` (which then only names it in messages); the caller
   * opened it (src/node/output.ts) and closes or publishes it. Used by the worker pool.
   */
  fd?: number;
}

/**
 * Checks the output options every conversion takes, before any output is opened (a wrong value leaves no temporary
 * file or lock behind): `format` is "chrome" or "xspace", `gzipLevel` 0–9, and XSpace is never gzipped (XProf reads
 * plain `.xplane.pb`), neither by `gzip` nor by an `output` name ending in `.gz`. Throws USAGE.
 */
export function checkOutputOptions(opts: { format?: string; gzip?: boolean; gzipLevel?: number }, output?: string, fn = "options"): void {
  needOptions(fn, opts);
  noSignal(fn, opts);
  // A string ("no") was taken as true and gzipped the output.
  needBool(fn, "gzip", opts.gzip);
  if (opts.format !== undefined && opts.format !== "chrome" && opts.format !== "xspace") {
    throw new RawtraceError("USAGE", `unknown output format '${opts.format}' (chrome or xspace)`);
  }
  if (opts.format === "xspace" && (opts.gzip || gzipByName(output))) {
    throw new RawtraceError("USAGE", "XSpace output cannot be gzipped (XProf reads .xplane.pb)");
  }
  if (opts.gzipLevel !== undefined) checkGzipLevel(opts.gzipLevel);
}


/**
 * Converts `input` (.rawtrace) to Chrome JSON (or XSpace with `format: "xspace"`) at `output`, opened as
 * src/node/output.ts describes: `-` is standard output, FIFOs and devices are written directly, a regular file is
 * written to an exclusive temporary in its directory and published only when complete (never over an input; an
 * existing file only with `force`). A failed conversion leaves nothing behind. XSpace is never gzipped (XProf reads
 * plain `.xplane.pb`).
 */
export async function convertFile(input: string, output: string, opts: ConvertFileOptions = {}): Promise<ConvertResult> {
  needPath("convertFile", "input", input);
  needPath("convertFile", "output", output);
  checkOutputOptions(opts, output, "convertFile");
  const gzip = opts.format === "xspace" ? false : opts.gzip ?? gzipByName(output);
  // An XSpace file makes its folder, as the CLI and convertBatch do (docs/errors.md: XProf's runs live in a tree that
  // often does not exist yet); a Chrome JSON file's missing folder is refused.
  if (opts.fd === undefined && opts.format === "xspace" && !isStreamOutput(output)) makeDir(dirname(resolve(output)), "the output's folder");
  const file = opts.fd === undefined ? OutputFile.open(output, { force: opts.force, inputs: [input] }) : null;
  const fd = opts.fd ?? file!.fd;
  let src: ReturnType<typeof fileSource> | null = null;
  let sink: FdSink | null = null;
  const callback = callerCallback();
  try {
    const out = (sink = new FdSink(fd, output, gzip, opts.gzipLevel));
    src = fileSource(input);
    const engine = opts.engine ?? (await createEngine());
    const result = await engine.convert(src, (b) => out.write(b), { ...opts, onProgress: callback.wrap(opts.onProgress), afterWindow: () => out.drain() });
    await out.finish();
    file?.commit();
    return withSourceWarnings(src, result);
  } catch (e) {
    sink?.destroy();
    file?.abort();
    // What the caller's own onProgress threw is passed on as thrown, not disguised as a problem with the output.
    if (e instanceof RawtraceError || callback.threw(e)) throw e;
    throw ioError(output, e);
  } finally {
    src?.close();
  }
}

/**
 * Tells what a caller's callback threw from the conversion's own errors: `wrap(fn)` calls `fn` and remembers what it
 * throws; `threw(e)` is true for that exception (passed on as thrown, where a failure of the files becomes IO).
 */
export function callerCallback() {
  let thrown: { e: unknown } | null = null;
  return {
    wrap<A extends unknown[], R>(fn: ((...a: A) => R) | undefined): ((...a: A) => R) | undefined {
      if (!fn) return undefined;
      return (...a: A) => {
        let r: R;
        try {
          r = fn(...a);
        } catch (e) {
          thrown = { e };
          throw e;
        }
        // A promise it returns is the engine's to wait for (a rejection fails the conversion, Engine.noteAsync); its
        // rejection is the caller's too. Dropping it left the rejection unhandled: the process ended.
        if (r !== null && typeof r === "object" && typeof (r as unknown as PromiseLike<unknown>).then === "function") {
          return Promise.resolve(r as unknown as PromiseLike<unknown>).catch((e) => {
            thrown = { e };
            throw e;
          }) as R;
        }
        return r;
      };
    },
    threw: (e: unknown): boolean => thrown !== null && thrown.e === e,
  };
}

/** Reads a file's header, devices, record counts, time span and warnings (pass 1 only). */
export async function infoFile(input: string): Promise<FileInfo> {
  needPath("infoFile", "input", input);
  const engine = await createEngine();
  const src = fileSource(input);
  try {
    return withSourceWarnings(src, { info: await engine.info(src) }).info;
  } finally {
    src.close();
  }
}

/** Longest host name kept whole in an XSpace file name ({@link xspaceProfilePath}). */
const HOST_NAME_MAX = 160;

/**
 * Where TensorBoard and XProf look for one host's XSpace of one profiling run:
 * `<logdir>/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.xplane.pb`, the run named after `profileStartNs` (Unix ns,
 * UTC) and the file after `hostname`, made safe for a file name (XProf takes the host name from the file stem), and
 * past 160 characters its first 151 and a hash of the whole.
 */
export function xspaceProfilePath(logdir: string, profileStartNs: bigint | number, hostname: string): string {
  // "" is the current folder (a relative path under it), as path.join takes it.
  if (typeof logdir !== "string") throw new RawtraceError("USAGE", `xspaceProfilePath: the log directory must be a path, not ${shownValue(logdir)}`);
  // A number (what a caller who read a time as a number has) is taken too, where it is a whole number of ns ≥ 0.
  if (typeof profileStartNs === "number") {
    if (!Number.isSafeInteger(profileStartNs) && !(Number.isInteger(profileStartNs) && profileStartNs > 0)) {
      throw new RawtraceError("USAGE", `xspaceProfilePath: the profile start must be whole Unix ns, not ${shownValue(profileStartNs)}`);
    }
    profileStartNs = BigInt(profileStartNs);
  }
  if (typeof profileStartNs !== "bigint" || profileStartNs < 0n) {
    const shown = typeof profileStartNs === "bigint" ? `${profileStartNs}n` : shownValue(profileStartNs);
    throw new RawtraceError("USAGE", `xspaceProfilePath: the profile start must be whole Unix ns, not ${shown}`);
  }
  const d = new Date(Number(profileStartNs / 1000000n));
  const p2 = (n: number) => String(n).padStart(2, "0");
  const run = `${d.getUTCFullYear()}_${p2(d.getUTCMonth() + 1)}_${p2(d.getUTCDate())}_` +
    `${p2(d.getUTCHours())}_${p2(d.getUTCMinutes())}_${p2(d.getUTCSeconds())}`;
  if (typeof hostname !== "string") throw new RawtraceError("USAGE", `xspaceProfilePath: the host name must be a string, not ${shownValue(hostname)}`);
  let host = hostname.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "");
  if (host === "") host = "unknown_host";
  // A file name has at most 255 bytes, with `.xplane.pb.lock` and a temporary's suffix added: a longer name (a
  // damaged or crafted HEADER; real host names have at most 64) keeps its start and a hash of the whole, so that two
  // such hosts still get two files (before: ENAMETOOLONG, exit 4).
  if (host.length > HOST_NAME_MAX) host = `${host.slice(0, HOST_NAME_MAX - 9)}_${fnv1a32(host).toString(16).padStart(8, "0")}`;
  return join(logdir, "plugins", "profile", run, `${host}.xplane.pb`);
}
