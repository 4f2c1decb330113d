/**
 * Shared by the checksum tests (test/format/xxh32.test.ts, xxh64.test.ts): the inputs they compare the C, TypeScript
 * and WebAssembly implementations on, and the WebAssembly core's exported checksums.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import * as assert from "uvu/assert";
import { wasmPath } from "../../src/node/wasm.js";

/** xorshift32 bytes from `seed` (each step's low byte), as `xorshift_fill` in test/format/writer_equiv.c. */
export function xorshift(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

/** Byte i = (7i + 3) mod 256: the "pattern" inputs of the known answers. */
export const pattern = Uint8Array.from({ length: 1000 }, (_, i) => (i * 7 + 3) & 0xff);

/** The core's exports the checksum tests call. */
export interface ChecksumCore {
  memory: WebAssembly.Memory;
  rt_reset(): void;
  rt_alloc(n: number): number;
  rt_xxh32(p: number, n: number): number;
  rt_xxh64(p: number, n: number): bigint;
}

/** A fresh instance of the release core (build/rawtrace.wasm), reset. */
export function checksumCore(): ChecksumCore {
  const inst = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(wasmPath())), {
    env: { rt_write: () => {}, rt_spill_write: () => {}, rt_spill_read: () => {}, rt_split_segment: () => {}, abort: () => { throw new Error("core aborted"); } },
  });
  const c = inst.exports as unknown as ChecksumCore;
  c.rt_reset();
  return c;
}

/** Copies `bytes` into the core `shift` bytes past a 16-aligned address; returns that address. */
export function placeInCore(c: ChecksumCore, bytes: Uint8Array, shift = 0): number {
  const p = c.rt_alloc(bytes.length + 32);
  const at = ((p + 15) & ~15) + shift;
  new Uint8Array(c.memory.buffer).set(bytes, at);
  return at;
}

/**
 * Runs test/format/writer_equiv.c's `bin` with `args` (a checksum over xorshift32(`seed`) bytes: "off len sum" lines,
 * every length 0..300 at offsets 0..7, then five long buffers), lays the same bytes into a core and calls `check`
 * with each line's fields, the bytes and where they sit in the core. Asserts the line count and that five lines were
 * the long buffers.
 */
export function forEachDriverLine(
  bin: string, args: string[], seed: number,
  check: (line: string, off: number, len: number, sum: string, buf: Uint8Array, c: ChecksumCore, base: number) => void,
): void {
  const lines = execFileSync(bin, args, { encoding: "utf8" }).trim().split("\n");
  assert.is(lines.length, 8 * 301 + 5);
  const buf = xorshift((1 << 20) + 64, seed);
  const c = checksumCore();
  const base = c.rt_alloc(buf.length);
  new Uint8Array(c.memory.buffer).set(buf, base);
  let longs = 0;
  for (const line of lines) {
    const [off, len, sum] = line.split(" ");
    check(line, Number(off), Number(len), sum, buf, c, base);
    if (Number(len) > 300) longs++;
  }
  assert.is(longs, 5);
}

/**
 * Flips every bit of `data` in turn and asserts that `ts` (the TypeScript checksum) changes and that `core` (the
 * core's, of the flipped bytes placed at an offset of byte index mod 8) equals it.
 */
export function eachBitFlipChanges(data: Uint8Array, ts: (d: Uint8Array) => number, core: (d: Uint8Array, shift: number) => number): void {
  const want = ts(data);
  for (let i = 0; i < data.length; i++) {
    for (let bit = 0; bit < 8; bit++) {
      const d = data.slice();
      d[i] ^= 1 << bit;
      const got = ts(d);
      assert.ok(got !== want, `byte ${i} bit ${bit}`);
      assert.is(core(d, i & 7), got, `core, byte ${i} bit ${bit}`);
    }
  }
}
