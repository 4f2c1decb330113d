/**
 * Node file access for the engine: a re-openable ByteSource over a path, read with positional reads.
 *
 * A conversion reads its input two or three times (index, NVTX projection, emit). A non-seekable input (a FIFO,
 * `/dev/stdin`, a process substitution) can be read only once: it is spooled into an unnamed temporary file (created
 * exclusively in the system temporary directory, mode 0600, unlinked at once so nothing is left whatever happens)
 * and every pass reads the copy.
 *
 * A dump still being written (the collector has not closed it) changes size under the reader: the source notes the
 * size at every open and at every end of pass (a gzipped dump's compressed size), and {@link withSourceWarnings}
 * turns a change into a `STILL_WRITING` warning when the dump has no END chunk, `FILE_CHANGED` when it has one and a
 * pass after the index pass saw another size.
 *
 * A gzip-compressed dump (`.rawtrace.gz`, recognised by its first two bytes 1f 8b whatever its name) is decompressed
 * as it is read, in every pass: nothing decompressed is stored, on disk or in memory beyond zlib's window. A gzip
 * stream cut short yields what it holds (the core then reports the truncated dump, or GZIP_DAMAGED says where it was
 * cut when the dump is whole: a cut in a trailer); a stream damaged after its start
 * yields what its members still hold (src/node/gzip_members.ts, warning GZIP_DAMAGED); one that gives nothing is IO.
 * Bytes after a member that start no member (zeros, where zlib stops silently, or garbage) are skipped up to the next
 * member, whose bytes are read too (GZIP_DAMAGED where they start); only zeros after the last member are padding, not
 * said.
 */
import { closeSync, fstatSync, openSync, read, readSync, statSync } from "node:fs";
import { promisify } from "node:util";
import { crc32, createGunzip } from "node:zlib";
import { Readable } from "node:stream";
import { basename, join } from "node:path";
import { tmpdir } from "node:os";
import type { ByteSource, FileInfo } from "../core/engine.js";
import { FATAL_MESSAGES, HOST_WARN_NAMES, RawtraceError, type Warning } from "../core/codes.js";
import { GzipStartError, nextMemberHeader } from "../core/gunzip.js";
import { gzipDamageFor, type GunzipDamage } from "../core/gzip_damage.js";
import { GZIP_HEAD_BYTES, gzipMagicWarning, gzipStart, repairGzipMagic, repairedGzipNote } from "../core/gzip_magic.js";
import { createTemp, writeAll } from "./output.js";
import { removeOwned, withDefaultSignals } from "./owned.js";
import { CHUNK_HEADER_SIZE, CHUNK_SYNC, FORMAT_MAJOR, MAGIC, PREAMBLE_SIZE } from "../format/container.js";
import { SNIFF_BYTES, describeStart } from "../core/sniff.js";
import { dumpName } from "./inputs.js";
import { gzipMembers } from "./gzip_members.js";
import { InflatedCopy } from "./inflated_copy.js";

/** A file's ByteSource; {@link FileByteSource.close} releases a spooled copy. */
export interface FileByteSource extends ByteSource {
  size: number;
  /** Sizes seen (at creation, at each open and end of pass): more than one value = the file changed meanwhile. */
  readonly sizes: number[];
  /** True when the input was not seekable and was spooled to a temporary copy. */
  readonly spooled: boolean;
  /**
   * A gzip input damaged after its start (a bad checksum, bytes after a member that start none and are not only zeros
   * at the end, a damaged block): where (the compressed byte offset), how many bytes of dump it still held (what was
   * converted) and what is wrong.
   */
  readonly gzipDamage?: GunzipDamage;
  /**
   * A gzip input one of whose first three bytes is damaged (src/core/gzip_magic.ts gzipStart: "damaged"): those bytes
   * as found (it is read with them repaired, and said as GZIP_MAGIC_DAMAGED).
   */
  readonly gzipMagicDamaged?: Uint8Array;
  /** Releases the spooled copy (no-op for regular files). */
  close(): void;
}

/**
 * The sizes a source's `hostWarnings` reported, for each source asked: what the output's own warnings say, so that
 * {@link withSourceWarnings} gives the result the same sizes (a size seen after the output's end was written, by the
 * last pass's close, changed nothing the conversion read).
 */
const sizesSaid = new WeakMap<FileByteSource, Seen>();

