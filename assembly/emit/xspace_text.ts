/**
 * Byte helpers of the XSpace writer (emit/xspace*.ts): hashing and comparing byte strings, ASCII copies into the
 * arena, and the scratch builder (`bStart`, appends, then {@link bP}/{@link bN}) that names and detail strings are
 * built in.
 */
import { arenaAlloc } from "../util/arena";
import { putU64 } from "./put";

/** One mixing step of {@link hashBytes}. */
// @ts-ignore: decorator
@inline export function hashMix(h: u64, v: u64): u64 {
  h ^= v;
  h *= 0x9e3779b97f4a7c15;
  return h ^ (h >> 29);
}

/** Hash of the bytes [p, p+n) with `seed` (never the all-ones value a table cannot store). */
export function hashBytes(p: usize, n: u32, seed: u64): u64 {
  let h = seed ^ (<u64>n * 0xff51afd7ed558ccd);
  let i: u32 = 0;
  while (i + 8 <= n) {
    h = hashMix(h, load<u64>(p + i));
    i += 8;
  }
  let t: u64 = 0;
  let s: u64 = 0;
  while (i < n) {
    t |= <u64>load<u8>(p + i) << s;
    s += 8;
    i++;
  }
  h = hashMix(h, t);
  // The table cannot store the all-ones key.
  return h == 0xffffffffffffffff ? 0 : h;
}

/** Whether [a, a+an) and [b, b+bn) hold the same bytes. */
export function bytesEq(a: usize, an: u32, b: usize, bn: u32): bool {
  return an == bn && (an == 0 || memory.compare(a, b, an) == 0);
}

/** Copies an ASCII AS string into the arena; returns the address (length = s.length). */
export function asciiCopy(s: string): usize {
  const n = s.length;
  const p = arenaAlloc(n > 0 ? <usize>n : 1);
  for (let i = 0; i < n; i++) store<u8>(p + i, <u8>s.charCodeAt(i));
  return p;
}

// Scratch builder for names and detail strings: bStart, then appends, then bP/bN.
/** Start of the string being built. */
export let bP: usize = 0;
/** Bytes built so far. */
export let bN: u32 = 0;
let bCap: u32 = 0;

/** Starts a file: no builder buffer (the heap was rewound). */
export function textBegin(): void {
  bP = 0;
  bN = 0;
  bCap = 0;
}

