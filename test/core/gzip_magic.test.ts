/**
 * src/core/gzip_magic.ts: which first bytes are a gzip file whose first three bytes (1f 8b 08) are damaged, and the
 * repair of those bytes whatever the reads' sizes.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync, readdirSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { GZIP_HEAD_BYTES, gzipStart, repairGzipMagic, repairedGzip } from "../../src/core/gzip_magic.js";
import { rng } from "../../src/tools/rng.js";

const dump = readFileSync("samples/alexnet_a100_rank0.rawtrace");
const gz = gzipSync(dump); // zlib's header: 1f 8b 08 00 00000000 00 03

test("every one-byte change of gzip's first three bytes is 'damaged'; two changes are not read", () => {
  assert.is(gzipStart(gz.subarray(0, GZIP_HEAD_BYTES)), "gzip");
  for (let i = 0; i < 3; i++) {
    for (let v = 0; v < 256; v++) {
      if (v === gz[i]) continue;
      const h = Uint8Array.from(gz.subarray(0, GZIP_HEAD_BYTES));
      h[i] = v;
      assert.is(gzipStart(h), "damaged", `byte ${i} = ${v}`);
    }
  }
  const two = Uint8Array.from(gz.subarray(0, GZIP_HEAD_BYTES));
  two[0] = 0x1e;
  two[1] = 0x8a;
  assert.is(gzipStart(two), null);
  // The magic intact: gzip, whatever follows (zlib's error says what is wrong: another method, a reserved flag).
  assert.is(gzipStart(Uint8Array.of(0x1f, 0x8b, 7, 0xe0)), "gzip");
  assert.is(gzipStart(Uint8Array.of(0x1f, 0x8b)), "gzip");
});

test("a damaged magic needs the rest of a writer's header: reserved flags clear, XFL and OS as writers write them, all 10 bytes", () => {
  const h = () => {
    const b = Uint8Array.from(gz.subarray(0, GZIP_HEAD_BYTES));
    b[1] = 0x8a;
    return b;
  };
  assert.is(gzipStart(h()), "damaged");
  for (const [at, v] of [[3, 0x20], [3, 0x80], [8, 1], [8, 6], [9, 14], [9, 200]] as const) {
    const b = h();
    b[at] = v;
    assert.is(gzipStart(b), null, `byte ${at} = ${v}`);
  }
  for (const [at, v] of [[3, 0x1f], [8, 2], [8, 4], [9, 0], [9, 19], [9, 255]] as const) {
    const b = h();
    b[at] = v;
    assert.is(gzipStart(b), "damaged", `byte ${at} = ${v}`);
  }
  assert.is(gzipStart(h().subarray(0, 9)), null, "a file of 9 bytes");
});

test("no sample dump, text or random bytes are taken for a damaged gzip (200,000 random heads, seed 42)", () => {
  for (const f of readdirSync("samples").filter((n) => n.endsWith(".rawtrace"))) {
    assert.is(gzipStart(readFileSync(`samples/${f}`).subarray(0, GZIP_HEAD_BYTES)), null, f);
  }
  const text = new TextEncoder().encode('{"traceEvents":[');
  assert.is(gzipStart(text), null);
  assert.is(gzipStart(new Uint8Array(GZIP_HEAD_BYTES)), null);
  const r = rng(42);
  const h = new Uint8Array(GZIP_HEAD_BYTES);
  let taken = 0;
  for (let k = 0; k < 200_000; k++) {
    for (let i = 0; i < h.length; i++) h[i] = Math.floor(r() * 256);
    // Heads that only differ from gzip's in one of the three bytes are what the rule takes: bias toward them so the
    // rest of the header is what is judged (2 of 3 fixed, the third random).
    if (k % 2 === 0) {
      const keep = k % 3;
      for (let i = 0; i < 3; i++) if (i !== keep) h[i] = [0x1f, 0x8b, 8][i];
    }
    if (gzipStart(h) === "damaged") taken++;
  }
  // Half the heads have two of the three bytes right: those pass only with flags, XFL and OS a writer's (1/8 × 3/256
  // × 16/256 ≈ 1/10,900 of them: about 9 expected); the other half, essentially never.
  assert.ok(taken > 0 && taken < 40, `${taken} random heads taken`);
});

test("the repair writes 1f 8b 08 over the file's first three bytes whatever the chunks' sizes, and nothing else", async () => {
  for (const sizes of [[1, 1, 1, 5], [2, 10], [3], [20], [1, 9]]) {
    const bad = Uint8Array.from(gz.subarray(0, 20));
    bad[0] = 0;
    bad[1] = 0;
    bad[2] = 0;
    const chunks: Uint8Array[] = [];
    let at = 0;
    for (const n of sizes) {
      chunks.push(bad.slice(at, at + n));
      at += n;
    }
    const out: number[] = [];
    for await (const c of repairedGzip((async function* () { yield* chunks; })())) out.push(...c);
    assert.equal(out, Array.from(gz.subarray(0, at)), `chunks ${sizes}`);
  }
  const later = Uint8Array.of(9, 9, 9);
  repairGzipMagic(later, 3);
  assert.equal(Array.from(later), [9, 9, 9]);
});

test.run();