/**
 * The sizes a source saw: every change over its life (`sizes`), and per read of the current conversion, from its
 * index pass on, the size at its open and at its end (`passes`).
 */
interface Seen {
  sizes: readonly number[];
  passes?: ReadonlyArray<readonly number[]>;
}

function inputError(path: string, e: unknown, what: string): RawtraceError {
  if (e instanceof RawtraceError) return e;
  return new RawtraceError("IO", `${path}: ${what}: ${(e as Error).message}`, path);
}

/**
 * Opens the input `path` for reading. Standard input that is a socket (a parent process's stdio) cannot be opened
 * again by name: descriptor 0 itself is returned then, with `owned` false (not to be closed).
 */
function openInput(path: string): { fd: number; owned: boolean } {
  try {
    return { fd: openSync(path, "r"), owned: true };
  } catch (e) {
    if (path !== "/dev/stdin" || (e as NodeJS.ErrnoException).code !== "ENXIO") throw inputError(path, e, "cannot open");
    return { fd: 0, owned: false };
  }
}


/**
 * Whether `head` (a stream's first bytes, at least 8, or all of them when fewer) can start a dump: the preamble's
 * magic, gzip's 1f 8b (a gzipped dump), or a prefix of the magic when the stream ended before 8 bytes (the core
 * then reports EMPTY, naming the length).
 */
function mayBeDump(head: Buffer): boolean {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return true;
  const n = Math.min(head.length, MAGIC.length);
  return head.subarray(0, n).equals(MAGIC.subarray(0, n)); // MAGIC: src/format/container.ts, the preamble's "RAWTRACE"
}

/**
 * Whether `head` (a stream's first 40 bytes, its magic not a dump's) is a dump whose magic is damaged, as the core
 * decides it (assembly/format/container.ts): a chunk header whose sync word and header CRC hold at offset 16, and a
 * format major that is not a newer one's (1 or 0, or one bit away from 1).
 */
function damagedMagicDump(head: Buffer): boolean {
  const c = PREAMBLE_SIZE;
  const major = head.readUInt16LE(8);
  const flipped = major ^ FORMAT_MAJOR; // one changed bit of a format 1 dump's major: read as damaged, as the core does
  return head.length >= c + CHUNK_HEADER_SIZE && (major <= FORMAT_MAJOR || (flipped & (flipped - 1)) === 0) && head.readUInt32LE(c) === CHUNK_SYNC &&
    (crc32(head.subarray(c, c + 20)) >>> 0) === head.readUInt32LE(c + 20);
}

/**
 * Copies everything readable from `fd` (sequential reads) to `to`; returns the bytes copied. Errors name `path`.
 * The first bytes are checked before anything more is copied (8, or 40 when they are not a dump's magic: a chunk
 * header at offset 16 may prove a dump whose magic is damaged, and a gzip header a gzipped dump whose first bytes
 * are): a stream that is not a dump (`/dev/zero`, `yes |`, a text file through a pipe) is refused with BAD_MAGIC at
 * once, instead of being spooled until the disk is full.
 */
function copyAll(path: string, fd: number, to: number, where: string): number {
  const buf = Buffer.allocUnsafe(1 << 20);
  let size = 0;
  const head = Buffer.alloc(SNIFF_BYTES);
  let headLen = 0;
  let decided = false;
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, buf, 0, buf.length, null);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EAGAIN") continue;
      throw inputError(path, e, "cannot read");
    }
    if (n === 0) return size;
    if (!decided) {
      // Reads from a pipe may be short: the head gathers across them. A dump's magic or gzip's decides at 8 bytes;
      // other bytes wait for the first chunk header, which proves a dump whose magic is damaged (PREAMBLE_DAMAGED), or
      // a gzip header whose first bytes are damaged (GZIP_MAGIC_DAMAGED).
      const k = Math.min(n, SNIFF_BYTES - headLen);
      buf.copy(head, headLen, 0, k);
      headLen += k;
      if (headLen >= MAGIC.length && mayBeDump(head.subarray(0, MAGIC.length))) decided = true;
      else if (headLen === SNIFF_BYTES) {
        if (!damagedMagicDump(head) && gzipStart(head) !== "damaged") {
          throw new RawtraceError("BAD_MAGIC", `${path}: offset 0: ${FATAL_MESSAGES.BAD_MAGIC}${describeStart(head)}`, path, 0);
        }
        decided = true;
      }
    }
    writeAll(to, buf.subarray(0, n), `${path} (spooled to ${where})`, "cannot spool the input");
    size += n;
  }
}

