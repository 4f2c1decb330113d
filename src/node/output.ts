/**
 * Where output bytes go, and how they get there without ever destroying a file (docs/errors.md, "Outputs and
 * inputs"):
 *
 * - `-` is standard output; `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` and `/proc/self/fd/N` are the descriptor
 *   itself; an existing FIFO or character device (`/dev/null`, a named pipe) is opened and written directly. None
 *   of these is ever replaced or removed.
 * - A regular file (existing or not) is written to a temporary created exclusively (`O_CREAT|O_EXCL|O_NOFOLLOW`,
 *   mode 0600, an unpredictable name) in the directory of the final file, then published: `link()` when the output
 *   must not exist (fails if another program created it meanwhile), `rename()` with `--force`. The published file
 *   gets mode 0666 & ~umask. A symlink output is followed to its target: the target is replaced, the link stays.
 * - While a regular output is written, `<target>.lock` claims it (src/node/output_lock.ts): a second run to the
 *   same output is refused (EXISTS) instead of racing the first; a lock left by a run that was killed is taken over.
 * - An output that is an input (same device and inode: the same path, a hard link or a symlink) is refused (USAGE),
 *   `--force` or not.
 * - Every temporary and lock this process created is removed on failure, on SIGINT/SIGTERM (then the process exits
 *   130/143 when nobody else listens for the signal) and at exit; nothing else is ever removed (src/node/owned.ts).
 * - A write that fails (ENOSPC, EFBIG, EIO…) is an IO error naming the output path.
 */
import {
  closeSync, constants as fc, mkdirSync, fchmodSync, fstatSync, linkSync, lstatSync, openSync, readlinkSync, renameSync,
  rmdirSync, statSync, unlinkSync, writeSync, type Stats,
} from "node:fs";
import { randomBytes } from "node:crypto";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { BlockGzip } from "./block_gzip.js";
import { dropLock, lock, nameTemp, unlock } from "./output_lock.js";
import { disown, own, ownDir, removeOwned } from "./owned.js";
import { RawtraceError } from "../core/codes.js";

/** How an output is written. */
export type OutputKind = "fd" | "device" | "regular";

/** An output path, resolved. */
export interface OutputTarget {
  /** The path as the user gave it (messages). */
  path: string;
  /**
   * `fd`: an open descriptor of this process (`-`, /dev/stdout…); `device`: an existing FIFO or character device,
   * written directly; `regular`: a file written through a temporary and published.
   */
  kind: OutputKind;
  /** `fd`: the descriptor number. */
  fd?: number;
  /** `device`/`regular`: the path written (symlinks followed). */
  target: string;
}

const FD_PATH = /^\/(?:dev\/fd|proc\/self\/fd)\/(\d+)$/;

/** Follows a chain of symlinks at `p` (also a dangling one) to the path it finally names. */
function followLinks(p: string): string {
  let cur = resolve(p);
  for (let hops = 0; hops < 40; hops++) {
    let st: Stats;
    try {
      st = lstatSync(cur);
    } catch {
      return cur; // does not exist (yet): the path itself
    }
    if (!st.isSymbolicLink()) return cur;
    const link = readlinkSync(cur);
    cur = isAbsolute(link) ? link : resolve(dirname(cur), link);
  }
  throw new RawtraceError("USAGE", `${p}: too many levels of symbolic links`, p);
}

/** Resolves where `path` sends output bytes (see the module comment). */
export function resolveOutput(path: string): OutputTarget {
  if (path === "-" || path === "/dev/stdout") return { path, kind: "fd", fd: 1, target: path };
  if (path === "/dev/stderr") return { path, kind: "fd", fd: 2, target: path };
  const m = FD_PATH.exec(path);
  if (m) return { path, kind: "fd", fd: Number(m[1]), target: path };
  const target = followLinks(path);
  let st: Stats | null = null;
  try {
    st = statSync(target);
  } catch {
    st = null;
  }
  if (st && (st.isFIFO() || st.isCharacterDevice())) return { path, kind: "device", target };
  if (st && st.isDirectory()) throw new RawtraceError("USAGE", `${path}: is a directory, not an output file`, path);
  if (st && !st.isFile()) {
    throw new RawtraceError("USAGE", `${path}: not a regular file, FIFO or character device: refusing to write it`, path);
  }
  return { path, kind: "regular", target };
}

