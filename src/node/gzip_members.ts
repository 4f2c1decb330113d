/**
 * Reading what a damaged gzip file still holds: its members one by one (RFC 1952), each member's DEFLATE data through
 * zlib's raw inflater, which stops at the end of the data instead of checking the trailer and the next member's
 * header as `createGunzip` does. Node's gunzip discards the output of the call that meets an error, and fails the
 * whole stream on a bad trailer checksum or on bytes after the last member, so a dump whose only damage is there
 * would lose its last block or everything. Used by src/node/file_source.ts once gunzip has failed: the bytes it gives
 * are every member's up to the first whose data fails (its bytes up to there), members with a bad trailer included;
 * members after a damaged block are not searched for.
 */
import { readSync } from "node:fs";
import { createInflateRaw, crc32 } from "node:zlib";
import { Readable } from "node:stream";

/** Where and why the walk stopped or found damage (compressed byte offset, zlib's or our message). */
export interface GzipDamage {
  compressedAt: number;
  message: string;
}

/** Bytes of file `fd` from `pos` as a stream (positional reads: the descriptor is neither moved nor closed). */
function streamAt(fd: number, pos: number): Readable {
  return Readable.from((function* () {
    for (let p = pos; ;) {
      const b = Buffer.allocUnsafe(1 << 16);
      const n = readSync(fd, b, 0, b.length, p);
      if (n === 0) return;
      p += n;
      yield b.subarray(0, n);
    }
  })());
}

/** Up to `n` bytes of `fd` at `pos`. */
function bytesAt(fd: number, pos: number, n: number): Buffer {
  const b = Buffer.alloc(n);
  let k = 0;
  while (k < n) {
    const r = readSync(fd, b, k, n - k, pos + k);
    if (r === 0) break;
    k += r;
  }
  return b.subarray(0, k);
}

/** Length of the gzip member header at the start of `h` (RFC 1952 §2.3), or -1 when `h` does not start one. */
function headerLength(h: Buffer): number {
  if (h.length < 10 || h[0] !== 0x1f || h[1] !== 0x8b || h[2] !== 8) return -1;
  const flags = h[3];
  let p = 10;
  if (flags & 4) {
    if (p + 2 > h.length) return -1;
    p += 2 + h.readUInt16LE(p); // FEXTRA
  }
  for (const bit of [8, 16]) {
    if (!(flags & bit)) continue; // FNAME, FCOMMENT: zero-terminated
    const z = h.indexOf(0, p);
    if (z < 0) return -1;
    p = z + 1;
  }
  if (flags & 2) p += 2; // FHCRC
  return p <= h.length ? p : -1;
}

/**
 * The decompressed bytes of the gzip file `fd` (`size` bytes), member after member, as far as they can be read.
 * `onDamage` is called once, at the first damage: a member whose data fails (the walk ends there), a bad trailer
 * checksum or length (its bytes were given all the same; the walk goes on), a file that ends inside a member, or
 * bytes after the last member that start no member (the walk ends). A first member that cannot start throws
 * zlib's error.
 */
export async function* gzipMembers(fd: number, size: number, onDamage: (d: GzipDamage) => void): AsyncGenerator<Buffer> {
  let damaged = false;
  const damage = (compressedAt: number, message: string) => {
    if (!damaged) onDamage({ compressedAt, message });
    damaged = true;
  };
  for (let pos = 0; pos < size;) {
    const hl = headerLength(bytesAt(fd, pos, 64 << 10));
    if (hl < 0) {
      if (pos === 0) throw Object.assign(new Error("incorrect header check"), { code: "Z_DATA_ERROR" });
      damage(pos, `${size - pos} bytes after the last gzip member start no member`);
      return;
    }
    const inflate = createInflateRaw();
    const input = streamAt(fd, pos + hl);
    input.pipe(inflate);
    let crc = 0;
    let length = 0;
    try {
      for await (const c of inflate as AsyncIterable<Buffer>) {
        crc = crc32(c, crc);
        length += c.length;
        yield c;
      }
    } catch (e) {
      damage(pos + hl + inflate.bytesWritten, (e as Error).message);
      return;
    } finally {
      input.destroy();
      inflate.destroy();
    }
    const end = pos + hl + inflate.bytesWritten;
    const trailer = bytesAt(fd, end, 8);
    if (trailer.length < 8) {
      damage(end, "the file ends inside a gzip member's trailer");
      return;
    }
    if (trailer.readUInt32LE(0) !== crc >>> 0 || trailer.readUInt32LE(4) !== length % 2 ** 32) {
      damage(end, "a gzip member's checksum or length does not match its data");
    }
    pos = end + 8;
  }
}