/** Copies everything readable from `fd` into an unnamed temporary; returns its descriptor and size. */
function spool(path: string, fd: number): { fd: number; size: number } {
  const t = createTemp(join(tmpdir(), "rawtrace-input"), "spool", true);
  // Unnamed at once: the copy disappears with the descriptor, also on SIGKILL.
  removeOwned(t.path);
  try {
    return { fd: t.fd, size: withDefaultSignals(() => copyAll(path, fd, t.fd, tmpdir())) };
  } catch (e) {
    closeSync(t.fd);
    throw e;
  }
}

/**
 * Whether the regular file at `path` is gzip-compressed (starts with 1f 8b, or with a gzip header whose first bytes
 * are damaged: src/core/gzip_magic.ts); false for anything else (a FIFO or standard input is never opened here: that
 * would take bytes from its one reader) or what cannot be read.
 */
export function isGzipFile(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isFile() === true && gzipHead(-1, path) !== null;
  } catch {
    return false; // a symlink loop, a path through a file, a name too long: the input's open says so, naming it
  }
}

/**
 * The first bytes of a gzip file (the spooled copy `fd`, else the file at `path`): `head`, and whether its first
 * three are damaged ({@link gzipStart}); null when it is not gzip or cannot be read.
 */
function gzipHead(fd: number, path: string): { head: Uint8Array; damaged: boolean } | null {
  const b = Buffer.alloc(GZIP_HEAD_BYTES);
  let f = fd;
  try {
    if (f < 0) f = openSync(path, "r");
    const head = b.subarray(0, readSync(f, b, 0, b.length, 0));
    const start = gzipStart(head);
    return start === null ? null : { head, damaged: start === "damaged" };
  } catch {
    return null; // the normal path reports it
  } finally {
    if (fd < 0 && f >= 0) closeSync(f);
  }
}

/**
 * What a source over the regular file `path` sees of its size (a spooled copy never changes: nothing is watched):
 * every change over its life, and per pass of the current conversion the size at its open and at its end, from the
 * open descriptor (a file replaced by name meanwhile is not the one read). {@link sourceWarnings} reads them.
 */
interface SizeWatch {
  /** Sizes seen, in order (a change = a new entry); the first is the size at creation. */
  readonly sizes: number[];
  /**
   * Opens the file for `pass` (1 starts a new conversion) and notes its size; returns the descriptor (the caller's to
   * close, after {@link SizeWatch.closed}) and the pass's sizes. Errors name the path.
   */
  open(pass: 1 | 2 | 3 | undefined): { fd: number; seen: number[] };
  /** Notes the size of `fd` at the end of the pass whose sizes are `seen`. */
  closed(seen: number[], fd: number): void;
  /** What the sizes say now (the size by name noted first: the end of the last read), for the output's end. */
  said(): Seen;
}

function sizeWatch(path: string, first: number, spooled: boolean): SizeWatch {
  const sizes = [first];
  const note = (n: number) => {
    if (sizes[sizes.length - 1] !== n) sizes.push(n);
  };
  // Per read of the current conversion (from its index pass on): the sizes at its open and close.
  const passes: number[][] = [];
  return {
    sizes,
    open(pass) {
      let fd = -1;
      try {
        fd = openSync(path, "r");
        const seen = [fstatSync(fd).size];
        if (pass === 1) passes.length = 0;
        note(seen[0]);
        passes.push(seen);
        return { fd, seen };
      } catch (e) {
        if (fd >= 0) closeSync(fd);
        throw inputError(path, e, "cannot open");
      }
    },
    closed(seen, fd) {
      seen.push(fstatSync(fd).size);
      note(seen[seen.length - 1]);
    },
    said() {
      // The size now, at the end of the last read (the output's end is written next).
      let now = -1;
      if (!spooled) {
        try {
          now = statSync(path).size;
          note(now);
        } catch {
          // gone meanwhile: the sizes seen so far
        }
      }
      return { sizes: sizes.slice(), passes: passes.map((p, i) => (i === passes.length - 1 && now >= 0 ? [...p, now] : p.slice())) };
    },
  };
}

const readAsync = promisify(read);
/** Reads up to `b.length` bytes of `fd` at `pos` in Node's thread pool; resolves with the count. */
const readAt = (fd: number, b: Buffer, pos: number): Promise<number> => readAsync(fd, b, 0, b.length, pos).then((r) => r.bytesRead);

