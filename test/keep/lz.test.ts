/**
 * The kept-bytes codec (assembly/keep/lz.ts through src/core/keep_codec.ts): every block unpacks to exactly the
 * bytes packed — random, constant, periodic (every short match distance, the decoder's byte-wise path), a real dump
 * and every length around the encoder's limits — within its bound; the real sample dump shrinks at least 2.7× (2.82; 2.49 before the packer tried its last two match distances); a malformed
 * block is refused with a RangeError, never read or written out of bounds.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { KeepCodec } from "../../src/core/keep_codec.js";
import { rng } from "../../src/tools/rng.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const module = new WebAssembly.Module(readFileSync(`${ROOT}build/keep.wasm`));
const codec = new KeepCodec(module);

/** Packs and unpacks `bytes`; returns the packed length. */
function roundTrip(bytes: Uint8Array, what: string): number {
  const packed = codec.pack(bytes);
  assert.ok(packed.length <= bytes.length + Math.floor(bytes.length / 255) + 16 + 4, `${what}: ${packed.length} within the bound`);
  assert.is(KeepCodec.unpackedLength(packed), bytes.length, what);
  const out = codec.unpack(packed);
  assert.is(out.length, bytes.length, what);
  assert.ok(Buffer.from(out).equals(Buffer.from(bytes)), `${what}: same bytes`);
  return packed.length;
}

test("every length 0–300 of random, constant and mixed bytes", () => {
  const r = rng(3);
  for (let n = 0; n <= 300; n++) {
    roundTrip(new Uint8Array(n).map(() => Math.floor(r() * 256)), `random ${n}`);
    roundTrip(new Uint8Array(n).fill(0x5a), `constant ${n}`);
    roundTrip(new Uint8Array(n).map((_, i) => (i % 7 < 4 ? 0 : Math.floor(r() * 4))), `mixed ${n}`);
  }
});

test("every period 1–40 (the decoder's short-distance copy) and long runs of counts past 255", () => {
  const r = rng(5);
  for (let period = 1; period <= 40; period++) {
    const unit = new Uint8Array(period).map(() => Math.floor(r() * 256));
    for (const n of [period * 3 + 5, 1000, 70_000]) {
      const b = new Uint8Array(n).map((_, i) => unit[i % period]);
      const m = roundTrip(b, `period ${period}, ${n} bytes`);
      if (n >= 1000) assert.ok(m <= n / 20 + period + 16, `period ${period}: ${m} bytes for ${n}`);
    }
  }
  // 300 random bytes (a literal count past 255), then a match far past 255 bytes, then literals again.
  const lit = new Uint8Array(300).map(() => Math.floor(r() * 256));
  const b = new Uint8Array(300 + 5000 + 300);
  b.set(lit, 0);
  for (let i = 300; i < 5300; i++) b[i] = b[i - 300];
  b.set(lit.map((x) => x ^ 0xff), 5300);
  roundTrip(b, "literals, long match, literals");
});

test("far repeats: within 65535 bytes they match, past it they cannot", () => {
  const r = rng(9);
  const unit = new Uint8Array(60_000).map(() => Math.floor(r() * 256));
  const near = new Uint8Array(120_000);
  near.set(unit, 0);
  near.set(unit, 60_000);
  assert.ok(roundTrip(near, "repeat at 60000") < 70_000);
  const far = new Uint8Array(140_000);
  const big = new Uint8Array(70_000).map(() => Math.floor(r() * 256));
  far.set(big, 0);
  far.set(big, 70_000);
  assert.ok(roundTrip(far, "repeat at 70000") > 139_000, "no match beyond 16-bit offsets");
});

test("a real dump: the same bytes back, block by block, at least 2.7× smaller (2.49 with the hash alone)", () => {
  const dump = readFileSync(`${ROOT}samples/h100_torch_train_nvtx.rawtrace`);
  let packed = 0;
  for (const block of [1 << 20, 65536, 4099]) {
    packed = 0;
    for (let o = 0; o < dump.length; o += block) packed += roundTrip(dump.subarray(o, o + block), `sample at ${o} (${block})`);
  }
  const whole = roundTrip(dump, "sample, whole");
  assert.ok(dump.length / whole >= 2.7, `ratio ${(dump.length / whole).toFixed(2)}`);
  assert.ok(packed > whole, "small blocks pack less well than one");
});

test("unpack into a caller's buffer; larger blocks grow the codec; malformed blocks are refused", () => {
  const r = rng(11);
  const bytes = new Uint8Array(50_000).map((_, i) => (i % 16 < 12 ? i & 3 : Math.floor(r() * 256)));
  const packed = codec.pack(bytes);
  const dst = new Uint8Array(60_000).fill(0xee);
  const view = codec.unpack(packed, dst);
  assert.is(view.buffer, dst.buffer);
  assert.ok(Buffer.from(view).equals(Buffer.from(bytes)));
  assert.is(dst[50_000], 0xee, "nothing written past the block");
  assert.throws(() => codec.unpack(packed, new Uint8Array(100)), /do not fit/);

  const fresh = new KeepCodec(module);
  roundTrip(bytes.subarray(0, 100), "small first");
  const big = new Uint8Array(3 << 20).map((_, i) => (i >> 10) & 0xff);
  assert.ok(Buffer.from(fresh.unpack(fresh.pack(big))).equals(Buffer.from(big)), "grown");

  const bad = (p: Uint8Array, what: string) => assert.throws(() => codec.unpack(p), RangeError, what);
  bad(new Uint8Array(2), "no header");
  bad(packed.subarray(0, packed.length - 1), "cut short");
  bad(packed.subarray(0, 40), "cut early");
  const extra = new Uint8Array(packed.length + 3);
  extra.set(packed);
  bad(extra, "bytes left over");
  const longer = packed.slice();
  new DataView(longer.buffer).setUint32(0, bytes.length + 10, true);
  bad(longer, "claims more bytes than it holds");
  // A match before the start: token with no literals, offset 1 at output position 0.
  const early = new Uint8Array([16, 0, 0, 0, 0x00, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
  bad(early, "offset before the start");
  const zeroOff = new Uint8Array([16, 0, 0, 0, 0x10, 0x41, 0x00, 0x00]);
  bad(zeroOff, "offset 0");
  // Random corruption: refused or (if it still parses) exactly n bytes, never a trap.
  for (let k = 0; k < 2000; k++) {
    const c = packed.slice();
    for (let j = 0; j < 3; j++) c[4 + Math.floor(r() * (c.length - 4))] = Math.floor(r() * 256);
    try {
      assert.is(codec.unpack(c).length, bytes.length);
    } catch (e) {
      assert.instance(e, RangeError);
    }
  }
  roundTrip(bytes, "still works after the malformed ones");
});

test.run();
