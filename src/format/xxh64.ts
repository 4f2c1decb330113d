/**
 * XXH64 (xxHash, 64-bit variant), written from the public specification (Cyan4973/xxHash, doc/xxhash_spec.md,
 * "XXH64 Algorithm Description"). The `.rawtrace` container stores the low 32 bits of its seed-0 digest as the payload
 * checksum of chunks whose header flag bit 2 is set (format 1.2, docs/format.md). Same algorithm as
 * assembly/util/xxh64.ts (the reader) and `rt_xxh64` in collectors/common/rawtrace_checksum.c;
 * test/format/xxh64.test.ts checks that all three agree and match libxxhash.
 *
 * JavaScript numbers hold 53 bits, and BigInt arithmetic allocates, so the 64-bit lanes are kept as two unsigned
 * 32-bit halves and multiplied from 16-bit pieces (every partial product exact in a double): this runs at ≈ 150–200
 * MB/s, enough for the TypeScript writer (tests, bench/generate.ts).
 */

// The five primes of the specification as (high, low) 32-bit halves.
const Q1H = 0x9e3779b1, Q1L = 0x85ebca87;
const Q2H = 0xc2b2ae3d, Q2L = 0x27d4eb4f;
const Q3H = 0x165667b1, Q3L = 0x9e3779f9;
const Q4H = 0x85ebca77, Q4L = 0xc2b2ae63;
const Q5H = 0x27d4eb2f, Q5L = 0x165667c5;

/** Result of the last 64-bit operation: high and low unsigned 32-bit halves (no allocation per step). */
let rh = 0;
let rl = 0;

/** (ah:al) × (bh:bl) mod 2^64 into rh:rl. */
function mul(ah: number, al: number, bh: number, bl: number): void {
  // The full 64-bit product of the low halves from 16-bit pieces, then the two cross terms mod 2^32.
  const a0 = al & 0xffff, a1 = al >>> 16, b0 = bl & 0xffff, b1 = bl >>> 16;
  const p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff); // < 3 × 2^16
  rl = ((mid << 16) | (p00 & 0xffff)) >>> 0;
  const hiLow = p11 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16); // the high half of al × bl, < 2^32 + 2^18
  rh = (hiLow + Math.imul(al, bh) + Math.imul(ah, bl)) >>> 0;
}

/** (ah:al) + (bh:bl) mod 2^64 into rh:rl. */
function add(ah: number, al: number, bh: number, bl: number): void {
  const lo = al + bl;
  rl = lo >>> 0;
  rh = (ah + bh + (lo > 0xffffffff ? 1 : 0)) >>> 0;
}

/** (h:l) rotated left by r bits (0 < r < 32) into rh:rl. */
function rotl(h: number, l: number, r: number): void {
  rh = ((h << r) | (l >>> (32 - r))) >>> 0;
  rl = ((l << r) | (h >>> (32 - r))) >>> 0;
}

/** One stripe round of the specification: (acc + lane × Q2) <<< 31, × Q1 (all mod 2^64), into rh:rl. */
function round(ah: number, al: number, lh: number, ll: number): void {
  mul(lh, ll, Q2H, Q2L);
  add(ah, al, rh, rl);
  rotl(rh, rl, 31);
  mul(rh, rl, Q1H, Q1L);
}

/** Folds accumulator (vh:vl) into (hh:hl) (step 3 of the specification), into rh:rl. */
function merge(hh: number, hl: number, vh: number, vl: number): void {
  round(0, 0, vh, vl);
  mul((hh ^ rh) >>> 0, (hl ^ rl) >>> 0, Q1H, Q1L);
  add(rh, rl, Q4H, Q4L);
}

/**
 * XXH64 of `data` with seed 0, as a bigint (the specification's value). {@link xxh64Low} is the container's
 * checksum.
 */
export function xxh64(data: Uint8Array): bigint {
  digest(data);
  return (BigInt(rh) << 32n) | BigInt(rl);
}