/**
 * A ByteSource over a gzip-compressed dump: each open() decompresses from the start (streaming, through zlib), so
 * every pass reads the same bytes. `size` (progress) is the compressed size, or gzip's trailer size when larger
 * (exact for one member under 4 GiB). The trace's name is {@link dumpName}'s.
 */
function gzipSource(path: string, spooledFd: number, compressed: number, watch: SizeWatch, damagedHead: Uint8Array | null): FileByteSource {
  const name = dumpName(path);
  let size = compressed;
  try {
    const t = Buffer.alloc(4);
    const f = spooledFd >= 0 ? spooledFd : openSync(path, "r");
    try {
      if (compressed >= 18 && readSync(f, t, 0, 4, compressed - 4) === 4) size = Math.max(compressed, t.readUInt32LE(0));
    } finally {
      if (spooledFd < 0) closeSync(f);
    }
  } catch {
    // the size is only a progress hint
  }
  let gzipDamage: GunzipDamage | undefined;
  // Where the bytes given stop being the file's own as far as the gzip stream tells (the first damage's verifiedTo,
  // in bytes of the dump): the core reads no cut buffer chunk past it (ByteSource.unverifiedFrom). The first walk's
  // first damage and the dump offset that walk started giving at: its verifiedTo may be set after onDamage (zeros
  // skipped between members, then a damaged member), so it is read when asked, at a pass's end.
  let verified: { at: number; d: GunzipDamage } | undefined;
  const unverifiedAt = () => (verified?.d.verifiedTo === undefined ? undefined : verified.at + verified.d.verifiedTo);
  // The byte count at which gunzip failed in a pass whose member walk then gave no byte more (a file cut short:
  // gunzip gave all it held): later passes end there instead of inflating the whole file a second time.
  let zlibEndsAt = -1;
  // The index pass's decompressed bytes, for the same conversion's later passes (null: they inflate the file).
  let copy: InflatedCopy | null = null;
  const src: FileByteSource = {
    name,
    path,
    size,
    sizes: watch.sizes,
    spooled: spooledFd >= 0,
    get gzipDamage() {
      return gzipDamage;
    },
    gzipMagicDamaged: damagedHead ?? undefined,
    unverifiedFrom() {
      return unverifiedAt();
    },
    hostWarnings(info: FileInfo) {
      // The compressed file's sizes: one that grows or shrinks while read is the plain file's STILL_WRITING or
      // FILE_CHANGED, by the dump its members hold.
      const said = watch.said();
      sizesSaid.set(src, said);
      return sourceWarnings({ gzipDamage, gzipMagicDamaged: src.gzipMagicDamaged, ...said }, info);
    },
    open(pass?: 1 | 2 | 3, alone?: boolean) {
      sizesSaid.delete(src); // a pass of another conversion: what it says is its own
      // The later passes of a conversion whose index pass kept its bytes read them back instead of inflating the
      // file again (src/node/inflated_copy.ts); the index pass keeps them, a new copy for each conversion (none for
      // a pass read alone: `info`).
      if (pass !== undefined && pass !== 1 && copy?.complete) return copy.reader();
      copy?.close();
      copy = pass === 1 && !alone ? InflatedCopy.start() : null;
      let keep = copy;
      // Read with positional reads of our own (a ReadStream over a descriptor closes it when destroyed, Node 20,
      // autoClose: false or not): the spooled copy serves every pass; a file is opened per pass, and its descriptor
      // gives its size at the pass's open and end (a file replaced by name meanwhile is not the one read).
      const own = spooledFd < 0;
      let fd = spooledFd;
      let seen: number[] | undefined;
      if (own) ({ fd, seen } = watch.open(pass));
      // The compressed bytes this pass may read: the member walk stops there (a file that grows meanwhile is said).
      const end = seen ? seen[0] : compressed;
      // Reads of 64 KiB in Node's thread pool, as a ReadStream reads them, overlapping zlib's; close() waits for
      // the one in flight before closing the descriptor.
      let inFlight: Promise<unknown> = Promise.resolve();
      const file = Readable.from((async function* () {
        for (let pos = 0; ;) {
          const b = Buffer.allocUnsafe(1 << 16);
          let n: number;
          try {
            const r = readAt(fd, b, pos);
            inFlight = r.catch(() => 0);
            n = await r;
          } catch (e) {
            throw inputError(path, e, "cannot read");
          }
          if (n === 0) return;
          if (damagedHead && pos < 3) repairGzipMagic(b.subarray(0, n), pos);
          // zlib is not fed past the next member header a gzip writer writes: a member cut short there (a crashed
          // appender, `cat cut.gz more.gz`) would decode the members after it as its own data, garbage given
          // before it fails. zlib then ends at that member's end (a whole member before it: the walk reads on from
          // there) or fails inside it (the walk reads from the start, which tells a cut member from a chance 1f 8b 08).
          const stop = nextMemberHeader(b, n, pos, (at) => {
            const h = Buffer.alloc(10);
            return h.subarray(0, readSync(fd, h, 0, 10, at));
          });
          if (stop >= 0) {
            if (stop > 0) yield b.subarray(0, stop);
            return;
          }
          pos += n;
          yield b.subarray(0, n);
        }
      })());
      const gunzip = createGunzip();
      file.on("error", (e) => gunzip.destroy(e));
      let chunks: AsyncIterator<Uint8Array> = file.pipe(gunzip)[Symbol.asyncIterator]();
      let cur: Uint8Array | null = null;
      let at = 0;
      let ended = false;
      let produced = 0;
      // After gunzip failed: the member walk (gzip_members.ts) from the start, its first `skip` bytes already given.
      let recovering = false;
      let skip = 0;
      let zlibGave = -1; // bytes gunzip had given when it failed (the walk then skips them)
      let walkDamage: GunzipDamage | undefined; // this read's, whose `filler` the walk adds to as it goes on
      /** Reads on with the member walk from compressed byte `from` (0: again from the start, `skip` bytes given). */
      const walkFrom = (from: number) => {
        recovering = true;
        // The walk counts its bytes from where it starts giving them: the file's start (from 0: it gives again what
        // gunzip gave), or the end of what gunzip gave.
        const at = from === 0 ? 0 : produced;
        // From the start: the bytes gunzip gave are skipped, and the members after a member cut short start past them
        // (`floor`: gunzip stops at the first member header, so it never decodes on past a cut; should it, its bytes
        // there are not followed by the next member's at an offset they overlap).
        chunks = gzipMembers(fd, end, (d) => {
          walkDamage = d;
          gzipDamage ??= { ...d, decompressed: 0 };
          verified ??= { at, d };
        }, from, from === 0 ? skip : 0, damagedHead !== null)[Symbol.asyncIterator]();
      };
      return {
        async read(dst: Uint8Array) {
          let n = 0;
          let whole = false; // the stream ended with this read, every byte given
          while (n < dst.length && !ended) {
            if (cur === null || at >= cur.length) {
              let r: IteratorResult<Uint8Array>;
              try {
                r = await chunks.next();
              } catch (e) {
                const err = e as NodeJS.ErrnoException;
                // Damaged after its start (a bad checksum or length in a trailer, bytes after a member that are not
                // zeros, a damaged block): gunzip gave up and dropped its last output, so the file is read again
                // member by member, which keeps a member's bytes whatever its trailer says and goes on to the members
                // after.
                // Every chunk of the dump checks its own payload; the host reports the damage (withSourceWarnings).
                // A stream cut short (Z_BUF_ERROR: gunzip gave every byte it held) is walked too, to say where it
                // ends: inside a member's data the dump's own TRUNCATED says what is missing, but cut inside its
                // 8-byte trailer the dump is whole and only the walk tells that its checksum went unchecked.
                if (err.code?.startsWith("Z_") && !recovering) {
                  // An earlier pass walked this file from here and the walk gave nothing more: the end, as then.
                  if (produced === zlibEndsAt && gzipDamage) {
                    ended = true;
                    whole = true;
                    break;
                  }
                  skip = produced;
                  zlibGave = produced;
                  walkFrom(0);
                  continue;
                }
                throw inputError(path, e, err.code?.startsWith("Z_") ? "cannot decompress (damaged gzip)" : "cannot read");
              }
              if (r.done) {
                // gunzip ends silently at a zero byte after a member (zlib's padding rule), so members after zeros
                // would be lost: the rest is walked from there (only zeros to the end: padding, nothing said). A
                // whole file costs one comparison.
                if (!recovering && gunzip.bytesWritten < end) {
                  file.unpipe(gunzip);
                  file.destroy();
                  gunzip.destroy();
                  walkFrom(gunzip.bytesWritten);
                  continue;
                }
                ended = true;
                if (zlibGave >= 0 && produced === zlibGave) zlibEndsAt = zlibGave;
                // Nothing could be read at all: not a gzip file this can read (the core would say EMPTY).
                if (produced === 0 && gzipDamage) {
                  const note = damagedHead ? repairedGzipNote(damagedHead) : "";
                  throw inputError(path, new GzipStartError(gzipDamage.compressedAt, gzipDamage.message + note),
                    "cannot decompress (damaged gzip)");
                }
                // Every byte of the dump given, not the zeros given in place of a damaged member's lost bytes.
                if (gzipDamage) {
                  const filler = walkDamage?.filler ?? 0;
                  gzipDamage.filler = filler;
                  if (walkDamage?.overrun) gzipDamage.overrun = walkDamage.overrun;
                  // In bytes of the dump, as the viewer's (a walk from a member's end counts from there).
                  const v = unverifiedAt();
                  if (v !== undefined) gzipDamage.verifiedTo = v;
                  gzipDamage.decompressed = produced - filler;
                }
                whole = true;
                break;
              }
              cur = r.value;
              at = 0;
              if (skip > 0) {
                const k = Math.min(skip, cur.length);
                skip -= k;
                at = k;
                continue;
              }
            }
            const k = Math.min(dst.length - n, cur.length - at);
            dst.set(cur.subarray(at, at + k), n);
            n += k;
            at += k;
            produced += k;
          }
          if (keep && n > 0 && !keep.append(dst.subarray(0, n))) keep = null;
          if (keep && whole) {
            keep.finish();
            keep = null;
          }
          return n;
        },
        async close() {
          gunzip.destroy();
          file.destroy();
          void chunks.return?.();
          await inFlight;
          if (!own || fd < 0) return;
          try {
            if (seen) watch.closed(seen, fd);
          } finally {
            closeSync(fd);
            fd = -1;
          }
        },
      };
    },
    close() {
      if (spooledFd >= 0) closeSync(spooledFd);
      spooledFd = -1;
      copy?.close();
      copy = null;
    },
  };
  return src;
}