/**
 * Whether `path` names this process's standard output: `-`, or a path to the file descriptor 1 has open
 * (`/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1`, the terminal or pipe it is), compared by device and inode.
 */
export function isStdout(path: string): boolean {
  if (path === "-" || path === "/dev/stdout") return true;
  try {
    const out = fstatSync(1);
    const p = statSync(path);
    return out.dev === p.dev && out.ino === p.ino;
  } catch {
    return false; // no standard output, or no such path
  }
}

/** True when `path` is standard output, a descriptor, a FIFO or a character device (not a file or directory). */
export function isStreamOutput(path: string): boolean {
  try {
    return resolveOutput(path).kind !== "regular";
  } catch {
    return false;
  }
}

/**
 * The inputs of one run, looked up by path and by device and inode: built once per batch or merge ({@link inputSet}),
 * so that the outputs of N inputs are checked against them with one stat of each input in all, not one per output
 * (checking every output against every input was N² stat calls: 2 million for 1,000 inputs rerun with --force).
 * An input that cannot be stat'ed is left out of the (device, inode) set: it cannot be overwritten either, and its
 * own read reports it.
 */
export class InputSet {
  /** Resolved paths of the inputs. */
  private readonly paths = new Set<string>();
  /** `dev:ino` → the input (as given) of that file. */
  private readonly ids = new Map<string, string>();

  constructor(inputs: readonly string[]) {
    for (const input of inputs) {
      this.paths.add(resolve(input));
      try {
        const st = statSync(input);
        const key = `${st.dev}:${st.ino}`;
        if (!this.ids.has(key)) this.ids.set(key, input);
      } catch {
        // not there: cannot be overwritten either
      }
    }
  }

  /** The input that is the file `st` describes (same device and inode), if any. */
  inputOf(st: Stats): string | undefined {
    return this.ids.get(`${st.dev}:${st.ino}`);
  }

  /** Whether `resolved` (an absolute path) is one of the inputs' paths. */
  hasPath(resolved: string): boolean {
    return this.paths.has(resolved);
  }
}

/** `inputs` as an {@link InputSet} (built here when given as a list). */
export function inputSet(inputs: readonly string[] | InputSet): InputSet {
  return inputs instanceof InputSet ? inputs : new InputSet(inputs);
}

/**
 * Throws USAGE when `out` is one of the inputs (same device and inode: also through hard and symbolic links).
 * Applies to every kind of output: writing a dump onto itself destroys it whatever the path looks like.
 */
export function refuseInput(out: OutputTarget, inputs: readonly string[] | InputSet): void {
  let st: Stats;
  try {
    st = out.kind === "fd" ? fstatSync(out.fd!) : statSync(out.target);
  } catch {
    return; // no such file yet
  }
  if (!st.isFile()) return; // a pipe or device is not a dump we could destroy
  const input = inputSet(inputs).inputOf(st);
  if (input !== undefined) {
    throw new RawtraceError("USAGE", `output ${out.path} is the input ${input} (the same file): refusing to overwrite an input, forced (--force; Node API: force: true) or not`, out.path);
  }
}

/**
 * True when `path` names one of `inputs` (the same resolved path, or the same device and inode through links).
 * Anything else already at `path`, such as a previous run's XSpace log directory, is not an input: the writer
 * replaces it or refuses it with its own message. Give an {@link InputSet} when checking many paths.
 */
export function isInput(path: string, inputs: readonly string[] | InputSet): boolean {
  const set = inputSet(inputs);
  if (set.hasPath(resolve(path))) return true;
  let st: Stats;
  try {
    st = statSync(followLinks(path));
  } catch {
    return false; // not there yet (or a link loop, reported when it is written)
  }
  return set.inputOf(st) !== undefined;
}

/** Flags of a file created exclusively for writing, never through a symlink. */
export const CREATE_EXCL = fc.O_CREAT | fc.O_EXCL | fc.O_WRONLY | fc.O_NOFOLLOW;

/**
 * Creates a new file exclusively next to `near` (same directory), named `.<base>.<random>.<suffix>`, mode 0600,
 * never through a symlink. Returns its path and an open descriptor (read-write when `readable`). The file is owned
 * (removed on failure or signal) until {@link disown}ed.
 */
