/**
 * DEFLATE's length and distance codes (RFC 1951 §3.2.5) and its fixed Huffman codes (§3.2.6), as flat tables in
 * static memory, filled once by {@link buildTables}.
 */

/** u8[256]: the length slot (0–28, code 257 + slot) of match length 3 + i. */
export const LEN_SLOT: usize = memory.data(256);
/** u8[29]: extra bits of each length slot. */
export const LEN_EXTRA: usize = memory.data(32);
/** u16[29]: smallest match length of each slot, minus 3 (the value the symbol buffer stores). */
export const LEN_BASE: usize = memory.data(64);
/** u8[256]: distance slot (0–29) of a distance d with d - 1 < 256, indexed by d - 1. */
export const DIST_SLOT_LO: usize = memory.data(256);
/** u8[256]: distance slot of a distance d with d - 1 ≥ 256, indexed by (d - 1) >> 7. */
export const DIST_SLOT_HI: usize = memory.data(256);
/** u8[30]: extra bits of each distance slot. */
export const DIST_EXTRA: usize = memory.data(32);
/** u16[30]: smallest distance of each slot, minus 1. */
export const DIST_BASE: usize = memory.data(64);
/** u32[288]: the fixed literal/length code of each symbol, bit-reversed for an LSB-first writer, | length << 16. */
export const FIXED_LIT: usize = memory.data(288 * 4);
/** u8[288]: the fixed literal/length code lengths. */
export const FIXED_LIT_LEN: usize = memory.data(288);
/** u32[30]: the fixed distance codes (5 bits each), bit-reversed, | 5 << 16. */
export const FIXED_DIST: usize = memory.data(32 * 4);
/** u8[30]: the fixed distance code lengths (all 5). */
export const FIXED_DIST_LEN: usize = memory.data(32);

let built = false;

/** Reverses the low `n` bits of `c` (Huffman codes are sent most significant bit first, RFC 1951 §3.1.1). */
export function reverseBits(c: u32, n: u32): u32 {
  let r: u32 = 0;
  for (let k: u32 = 0; k < n; k++) {
    r = (r << 1) | (c & 1);
    c >>>= 1;
  }
  return r;
}

/**
 * Gives every symbol of `lens` (u8[n], code lengths 0–15) its canonical code (RFC 1951 §3.2.2), bit-reversed, in
 * `codes` (u32[n]: code | length << 16; 0 for an unused symbol).
 */
export function assignCodes(lens: usize, n: i32, codes: usize): void {
  const count = memory.data(16 * 4);
  const next = memory.data(16 * 4);
  memory.fill(count, 0, 16 * 4);
  for (let s = 0; s < n; s++) {
    const l = <usize>load<u8>(lens + s);
    store<u32>(count + (l << 2), load<u32>(count + (l << 2)) + 1);
  }
  store<u32>(count, 0);
  let code: u32 = 0;
  for (let b = 1; b < 16; b++) {
    code = (code + load<u32>(count + ((b - 1) << 2))) << 1;
    store<u32>(next + (b << 2), code);
  }
  for (let s = 0; s < n; s++) {
    const l = <u32>load<u8>(lens + s);
    if (l == 0) {
      store<u32>(codes + (s << 2), 0);
      continue;
    }
    const c = load<u32>(next + (l << 2));
    store<u32>(next + (l << 2), c + 1);
    store<u32>(codes + (s << 2), reverseBits(c, l) | (l << 16));
  }
}

/** Fills the tables (once). */
export function buildTables(): void {
  if (built) return;
  built = true;
  // Lengths: slots 0–7 are 3–10 with no extra bits, then four slots per extra-bit count 1–5; slot 28 is 258 alone.
  let base: u32 = 0;
  for (let s: u32 = 0; s < 28; s++) {
    const e: u32 = s < 8 ? 0 : (s - 4) >> 2;
    store<u8>(LEN_EXTRA + s, <u8>e);
    store<u16>(LEN_BASE + (s << 1), <u16>base);
    for (let k: u32 = 0; k < (1 << e) && base + k < 255; k++) store<u8>(LEN_SLOT + base + k, <u8>s);
    base += 1 << e;
  }
  store<u8>(LEN_EXTRA + 28, 0);
  store<u16>(LEN_BASE + 56, 255);
  store<u8>(LEN_SLOT + 255, 28);
  // Distances: slots 0–3 are 1–4, then two slots per extra-bit count 1–13.
  let dbase: u32 = 0;
  for (let s: u32 = 0; s < 30; s++) {
    const e: u32 = s < 4 ? 0 : (s - 2) >> 1;
    store<u8>(DIST_EXTRA + s, <u8>e);
    store<u16>(DIST_BASE + (s << 1), <u16>dbase);
    for (let k: u32 = 0; k < (1 << e); k++) {
      const d = dbase + k; // distance - 1
      if (d < 256) store<u8>(DIST_SLOT_LO + d, <u8>s);
      else store<u8>(DIST_SLOT_HI + (d >> 7), <u8>s);
    }
    dbase += 1 << e;
  }
  // Fixed codes: literal/length lengths 8 (0–143), 9 (144–255), 7 (256–279), 8 (280–287); distances 5.
  for (let s = 0; s < 288; s++) store<u8>(FIXED_LIT_LEN + s, <u8>(s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8));
  for (let s = 0; s < 30; s++) store<u8>(FIXED_DIST_LEN + s, 5);
  assignCodes(FIXED_LIT_LEN, 288, FIXED_LIT);
  assignCodes(FIXED_DIST_LEN, 30, FIXED_DIST);
}