/** A ByteSource reading `path` sequentially (each open() starts at byte 0). */
export function fileSource(path: string): FileByteSource {
  let fd: number;
  let size: number;
  let spooledFd = -1;
  const input = openInput(path);
  fd = input.fd;
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
    if (input.owned) closeSync(fd);
  }
  const spooled = spooledFd >= 0;
  const watch = sizeWatch(path, size, spooled);
  const gz = gzipHead(spooled ? spooledFd : -1, path);
  if (gz) return gzipSource(path, spooled ? spooledFd : -1, size, watch, gz.damaged ? gz.head : null);
  const src: FileByteSource = {
    name: basename(path),
    path,
    size,
    sizes: watch.sizes,
    spooled,
    hostWarnings(info: FileInfo) {
      const said = watch.said();
      sizesSaid.set(src, said);
      return sourceWarnings(said, info);
    },
    open(pass?: 1 | 2 | 3) {
      sizesSaid.delete(src); // a pass of another conversion: what it says is its own
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
      const { fd: f, seen } = watch.open(pass);
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
            watch.closed(seen, f);
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
  return src;
}

/**
 * Adds the host's warnings about `src` to `result.info`: `STILL_WRITING` when it changed size during the run and the
 * dump has no END chunk (a collector still writing it: the output holds whatever was there when each pass read it),
 * `FILE_CHANGED` when it did although the dump is complete (cut, replaced or appended to while read),
 * `GZIP_DAMAGED` when its gzip stream is damaged after its start (what it still holds was converted), or cut short
 * where the dump shows no TRUNCATED (a cut inside a member's trailer: the dump whole, its checksum unchecked).
 */
export function withSourceWarnings<T extends { info: FileInfo }>(src: FileByteSource, result: T): T {
  const ws = result.info.warnings;
  const mine = ws.filter((w) => !(HOST_WARN_NAMES as readonly string[]).includes(w.code));
  const said = sizesSaid.get(src);
  for (const w of sourceWarnings(said ? { gzipDamage: src.gzipDamage, gzipMagicDamaged: src.gzipMagicDamaged, ...said } : src, { ...result.info, warnings: mine })) {
    // Given to the core before the output's end (hostWarnings): the host's entry replaces the core's, in the host's
    // words, with the sizes the output's end was written with (the file may grow again after that: the conversion
    // read none of it, and the output and the result say the same).
    const i = ws.findIndex((x) => x.code === w.code);
    if (i < 0) ws.push(w);
    else ws[i] = w;
  }
  return result;
}

/**
 * The host's warnings about a source (see {@link withSourceWarnings}) for a conversion whose core found `info` so
 * far: a FileByteSource's `hostWarnings`, asked before the output's end is written, and withSourceWarnings after.
 */
function sourceWarnings(src: { gzipDamage?: GunzipDamage; gzipMagicDamaged?: Uint8Array } & Seen, info: FileInfo): Warning[] {
  const out: Warning[] = [];
  if (src.gzipMagicDamaged) out.push(gzipMagicWarning(src.gzipMagicDamaged));
  // A file cut inside a member's data is the dump's TRUNCATED (what it held was converted); a cut that leaves no
  // trace in the dump (in a trailer, in a later member's header, after a block's last byte) is said here.
  const g = gzipDamageFor(src.gzipDamage, info.warnings);
  if (g) out.push(g);
  const sizes = src.sizes;
  if (sizes.length > 1 && !info.complete && !info.warnings.some((w) => w.code === "STILL_WRITING")) {
    const first = sizes[0];
    const last = sizes[sizes.length - 1];
    out.push({
      code: "STILL_WRITING", count: sizes.length - 1, offset: first, detail: last,
      message: `the file changed size during the conversion (${first} → ${last} bytes) and has no END chunk: a collector is still writing it; the output is a partial, possibly inconsistent snapshot`,
    });
  }
  // A complete dump does not change once indexed: one that did was cut, replaced or appended to while a later pass
  // read it (a new dump copied over it), and a pass that read fewer bytes than the index pass converted a part
  // silently (before). A dump that grew while the index pass read it (a collector writing its END then) is no loss:
  // every later pass saw the size the index pass ended with. One cut while the index pass read it is measured from
  // the largest size that pass saw, which it may have read whole (before: from its end, so that a cut after the
  // index pass's last read went unsaid).
  const ps = src.passes ?? [];
  const indexed = ps.length ? Math.max(...ps[0]) : undefined;
  const changed = ps.slice(1).flat().find((n) => n !== indexed);
  if (indexed !== undefined && changed !== undefined && info.complete && !info.warnings.some((w) => w.code === "FILE_CHANGED")) {
    out.push({
      code: "FILE_CHANGED", count: 1, offset: indexed, detail: changed,
      message: `the file changed size during the conversion (${indexed} → ${changed} bytes after its index pass) although it was complete (END chunk): it was cut, replaced or appended to while it was read; the output holds what each pass read and may miss events or mix two versions`,
    });
  }
  return out;
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
 * `e` naming the inputs as given (`inputs[i]` for a read of `reads[i]`, from {@link spoolInputs}): an error about a
 * spooled copy (standard input or a FIFO read twice) names the copy, a temporary the user never saw and that is gone
 * once the command returns (merge, stats --steps, diff).
 */
export function givenNames(e: unknown, reads: readonly string[], inputs: readonly string[]): unknown {
  if (!(e instanceof RawtraceError)) return e;
  let message = e.message;
  let file = e.file;
  for (let i = 0; i < reads.length; i++) {
    if (reads[i] === inputs[i]) continue;
    message = message.split(reads[i]).join(inputs[i]);
    if (file === reads[i]) file = inputs[i];
  }
  if (message === e.message && file === e.file) return e;
  const named = new RawtraceError(e.code, message, file, e.offset);
  named.stack = e.stack?.split(reads.find((r, i) => r !== inputs[i]) ?? "\u0000").join("<spooled input>");
  return named;
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
      // The bytes as they come (a gzipped dump stays gzipped: the copy is read like any file, decompressed then).
      const from = openInput(input);
      try {
        const t = createTemp(join(tmpdir(), basename(input)), "spool");
        made.push(t.path);
        try {
          // Killable while it copies (withDefaultSignals); a copy cut short by a signal stays in the temporary folder.
          withDefaultSignals(() => copyAll(input, from.fd, t.fd, t.path));
        } finally {
          closeSync(t.fd);
        }
        return t.path;
      } finally {
        if (from.owned) closeSync(from.fd);
      }
    });
    return { paths, release };
  } catch (e) {
    release();
    throw e;
  }
}

