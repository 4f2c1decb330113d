/**
 * Node file access for the engine: a re-openable ByteSource over a path, read with positional reads.
 *
 * A conversion reads its input two or three times (index, NVTX projection, emit). A non-seekable input (a FIFO,
 * `/dev/stdin`, a process substitution) can be read only once: it is spooled into an unnamed temporary file (created
 * exclusively in the system temporary directory, mode 0600, unlinked at once so nothing is left whatever happens)
 * and every pass reads the copy.
 *
 * A dump still being written (the collector has not closed it) changes size under the reader: the source notes the
 * size at every open and at every end of pass, and {@link withGrowthWarning} turns a change into a `STILL_WRITING`
 * warning when the dump has no END chunk.
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { tmpdir } from "node:os";
import type { ByteSource, FileInfo } from "../core/engine.js";
import { RawtraceError, type Warning } from "../core/codes.js";
import { createTemp, removeOwned, writeAll } from "./output.js";

/** A file's ByteSource; {@link FileByteSource.close} releases a spooled copy. */
export interface FileByteSource extends ByteSource {
  size: number;
  /** Sizes seen (at creation, at each open and end of pass): more than one value = the file changed meanwhile. */
  readonly sizes: number[];
  /** True when the input was not seekable and was spooled to a temporary copy. */
  readonly spooled: boolean;
  /** Releases the spooled copy (no-op for regular files). */
  close(): void;
}

function inputError(path: string, e: unknown, what: string): RawtraceError {
  if (e instanceof RawtraceError) return e;
  return new RawtraceError("IO", `${path}: ${what}: ${(e as Error).message}`, path);
}

/** Copies everything readable from `fd` into an unnamed temporary; returns its descriptor and size. */
function spool(path: string, fd: number): { fd: number; size: number } {
  const t = createTemp(join(tmpdir(), "rawtrace-input"), "spool", true);
  // Unnamed at once: the copy disappears with the descriptor, also on SIGKILL.
  removeOwned(t.path);
  const buf = Buffer.allocUnsafe(1 << 20);
  let size = 0;
  try {
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, buf, 0, buf.length, null);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "EAGAIN") continue;
        throw inputError(path, e, "cannot read");
      }
      if (n === 0) break;
      writeAll(t.fd, buf.subarray(0, n), `${path} (spooled to ${tmpdir()})`);
      size += n;
    }
  } catch (e) {
    closeSync(t.fd);
    throw e;
  }
  return { fd: t.fd, size };
}

/** A ByteSource reading `path` sequentially (each open() starts at byte 0). */
export function fileSource(path: string): FileByteSource {
  let fd: number;
  let size: number;
  let spooledFd = -1;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    throw inputError(path, e, "cannot open");
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) throw new RawtraceError("IO", `${path}: is a directory, not a .rawtrace file`, path);
    if (st.isFile() || st.isBlockDevice()) {
      size = st.size;
    } else {
      const s = spool(path, fd);
      spooledFd = s.fd;
      size = s.size;
    }
  } finally {
    closeSync(fd);
  }
  const sizes = [size];
  const note = (n: number) => {
    if (sizes[sizes.length - 1] !== n) sizes.push(n);
  };
  const spooled = spooledFd >= 0;
  return {
    name: basename(path),
    path,
    size,
    sizes,
    spooled,
    open() {
      if (spooled) {
        let pos = 0;
        return {
          read(dst: Uint8Array) {
            const n = readSync(spooledFd, dst, 0, dst.length, pos);
            pos += n;
            return n;
          },
        };
      }
      let f: number;
      try {
        f = openSync(path, "r");
        note(fstatSync(f).size);
      } catch (e) {
        throw inputError(path, e, "cannot open");
      }
      return {
        read(dst: Uint8Array) {
          try {
            return readSync(f, dst, 0, dst.length, null);
          } catch (e) {
            throw inputError(path, e, "cannot read");
          }
        },
        close() {
          try {
            note(fstatSync(f).size);
          } finally {
            closeSync(f);
          }
        },
      };
    },
    close() {
      if (spooledFd >= 0) closeSync(spooledFd);
      spooledFd = -1;
    },
  };
}

/**
 * Adds a `STILL_WRITING` warning to `result.info` when `src` changed size during the run and the dump has no END
 * chunk (a collector still writing it): the output holds whatever was there when each pass read it.
 */
export function withGrowthWarning<T extends { info: FileInfo }>(src: FileByteSource, result: T): T {
  const sizes = src.sizes;
  if (sizes.length > 1 && !result.info.complete && !result.info.warnings.some((w) => w.code === "STILL_WRITING")) {
    const first = sizes[0];
    const last = sizes[sizes.length - 1];
    const w: Warning = {
      code: "STILL_WRITING", count: sizes.length - 1, offset: first, detail: last,
      message: `the file changed size during the conversion (${first} → ${last} bytes) and has no END chunk: a collector is still writing it; the output is a partial, possibly inconsistent snapshot`,
    };
    result.info.warnings.push(w);
  }
  return result;
}

/** Runs `fn` on a file's source and releases it afterwards. */
export async function withFileSource<T>(path: string, fn: (src: FileByteSource) => Promise<T>): Promise<T> {
  const src = fileSource(path);
  try {
    return await fn(src);
  } finally {
    src.close();
  }
}

/**
 * For hosts that hand paths to workers and read each input more than once (merge: plan, then convert): every
 * non-seekable input is copied once into a named exclusive temporary in the system temporary directory (owned:
 * removed by `release()`, on failure, on SIGINT/SIGTERM and at exit). Regular files are passed through.
 */
export function spoolInputs(inputs: string[]): { paths: string[]; release(): void } {
  const made: string[] = [];
  const release = () => {
    for (const p of made.splice(0)) removeOwned(p);
  };
  try {
    const paths = inputs.map((input) => {
      let st;
      try {
        st = statSync(input);
      } catch {
        return input; // its conversion reports it
      }
      if (st.isFile() || st.isDirectory() || st.isBlockDevice()) return input;
      const src = fileSource(input);
      try {
        const t = createTemp(join(tmpdir(), basename(input)), "spool");
        made.push(t.path);
        try {
          const buf = Buffer.allocUnsafe(1 << 20);
          const r = src.open() as { read(d: Uint8Array): number };
          for (let n; (n = r.read(buf)) > 0;) writeAll(t.fd, buf.subarray(0, n), `${input} (spooled to ${t.path})`);
        } finally {
          closeSync(t.fd);
        }
        return t.path;
      } finally {
        src.close();
      }
    });
    return { paths, release };
  } catch (e) {
    release();
    throw e;
  }
}