/** The low 32 bits of {@link xxh64} (unsigned): the payload checksum of chunks with flag bit 2. */
export function xxh64Low(data: Uint8Array): number {
  digest(data);
  return rl;
}

/** XXH64, seed 0, of `data` into rh:rl. */
function digest(data: Uint8Array): void {
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const n = data.length;
  let p = 0;
  let hh: number, hl: number;
  if (n >= 32) {
    add(Q1H, Q1L, Q2H, Q2L);
    let v1h = rh, v1l = rl;
    let v2h = Q2H, v2l = Q2L;
    let v3h = 0, v3l = 0;
    add(~Q1H >>> 0, ~Q1L >>> 0, 0, 1); // 0 - Q1
    let v4h = rh, v4l = rl;
    for (const last = n - 32; p <= last; p += 32) {
      round(v1h, v1l, dv.getUint32(p + 4, true), dv.getUint32(p, true));
      v1h = rh; v1l = rl;
      round(v2h, v2l, dv.getUint32(p + 12, true), dv.getUint32(p + 8, true));
      v2h = rh; v2l = rl;
      round(v3h, v3l, dv.getUint32(p + 20, true), dv.getUint32(p + 16, true));
      v3h = rh; v3l = rl;
      round(v4h, v4l, dv.getUint32(p + 28, true), dv.getUint32(p + 24, true));
      v4h = rh; v4l = rl;
    }
    rotl(v1h, v1l, 1);
    hh = rh; hl = rl;
    rotl(v2h, v2l, 7);
    add(hh, hl, rh, rl);
    hh = rh; hl = rl;
    rotl(v3h, v3l, 12);
    add(hh, hl, rh, rl);
    hh = rh; hl = rl;
    rotl(v4h, v4l, 18);
    add(hh, hl, rh, rl);
    merge(rh, rl, v1h, v1l);
    merge(rh, rl, v2h, v2l);
    merge(rh, rl, v3h, v3l);
    merge(rh, rl, v4h, v4l);
    hh = rh; hl = rl;
  } else {
    hh = Q5H; hl = Q5L;
  }
  // The length (a Uint8Array is shorter than 2^53 bytes: its high half is n / 2^32).
  add(hh, hl, Math.floor(n / 0x100000000) >>> 0, n >>> 0);
  hh = rh; hl = rl;
  for (; p + 8 <= n; p += 8) {
    round(0, 0, dv.getUint32(p + 4, true), dv.getUint32(p, true));
    rotl((hh ^ rh) >>> 0, (hl ^ rl) >>> 0, 27);
    mul(rh, rl, Q1H, Q1L);
    add(rh, rl, Q4H, Q4L);
    hh = rh; hl = rl;
  }
  if (p + 4 <= n) {
    mul(0, dv.getUint32(p, true), Q1H, Q1L);
    rotl((hh ^ rh) >>> 0, (hl ^ rl) >>> 0, 23);
    mul(rh, rl, Q2H, Q2L);
    add(rh, rl, Q3H, Q3L);
    hh = rh; hl = rl;
    p += 4;
  }
  for (; p < n; p++) {
    mul(0, data[p], Q5H, Q5L);
    rotl((hh ^ rh) >>> 0, (hl ^ rl) >>> 0, 11);
    mul(rh, rl, Q1H, Q1L);
    hh = rh; hl = rl;
  }
  // Avalanche: h ^= h >> 33; h *= Q2; h ^= h >> 29; h *= Q3; h ^= h >> 32 (shifts across the halves by hand).
  hl = (hl ^ (hh >>> 1)) >>> 0;
  mul(hh, hl, Q2H, Q2L);
  hh = rh; hl = rl;
  hl = (hl ^ ((hl >>> 29) | (hh << 3))) >>> 0;
  hh = (hh ^ (hh >>> 29)) >>> 0;
  mul(hh, hl, Q3H, Q3L);
  rl = (rl ^ rh) >>> 0;
}
