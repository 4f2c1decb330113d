/**
 * Reading what a damaged gzip file still holds, for the CLI: its members one by one through rawtrace's own gzip
 * reader (src/core/gunzip.ts over build/inflate.wasm, the viewer's too, so both read a damaged .gz alike). Node's
 * gunzip discards the output of the call that meets an error, and fails the whole stream on a bad trailer checksum or
 * on garbage after a member (it stops silently at zeros there), so a dump whose only damage is there would lose its
 * last block, every later member or everything.
 * Used by src/node/file_source.ts once gunzip has failed, or has stopped before the file's end (zlib ends a stream
 * silently at a zero byte after a member: padding, or zeros before more members): the bytes it gives are every
 * member's, of a member whose data fails its bytes up to there, members with a bad trailer included, and the
 * members after bytes that start none (zeros, garbage) or after a damaged block: skipped up to the next 1f 8b 08
 * (a chance 1f 8b 08 there, with a header no gzip writer writes, whose data fails or whose trailer disagrees before
 * 64 KiB, is dropped: gunzip.ts).
 */
import { wasmFlags } from "./wasm_flags.js";
import { existsSync, readFileSync, readSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { RawtraceError } from "../core/codes.js";
import { gunzip } from "../core/gunzip.js";
import type { GunzipDamage } from "../core/gzip_damage.js";
import { repairGzipMagic } from "../core/gzip_magic.js";


let compiled: WebAssembly.Module | null = null;

/** The gzip reader's module: next to the bundle (dist/node/inflate.wasm) or in build/ when run from source. */
function inflateModule(): WebAssembly.Module {
  if (compiled) return compiled;
  const candidates = [new URL("./inflate.wasm", import.meta.url), new URL("../../build/inflate.wasm", import.meta.url)].map((u) => fileURLToPath(u));
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new RawtraceError("NO_CORE", `rawtrace gzip reader not built: none of ${candidates.join(", ")} exists (run npm run build)`);
  wasmFlags();
  compiled = new WebAssembly.Module(readFileSync(found));
  return compiled;
}

/**
 * The bytes of file `fd` from `from` to `size`, by positional reads (the descriptor is neither moved nor closed);
 * `repair`: with gzip's 1f 8b 08 over its first three bytes (src/core/gzip_magic.ts).
 */
async function* bytesOf(fd: number, size: number, from: number, repair: boolean): AsyncGenerator<Uint8Array> {
  for (let pos = from; pos < size;) {
    const b = Buffer.allocUnsafe(Math.min(1 << 20, size - pos));
    const n = readSync(fd, b, 0, b.length, pos);
    if (n === 0) return;
    if (repair && pos < 3) repairGzipMagic(b.subarray(0, n), pos);
    pos += n;
    yield b.subarray(0, n);
  }
}

/**
 * The decompressed bytes of the gzip file `fd` (`size` bytes), member after member, as far as they can be read.
 * `onDamage` is called once, at the first damage: a member whose data fails (its bytes up to the failure given, the
 * walk going on at the next member after it), a bad trailer checksum or length (its bytes were given; the walk goes on), a file that ends
 * inside a member (`truncated`), or bytes after a member that start no member, unless they are only zeros at the end
 * (skipped up to the next member; said where they start). Data that starts no gzip member throws ("incorrect header
 * check"). `from` > 0: the walk starts there, where a member ended (gunzip read everything before). A member cut short
 * where another member's header starts gives its bytes up to there, then the members from there on; `floor`: the
 * bytes gunzip gave already, which the caller skips of the walk's: those members start past them (gunzip, fed no
 * further than the first member header after the file's start, gives none past a cut). `repair`: the file's first
 * three bytes are read as gzip's 1f 8b 08 (one of them is damaged: src/core/gzip_magic.ts).
 */
export async function* gzipMembers(
  fd: number, size: number, onDamage: (d: GunzipDamage) => void, from = 0, floor = 0, repair = false,
): AsyncGenerator<Uint8Array> {
  yield* gunzip(inflateModule(), bytesOf(fd, size, from, repair), onDamage, from, floor);
}
