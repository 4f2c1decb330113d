/**
 * XXH32, the payload checksum of new `.rawtrace` chunks (docs/format.md, flag bit 1), has three implementations that
 * must agree bit for bit: src/format/xxh32.ts (the TypeScript writer), assembly/util/xxh32.ts (the reader, v128
 * stripe loop + scalar tail; exported as `rt_xxh32`) and `rt_xxh32` in collectors/common/rawtrace_checksum.c.
 *
 * Known answers: the empty input with seed 0 is the specification's 0x02CC5D05 (Cyan4973/xxHash,
 * doc/xxhash_spec.md); the others were computed with Debian's libxxhash 0.8.1 (XXH32 through Python ctypes) when
 * this test was written, covering each path: < 4 bytes (byte tail only), 4..15 (u32 + byte tail, no stripes),
 * exactly one stripe, stripes + every tail length, and a seed. Then the three implementations are compared on
 * xorshift32 bytes from a fixed seed: every length 0..300 at every offset 0..7, and long buffers at odd offsets.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { checksumCore as core, eachBitFlipChanges, forEachDriverLine, pattern, placeInCore, xorshift, type ChecksumCore } from "../helpers/checksum_core.js";
import { xxh32 } from "../../src/format/xxh32.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = join(ROOT, "build/c/writer_equiv");
const SEED = 0x5eed;
const enc = new TextEncoder();

const KNOWN: Array<[string, Uint8Array, number, number]> = [
  ["empty (the specification's value)", new Uint8Array(0), 0, 0x02cc5d05],
  ["a", enc.encode("a"), 0, 0x550d7456],
  ["abc", enc.encode("abc"), 0, 0x32d153ff],
  ["123456789", enc.encode("123456789"), 0, 0x937bad67],
  ["15 bytes", enc.encode("0123456789abcde"), 0, 0x1dbdfa0f],
  ["16 bytes: one stripe", enc.encode("0123456789abcdef"), 0, 0xc2c45b69],
  ["43 bytes", enc.encode("The quick brown fox jumps over the lazy dog"), 0, 0xe85ea4de],
  ["pattern 17", pattern.subarray(0, 17), 0, 0x450e5f84],
  ["pattern 31", pattern.subarray(0, 31), 0, 0x1f73d3c7],
  ["pattern 32", pattern.subarray(0, 32), 0, 0xe988ccb7],
  ["pattern 33", pattern.subarray(0, 33), 0, 0x94f536d5],
  ["pattern 63", pattern.subarray(0, 63), 0, 0x0bedc2f7],
  ["pattern 64", pattern.subarray(0, 64), 0, 0xecd2ac44],
  ["pattern 100", pattern.subarray(0, 100), 0, 0x73091a4d],
  ["pattern 255", pattern.subarray(0, 255), 0, 0x8362bf14],
  ["pattern 256", pattern.subarray(0, 256), 0, 0x85baa5f7],
  ["pattern 1000", pattern, 0, 0xc85a5152],
  ["empty, seed 1", new Uint8Array(0), 1, 0x0b2cb792],
  ["abc, seed 0x9E3779B1", enc.encode("abc"), 0x9e3779b1, 0xa1ae7709],
];

/** The core's XXH32 (seed 0) of `bytes` placed `shift` bytes past a 16-aligned address. */
function coreSum(c: ChecksumCore, bytes: Uint8Array, shift = 0): number {
  return c.rt_xxh32(placeInCore(c, bytes, shift), bytes.length) >>> 0;
}

test.before(() => {
  execFileSync("make", ["-s", "-C", join(ROOT, "collectors"), "test-writer"], { stdio: ["ignore", "pipe", "inherit"] });
});

test("known answers: TypeScript", () => {
  for (const [name, data, seed, want] of KNOWN) assert.is(xxh32(data, seed), want, name);
});

test("known answers: WebAssembly core (seed 0), at every alignment", () => {
  const c = core();
  for (const [name, data, seed, want] of KNOWN) {
    if (seed !== 0) continue;
    for (let shift = 0; shift < 16; shift++) assert.is(coreSum(c, data, shift), want, `${name} at +${shift}`);
  }
});

test("C == TypeScript == WebAssembly on xorshift32 bytes: lengths 0..300 at offsets 0..7, long buffers at odd offsets", () => {
  forEachDriverLine(BIN, ["xxh", String(SEED)], SEED, (line, off, len, sum, buf, c, base) => {
    const ts = xxh32(buf.subarray(off, off + len));
    assert.is(Number(sum), ts, `C vs TS: ${line}`);
    assert.is(c.rt_xxh32(base + off, len) >>> 0, ts, `WebAssembly vs TS: ${line}`);
  });
});

// Every step maps the changed 4-byte lane bijectively (multiplications by odd primes, rotations, additions), so a
// change confined to one lane can never give the same digest: this holds for every bit, not by chance.
test("one changed bit anywhere in a stripe or the tail changes the digest", () => {
  const c = core();
  const data = xorshift(77, 7); // 4 stripes + 13 tail bytes (3 u32 lanes + 1 byte)
  eachBitFlipChanges(data, (d) => xxh32(d), (d, shift) => coreSum(c, d, shift));
});

test.run();
