/**
 * XXH64, whose low 32 bits are the payload checksum of format 1.2 chunks (docs/format.md, flag bit 2), has three
 * implementations that must agree bit for bit: src/format/xxh64.ts (the TypeScript writer; 64-bit lanes as two 32-bit
 * halves), assembly/util/xxh64.ts (the reader; exported as `rt_xxh64`) and `rt_xxh64` in
 * collectors/common/rawtrace_checksum.c.
 *
 * Known answers: computed with Debian's libxxhash 0.8.1 (XXH64, seed 0, through Python ctypes) when this test was
 * written, covering each path: the empty input, < 4 bytes (byte tail only), 4..7 (one u32 lane + bytes), 8..31
 * (u64 lanes + u32 + bytes, no stripes), exactly one stripe, stripes + every kind of tail, and all-ones and all-zero
 * inputs (the 64-bit carries at their extremes: a review found a wrong carry bound caught only by these). Then the three
 * implementations are compared on xorshift32 bytes from a fixed seed: every length 0..300 at every offset 0..7, and
 * long buffers at odd offsets.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { checksumCore as core, eachBitFlipChanges, forEachDriverLine, pattern, placeInCore, xorshift, type ChecksumCore } from "../helpers/checksum_core.js";
import { xxh64, xxh64Low } from "../../src/format/xxh64.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = join(ROOT, "build/c/writer_equiv");
const SEED = 0x64eed;
const enc = new TextEncoder();

const KNOWN: Array<[string, Uint8Array, bigint]> = [
  ["empty", new Uint8Array(0), 0xef46db3751d8e999n],
  ["a", enc.encode("a"), 0xd24ec4f1a98c6e5bn],
  ["abc", enc.encode("abc"), 0x44bc2cf5ad770999n],
  ["123456789", enc.encode("123456789"), 0x8cb841db40e6ae83n],
  ["15 bytes", enc.encode("0123456789abcde"), 0x4bb51a30968e6a4dn],
  ["31 bytes", enc.encode("0123456789abcdef0123456789abcde"), 0x1fdfc63febacfde7n],
  ["32 bytes: one stripe", enc.encode("0123456789abcdef0123456789abcdef"), 0x642a94958e71e6c5n],
  ["43 bytes", enc.encode("The quick brown fox jumps over the lazy dog"), 0x0b242d361fda71bcn],
  ["pattern 7", pattern.subarray(0, 7), 0x9a7b149959ce60d8n],
  ["pattern 8", pattern.subarray(0, 8), 0xdab99d95c6f90092n],
  ["pattern 12", pattern.subarray(0, 12), 0xd52e407833af5133n],
  ["pattern 33", pattern.subarray(0, 33), 0x50a7cfc7ba588784n],
  ["pattern 36", pattern.subarray(0, 36), 0xc0b52b0dcc5e3f7fn],
  ["pattern 37", pattern.subarray(0, 37), 0xe32ef63802f5a3fdn],
  ["pattern 39", pattern.subarray(0, 39), 0x880bbeea606e4b37n],
  ["pattern 40", pattern.subarray(0, 40), 0xb620306b253d76b6n],
  ["pattern 63", pattern.subarray(0, 63), 0x5e3e54b431c7493cn],
  ["pattern 64", pattern.subarray(0, 64), 0x0eb64b3ef6eeb01fn],
  ["pattern 65", pattern.subarray(0, 65), 0xa383b724b2bd12f1n],
  ["pattern 100", pattern.subarray(0, 100), 0xa61f8d4c170fe531n],
  ["pattern 255", pattern.subarray(0, 255), 0x39ae55a29989206fn],
  ["pattern 256", pattern.subarray(0, 256), 0x00cfc5207dd8e201n],
  ["pattern 1000", pattern, 0x5f235fa033f1a3fbn],
  // All-ones and all-zero bytes: the carries of the 64-bit adds and multiplies at their extremes.
  ["0xff × 32", new Uint8Array(32).fill(0xff), 0xff10223616c08787n],
  ["0xff × 64", new Uint8Array(64).fill(0xff), 0x2e54fae2959dbb84n],
  ["0xff × 100", new Uint8Array(100).fill(0xff), 0x0ccc4cc1d8869491n],
  ["0xff × 257", new Uint8Array(257).fill(0xff), 0x9d72144e8b8b0f4bn],
  ["0x00 × 32", new Uint8Array(32), 0xf6e9be5d70632cf5n],
  ["0x00 × 64", new Uint8Array(64), 0x257b09a147b82a19n],
  ["0x00 × 100", new Uint8Array(100), 0x17bb1103c92c502fn],
  ["0x00 × 257", new Uint8Array(257), 0x510110bb333ee9ban],
];

/** The core's XXH64 of `bytes` placed `shift` bytes past a 16-aligned address (u64: wasm's i64 comes back signed). */
function coreSum(c: ChecksumCore, bytes: Uint8Array, shift = 0): bigint {
  return BigInt.asUintN(64, c.rt_xxh64(placeInCore(c, bytes, shift), bytes.length));
}

test.before(() => {
  execFileSync("make", ["-s", "-C", join(ROOT, "collectors"), "test-writer"], { stdio: ["ignore", "pipe", "inherit"] });
});

test("known answers: TypeScript (whole digest and the container's low 32 bits)", () => {
  for (const [name, data, want] of KNOWN) {
    assert.is(xxh64(data), want, name);
    assert.is(xxh64Low(data), Number(want & 0xffffffffn), `${name}: low 32 bits`);
  }
});

test("known answers: WebAssembly core, at every alignment", () => {
  const c = core();
  for (const [name, data, want] of KNOWN) {
    for (let shift = 0; shift < 16; shift++) assert.is(coreSum(c, data, shift), want, `${name} at +${shift}`);
  }
});

test("C == TypeScript == WebAssembly on xorshift32 bytes: lengths 0..300 at offsets 0..7, long buffers at odd offsets", () => {
  forEachDriverLine(BIN, ["xxh64", String(SEED)], SEED, (line, off, len, hex, buf, c, base) => {
    const ts = xxh64(buf.subarray(off, off + len));
    assert.is(BigInt(`0x${hex}`), ts, `C vs TS: ${line}`);
    assert.is(BigInt.asUintN(64, c.rt_xxh64(base + off, len)), ts, `WebAssembly vs TS: ${line}`);
  });
});

test("one changed bit anywhere in the input changes the container's 32-bit checksum (a fixed sample of 97 bytes)", () => {
  const c = core();
  const data = xorshift(97, 11); // 3 stripes + one u64 lane, one u32 lane, one byte of tail
  eachBitFlipChanges(data, xxh64Low, (d, shift) => Number(coreSum(c, d, shift) & 0xffffffffn));
});

test.run();