export function createTemp(near: string, suffix = "tmp", readable = false): { path: string; fd: number } {
  const dir = dirname(near);
  const flags = readable ? (CREATE_EXCL & ~fc.O_WRONLY) | fc.O_RDWR : CREATE_EXCL;
  for (let attempt = 0; ; attempt++) {
    const path = join(dir, `.${basename(near)}.${randomBytes(8).toString("hex")}.${suffix}`);
    try {
      const fd = openSync(path, flags, 0o600);
      own(path);
      return { path, fd };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EEXIST" && attempt < 16) continue;
      throw ioError(near, e, `cannot create a temporary file in ${dir}`);
    }
  }
}

/**
 * Creates the folder `dir` and any missing parents (`mkdir -p`), one level at a time. Node's own recursive mkdir
 * loops forever where a parent exists but refuses new entries with ENOENT (`/proc`), and it throws bare Node
 * errors; this throws IO naming `dir` (`what` says which folder) and says when a part of the path is a file. With
 * `removeIfInterrupted`, the folders it makes are removed when SIGINT/SIGTERM ends the process and they are still
 * empty (an interrupted XSpace conversion leaves no empty `plugins/profile/` tree). Returns the folders it made,
 * parents first (for {@link removeDirsIfEmpty} when the run fails).
 */
export function makeDir(dir: string, what = "the output folder", removeIfInterrupted = true): string[] {
  const abs = resolve(dir);
  const missing: string[] = [];
  for (let p = abs; ; ) {
    let st: Stats | undefined;
    try {
      st = statSync(p);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") throw ioError(dir, e, `cannot create ${what}`);
    }
    if (st) {
      if (!st.isDirectory()) {
        throw new RawtraceError("IO", `${dir}: cannot create ${what}: ${p} is a file, not a folder`, dir);
      }
      break;
    }
    missing.push(p);
    const up = dirname(p);
    if (up === p) break;
    p = up;
  }
  const made: string[] = [];
  for (const p of missing.reverse()) {
    try {
      mkdirSync(p);
      made.push(p);
      if (removeIfInterrupted) ownDir(p);
    } catch (e) {
      // Created meanwhile by another run: fine when it is a folder.
      if ((e as NodeJS.ErrnoException).code === "EEXIST") {
        if (statSync(p, { throwIfNoEntry: false })?.isDirectory()) continue;
        throw new RawtraceError("IO", `${dir}: cannot create ${what}: ${p} exists and is not a folder (a link to nothing?)`, dir);
      }
      throw ioError(dir, e, `cannot create ${what}`);
    }
  }
  return made;
}

/** Removes the folders of `dirs` (as {@link makeDir} returned them) that are empty, deepest first. */
export function removeDirsIfEmpty(dirs: string[]): void {
  for (const d of [...dirs].reverse()) {
    try {
      rmdirSync(d);
    } catch {
      // not empty, or gone
    }
  }
}

/** An IO error that names `path` (the output, never the input). */
export function ioError(path: string, e: unknown, what = "cannot write"): RawtraceError {
  if (e instanceof RawtraceError) return e;
  const err = e as NodeJS.ErrnoException;
  // `-o - | head`: the reader took what it wanted; the CLI ends quietly with status 141, as stdout's own EPIPE.
  if (err.code === "EPIPE" && isStdout(path)) {
    return new RawtraceError("PIPE_CLOSED", `${path}: the reader of standard output closed it before the end`, path);
  }
  const hint = err.code === "ENOSPC" ? " (disk full)" : err.code === "EFBIG" ? " (file size limit)" : err.code === "EDQUOT" ? " (quota exceeded)" : "";
  return new RawtraceError("IO", `${path}: ${what}${hint}: ${err.message}`, path);
}

const sleepCell = new Int32Array(new SharedArrayBuffer(4));

/** Writes all of `b` to `fd` (retries short writes and EAGAIN on non-blocking pipes); errors name `path`. */
export function writeAll(fd: number, b: Uint8Array, path: string, what = "cannot write the output"): void {
  let off = 0;
  while (off < b.length) {
    try {
      off += writeSync(fd, b, off, b.length - off);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EAGAIN") {
        Atomics.wait(sleepCell, 0, 0, 2);
        continue;
      }
      throw ioError(path, e, what);
    }
  }
}

/** Options of {@link openOutput}. */
export interface OpenOutputOptions {
  /** Replace an existing regular file. */
  force?: boolean;
  /** Inputs of the run: an output that is one of them is refused (USAGE). An {@link InputSet} when many outputs are opened. */
  inputs?: readonly string[] | InputSet;
  /** Claim the output with a lock file while it is written (default true). */
  lock?: boolean;
}