function bReserve(n: u32): void {
  if (bN + n <= bCap) return;
  let cap = bCap < 256 ? <u32>256 : bCap;
  while (cap < bN + n) cap <<= 1;
  const q = arenaAlloc(cap);
  if (bN != 0) memory.copy(q, bP, bN);
  bP = q;
  bCap = cap;
}
/** Starts a new string in the builder. */
export function bStart(): void {
  bN = 0;
}
/** Copies what was built into the arena; returns the address (length bN). */
export function bKeep(): usize {
  const p = arenaAlloc(bN);
  memory.copy(p, bP, bN);
  return p;
}
/** Appends the ASCII string `s`. */
export function bAscii(s: string): void {
  const n = <u32>s.length;
  bReserve(n);
  const src = changetype<usize>(s);
  const dst = bP + bN;
  bN += n;
  // Detail strings and names are built from literals on every new one: the low bytes of the UTF-16 code units (as
  // a <u8> truncation takes them) 8 or 4 at a time, the last group overlapping the one before; nothing is read or
  // written past either end.
  if (n >= 8) {
    let i: u32 = 0;
    for (; i + 8 < n; i += 8) ascii8(dst + i, src + (<usize>i << 1));
    ascii8(dst + n - 8, src + (<usize>(n - 8) << 1));
  } else if (n >= 4) {
    ascii4(dst, src);
    ascii4(dst + n - 4, src + (<usize>(n - 4) << 1));
  } else {
    for (let i: u32 = 0; i < n; i++) store<u8>(dst + i, <u8>load<u16>(src + (<usize>i << 1)));
  }
}
/** Writes the low bytes of the 8 UTF-16 code units at `src` to `dst`. */
// @ts-ignore: decorator
@inline function ascii8(dst: usize, src: usize): void {
  const v = v128.load(src);
  store<u64>(dst, i64x2.extract_lane(i8x16.shuffle(v, v, 0, 2, 4, 6, 8, 10, 12, 14, 0, 2, 4, 6, 8, 10, 12, 14), 0));
}
/** Writes the low bytes of the 4 UTF-16 code units at `src` to `dst`. */
// @ts-ignore: decorator
@inline function ascii4(dst: usize, src: usize): void {
  const x = load<u64>(src);
  store<u32>(dst, <u32>((x & 0xff) | ((x >> 8) & 0xff00) | ((x >> 16) & 0xff0000) | ((x >> 24) & 0xff000000)));
}
/** Appends the bytes [p, p+n). */
export function bBytes(p: usize, n: u32): void {
  bReserve(n);
  memory.copy(bP + bN, p, n);
  bN += n;
}
/** Appends the decimal text of `v` (emit/put.ts's table-driven writer). */
export function bU64(v: u64): void {
  bReserve(24); // 20 digits and the 4 bytes putU64 may store past them
  const q = bP + bN;
  bN += <u32>(putU64(q, v) - q);
}
/** `label`x,y,z (kernel grid and block sizes). */
export function bDim3(label: string, x: u32, y: u32, z: u32): void {
  bAscii(label);
  bU64(x);
  bAscii(",");
  bU64(y);
  bAscii(",");
  bU64(z);
}
function bI64(v: i64): void {
  if (v < 0) {
    bAscii("-");
    bU64(<u64>-v);
  } else bU64(<u64>v);
}
/** printf("%g") for 0 ≤ v < 1e6 (occupancy percentages): 6 significant digits, trailing zeros trimmed. */
export function bPercentG(v: f64): void {
  if (!(v > 0) || !isFinite(v)) {
    bAscii("0");
    return;
  }
  if (v >= 1e6) v = 999999;
  let e = <i32>Math.floor(Math.log10(v));
  let r = <u64>Math.round(v * Math.pow(10, <f64>(5 - e)));
  if (r >= 1000000) {
    e++;
    r = <u64>Math.round(v * Math.pow(10, <f64>(5 - e)));
  }
  if (r < 100000) {
    e--;
    r = <u64>Math.round(v * Math.pow(10, <f64>(5 - e)));
  }
  // r has 6 digits d0..d5; value = d0.d1d2d3d4d5 × 10^e.
  bReserve(16);
  const digits = bP + bN + 8; // build the 6 digits past the output position, then copy
  let t = r;
  for (let i = 5; i >= 0; i--) {
    store<u8>(digits + i, <u8>(48 + t % 10));
    t /= 10;
  }
  let last = 5;
  while (last > 0 && load<u8>(digits + last) == 48 && last > e) last--;
  const out = bP + bN;
  let k: u32 = 0;
  if (e >= 0) {
    for (let i = 0; i <= e; i++) store<u8>(out + k++, load<u8>(digits + i));
    if (last > e) {
      const tmp = arenaAlloc(8);
      memory.copy(tmp, digits + e + 1, <usize>(last - e));
      store<u8>(out + k++, 46);
      memory.copy(out + k, tmp, <usize>(last - e));
      k += <u32>(last - e);
    }
  } else {
    const tmp = arenaAlloc(8);
    memory.copy(tmp, digits, <usize>(last + 1));
    store<u8>(out + k++, 48);
    store<u8>(out + k++, 46);
    for (let i = 0; i < -e - 1; i++) store<u8>(out + k++, 48);
    memory.copy(out + k, tmp, <usize>(last + 1));
    k += <u32>(last + 1);
  }
  bN += k;
}
