/**
 * Deterministic CI fuzzing of rawtrace's own gzip encoder (deflate_target.ts, the code `npm run fuzz -- --target
 * deflate` runs): a fixed seed and a fixed count of generated inputs (JSON-like text, near repeats, copies at the
 * 32,768-byte distance limit and around the 258-byte length limit, runs, random bytes, Fibonacci-skewed bytes,
 * mixtures; sizes at the block and stored-block boundaries) each come back exactly from Node's gunzip, in a member
 * no larger than storing every block, and every 10th the same bytes from a fresh encoder. The oracle itself is checked to catch a damaged member and an oversized one.
 * RAWTRACE_FUZZ_RUNS and RAWTRACE_FUZZ_SEED run it longer or with another seed.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { FastGzip } from "../../src/node/fast_gzip.js";
import { rng } from "./mutate.js";
import { type DeflateUse, deflateUse } from "./deflate_trace.js";
import { DEFLATE_KINDS, type DeflateCase, checkMember, deflateBound, deflateCase, runDeflateCases } from "./deflate_target.js";

const RUNS = Number(process.env.RAWTRACE_FUZZ_RUNS ?? 80);
const SEED = Number(process.env.RAWTRACE_FUZZ_SEED ?? 20261124);
const gz = new FastGzip();

test(`fuzz deflate: ${RUNS} generated inputs (seed ${SEED}) gunzip back exactly within the stored bound`, () => {
  // What the encoder wrote for the cases up to 256 KiB (the reader here is slow), summed.
  const use: DeflateUse = { stored: 0, fixed: 0, dynamic: 0, len4: 0, len258: 0, dist32768: 0, matches: 0, bytes: 0 };
  let traced = 0;
  const onMember = (c: DeflateCase, member: Uint8Array): void => {
    if (c.bytes.length > 1 << 18) return;
    const u = deflateUse(member);
    traced += c.bytes.length;
    for (const k of Object.keys(use) as (keyof DeflateUse)[]) use[k] += u[k];
  };
  const s = runDeflateCases(gz, SEED, 0, RUNS, { onMember, freshEvery: 10 });
  console.log(`fuzz deflate: ${s.cases} cases, ${(s.inputBytes / 1e6).toFixed(1)} MB in, ${(s.memberBytes / 1e6).toFixed(1)} MB out; ` +
    `in those up to 256 KiB: ${JSON.stringify(use)}`);
  assert.equal(s.failures, []);
  assert.is(s.cases, RUNS);
  assert.is(s.freshChecks, Math.ceil(RUNS / 10));
  if (RUNS >= 80) assert.equal(Object.keys(s.kinds).sort(), [...DEFLATE_KINDS].sort(), "every kind leads some case");
  assert.ok(s.memberBytes < s.inputBytes, "the inputs are compressible on the whole");
  assert.is(use.bytes, traced, "the reader's byte count matches the inputs");
  if (RUNS >= 80) {
    // The inputs reach the encoder's limits: every block type, matches of 4 (its shortest) and 258 bytes, matches 32,768 bytes back.
    for (const k of ["stored", "fixed", "dynamic", "len4", "len258", "dist32768"] as const) assert.ok(use[k] > 0, `some ${k}`);
  }
});

test("fuzz deflate: cases are the same bytes every time and cover the boundary sizes", () => {
  const a = deflateCase(SEED, 17);
  const b = deflateCase(SEED, 17);
  assert.equal(a.kind, b.kind);
  assert.ok(Buffer.from(a.bytes).equals(Buffer.from(b.bytes)));
  const sizes = new Set<number>();
  for (let i = 0; i < 400; i++) sizes.add(deflateCase(1, i).bytes.length);
  for (const n of [0, 65535, 32768]) {
    assert.ok([...sizes].some((x) => Math.abs(x - n) <= 4), `some case within 4 bytes of ${n}`);
  }
  assert.ok([...sizes].some((x) => x > 1 << 20), "some case above 1 MiB");
});

test("fuzz deflate: the oracle catches a wrong byte, a wrong length and an oversized member", () => {
  const input = deflateCase(SEED, 3).bytes;
  const good = gz.gzip(input);
  assert.is(checkMember(good, input), null);
  const other = input.slice();
  other[other.length >> 1] ^= 1;
  assert.match(checkMember(good, other) ?? "", /differs from the input at byte/);
  assert.match(checkMember(good, input.subarray(0, input.length - 1)) ?? "", /gunzip gave/);
  const damaged = good.slice();
  damaged[damaged.length - 5] ^= 0xff; // the stored length's low byte
  assert.match(checkMember(damaged, input) ?? "", /gunzip rejected/);
  // A valid member of 3,000 random bytes (stored) made bigger by a 100-byte FEXTRA field: still read, but above the bound.
  const r = rng(5);
  const noise = new Uint8Array(3000).map(() => (r() * 256) & 255);
  const plain = gz.gzip(noise);
  assert.is(checkMember(plain, noise), null);
  const big = new Uint8Array(plain.length + 102);
  big.set(plain.subarray(0, 10));
  big[3] |= 4; // FLG.FEXTRA
  big[10] = 100;
  big.set(plain.subarray(10), 112);
  assert.ok(big.length > deflateBound(noise.length));
  assert.match(checkMember(big, noise) ?? "", /above the bound/);
});

test.run();