/**
 * An output being written: {@link fd} takes the bytes; {@link commit} publishes them, {@link abort} removes every
 * trace of the attempt. Exactly one of the two must be called.
 */
export class OutputFile {
  /** The descriptor to write (a temporary for regular files). */
  readonly fd: number;
  /** What was asked for. */
  readonly out: OutputTarget;
  /** The temporary (regular files), else null. */
  readonly tmp: string | null;
  private lockPath: string | null;
  private closed = false;
  private readonly force: boolean;

  private constructor(out: OutputTarget, fd: number, tmp: string | null, lockPath: string | null, force: boolean) {
    this.out = out;
    this.fd = fd;
    this.tmp = tmp;
    this.lockPath = lockPath;
    this.force = force;
  }

  /**
   * What {@link open} checks before it takes the lock: `path` resolves to an output, is no input, and (without
   * `force`) does not exist. Nothing is created: for a run that claims many outputs before any work but opens each
   * only when it is written (an XSpace merge's host files).
   */
  static check(path: string, opts: OpenOutputOptions = {}): OutputTarget {
    const out = resolveOutput(path);
    if (opts.inputs) refuseInput(out, opts.inputs);
    if (out.kind === "regular") refuseExisting(out, opts.force);
    return out;
  }

  /** Opens `path` for writing as its kind requires (module comment). Throws USAGE, EXISTS or IO. */
  static open(path: string, opts: OpenOutputOptions = {}): OutputFile {
    const out = resolveOutput(path);
    if (opts.inputs) refuseInput(out, opts.inputs);
    if (out.kind === "fd") return new OutputFile(out, out.fd!, null, null, false);
    if (out.kind === "device") {
      try {
        return new OutputFile(out, openSync(out.target, fc.O_WRONLY | fc.O_APPEND), null, null, false);
      } catch (e) {
        throw ioError(path, e, "cannot open");
      }
    }
    const lockPath = opts.lock === false ? null : lock(out.target, path);
    try {
      refuseExisting(out, opts.force);
      const t = createTemp(out.target);
      if (lockPath) nameTemp(lockPath, t.path);
      return new OutputFile(out, t.fd, t.path, lockPath, !!opts.force);
    } catch (e) {
      if (lockPath) dropLock(lockPath);
      throw e;
    }
  }

  /**
   * Takes over a temporary already written (by {@link createTemp}, descriptor `fd`) to publish it at `path`, whose
   * name was known only after the conversion (XSpace log directories): claims `path` as {@link open} does. `fd` is
   * the OutputFile's from the call on: when the claim fails it is closed and `tmp` removed here (the caller must not
   * close it again: the number may be another file's by then).
   */
  static adopt(path: string, tmp: string, fd: number, opts: OpenOutputOptions = {}): OutputFile {
    const out = resolveOutput(path);
    try {
      if (out.kind !== "regular") throw new RawtraceError("USAGE", `${path}: not a regular file`, path);
      if (opts.inputs) refuseInput(out, opts.inputs);
      const lockPath = opts.lock === false ? null : lock(out.target, path);
      try {
        refuseExisting(out, opts.force);
      } catch (e) {
        if (lockPath) dropLock(lockPath);
        throw e;
      }
      if (lockPath) nameTemp(lockPath, tmp);
      return new OutputFile(out, fd, tmp, lockPath, !!opts.force);
    } catch (e) {
      try {
        closeSync(fd);
      } catch {
        // closed
      }
      removeOwned(tmp);
      throw e;
    }
  }

  /** The output's name for messages. */
  get path(): string {
    return this.out.path;
  }

  /** Writes all of `b` (errors name the output). */
  write(b: Uint8Array): void {
    writeAll(this.fd, b, this.out.path);
  }

  /**
   * Closes the descriptor of a complete output (its mode set) without publishing it yet: the temporary and the lock
   * stay until {@link commit} or {@link abort}. A run that publishes many outputs together (an XSpace merge's hosts)
   * so holds no descriptor for an output already written.
   */
  seal(): void {
    if (this.closed) return;
    if (this.tmp) {
      try {
        const mask = process.umask();
        fchmodSync(this.fd, 0o666 & ~mask);
      } catch (e) {
        throw ioError(this.out.path, e);
      }
    }
    this.close();
  }

  /** Closes the descriptor and publishes the bytes under the final name (regular files); releases the lock. */
  commit(): void {
    try {
      this.seal();
      if (!this.tmp) return;
      if (this.force) {
        try {
          renameSync(this.tmp, this.out.target);
        } catch (e) {
          throw ioError(this.out.path, e, "cannot rename the finished temporary into place");
        }
      } else {
        // Never replace a file that appeared while we wrote: link() fails when the name exists.
        try {
          linkSync(this.tmp, this.out.target);
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          if (code === "EEXIST") throw new RawtraceError("EXISTS", `${this.out.path}: was created by another program while rawtrace wrote it; kept it (to overwrite it: --force; Node API: force: true)`, this.out.path);
          if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP") throw ioError(this.out.path, e, "cannot publish the output");
          if (exists(this.out.target)) throw new RawtraceError("EXISTS", `${this.out.path}: already exists (to overwrite it: --force; Node API: force: true)`, this.out.path);
          renameSync(this.tmp, this.out.target); // a file system without hard links
        }
      }
      disown(this.tmp);
      try {
        unlinkSync(this.tmp);
      } catch {
        // renamed
      }
    } catch (e) {
      this.abort();
      throw e;
    } finally {
      this.unlock();
    }
  }

  /** Closes and removes the temporary (only it) and the lock. Safe to call twice. */
  abort(): void {
    this.close();
    if (this.tmp) removeOwned(this.tmp);
    this.unlock();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.out.kind === "fd") return; // standard output stays open
    try {
      closeSync(this.fd);
    } catch (e) {
      if (this.out.kind === "regular") throw ioError(this.out.path, e);
    }
  }

  private unlock(): void {
    const p = this.lockPath;
    this.lockPath = null;
    if (!p) return;
    unlock(p);
  }
}

/** Throws EXISTS when the regular output `out` is there already and `force` is not given. */
function refuseExisting(out: OutputTarget, force: boolean | undefined): void {
  if (!force && exists(out.target)) {
    throw new RawtraceError("EXISTS", `${out.path}: already exists (to overwrite it: --force; Node API: force: true)`, out.path);
  }
}

function exists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * Bytes to an open descriptor, plain or through parallel block gzip (src/node/block_gzip.ts), with back pressure: {@link write} during a core
 * callback (copies the view), {@link drain} after each input window, {@link finish} at the end. Write errors
 * (ENOSPC…) surface as IO errors naming `path`.
 */
export class FdSink {
  private gz: BlockGzip | null = null;
  private failed: Error | null = null;
  private pressure = false;
  /** Bytes handed in (before compression). */
  bytes = 0;

  /** `gzipLevel`: gzip level 0–9 (0: rawtrace's encoder; 1–9: zlib's) of the gzip blocks (default: DEFAULT_GZIP_LEVEL of src/node/block_gzip.ts). */
  constructor(private readonly fd: number, private readonly path: string, gzip: boolean, gzipLevel?: number) {
    if (gzip) this.gz = new BlockGzip((c) => writeAll(this.fd, c, this.path), { level: gzipLevel });
  }

  /** Takes `b` (a view valid only during the call; gzip copies it into its block). */
  write(b: Uint8Array): void {
    if (this.failed) throw this.failed;
    this.bytes += b.length;
    if (!this.gz) return writeAll(this.fd, b, this.path);
    try {
      if (!this.gz.write(b)) this.pressure = true;
    } catch (e) {
      throw (this.failed = ioError(this.path, e));
    }
  }

  /** Waits for gzip's blocks to catch up; throws a write error that happened meanwhile. */
  async drain(): Promise<void> {
    if (this.failed) throw this.failed;
    if (this.gz && this.pressure) {
      this.pressure = false;
      await this.gz.drain().catch((e) => {
        throw (this.failed = ioError(this.path, e));
      });
    }
  }

  /** Compresses and writes the rest of gzip's blocks; throws the first write error. */
  async finish(): Promise<void> {
    if (this.gz && !this.failed) {
      await this.gz.end().catch((e) => {
        throw (this.failed = ioError(this.path, e));
      });
    }
    if (this.failed) throw this.failed;
  }

  /** Stops gzip after a failure. */
  destroy(): void {
    this.gz?.destroy();
  }
}
