/**
 * Cursor-style writers for the hot paths of the text emitters: each takes the output address `q`, writes, and
 * returns the address after what it wrote, so a caller keeps the position in a local for a whole event and stores
 * it back into `O.pos` (emit/out.ts) once (a module global is a memory load and store per update; a local is a register).
 *
 * Every writer here may store up to 16 bytes past what it logically writes (whole v128 stores): callers reserve
 * room with `O.need` for the event plus that slack, as for `O.ascii`. Constant key runs are written
 * from byte templates ({@link tpl}) built once from ASCII strings, so no UTF-16 narrowing happens per event.
 */
// ---- Byte templates -------------------------------------------------------------------------------------------------

/**
 * Template pool: static data (survives heap.reset()). A template is a u32 length, 12 bytes of padding, then the
 * bytes, zero-padded to a multiple of 16 plus 16 more, so a copy may always read whole v128s.
 */
const TPL_CAP: i32 = 16384;
const TPL_POOL: usize = memory.data(TPL_CAP, 16);
let tplTop: usize = 0;

/**
 * Returns the template of ASCII string `s` (a constant key run such as `,"stream":`): its bytes are stored once in
 * the static pool; write it with {@link putLit}. Call at module start (templates are handles held in globals).
 */
export function tpl(s: string): usize {
  const n = <usize>s.length;
  const size: usize = 16 + ((n + 15) & ~(<usize>15)) + 16;
  if (tplTop + size > <usize>TPL_CAP) unreachable(); // the pool is sized for the emitters' fixed set of templates
  const t = TPL_POOL + tplTop;
  tplTop += size;
  store<u32>(t, <u32>n);
  for (let i: usize = 0; i < n; i++) store<u8>(tplText(t) + i, <u8>s.charCodeAt(<i32>i));
  return t;
}

/** Address of the text of template `t` (its {@link tplLen} bytes). */
// @ts-ignore: decorator
@inline export function tplText(t: usize): usize {
  return t + 16;
}

/** Length in bytes of template `t`. */
// @ts-ignore: decorator
@inline export function tplLen(t: usize): usize {
  return <usize>load<u32>(t);
}

/** Writes template `t` at q (whole v128 copies: may store up to 15 bytes past its end). */
// @ts-ignore: decorator
@inline export function putLit(q: usize, t: usize): usize {
  const n = <usize>load<u32>(t);
  v128.store(q, v128.load(t, 16));
  if (n > 16) {
    v128.store(q, v128.load(t, 32), 16);
    if (n > 32) {
      // Category openings and the flow event's end are 33–48 bytes: written without entering the loop.
      v128.store(q, v128.load(t, 48), 32);
      for (let i: usize = 48; i < n; i += 16) v128.store(q + i, v128.load(t + 16 + i));
    }
  }
  return q + n;
}

/**
 * Writes template `t` of `n` ≤ 64 bytes at q, `n` a constant of the call site (the tests for the length fold away;
 * the template's module checks `n` once at start with {@link tplIs}). May store up to 15 bytes past its end.
 */
// @ts-ignore: decorator
@inline export function putConst(q: usize, t: usize, n: usize): usize {
  v128.store(q, v128.load(t, 16));
  if (n > 16) v128.store(q, v128.load(t, 32), 16);
  if (n > 32) v128.store(q, v128.load(t, 48), 32);
  if (n > 48) v128.store(q, v128.load(t, 64), 48);
  return q + n;
}

/** Template `t`, after checking that it is `n` bytes long (for {@link putConst}; traps at module start if not). */
export function tplIs(t: usize, n: usize): usize {
  if (tplLen(t) != n || n > 64) unreachable();
  return t;
}

/** Copies `n` ≤ 64 bytes from static or cached text at `src` (readable 64 bytes from src) to q. */
// @ts-ignore: decorator
@inline export function put64(q: usize, src: usize, n: usize): usize {
  v128.store(q, v128.load(src));
  if (n > 16) {
    v128.store(q, v128.load(src, 16), 16);
    if (n > 32) {
      v128.store(q, v128.load(src, 32), 32);
      v128.store(q, v128.load(src, 48), 48);
    }
  }
  return q + n;
}

// ---- Numbers -------------------------------------------------------------------------------------------------------

/**
 * Three decimal digits per entry ("000".."999", then one unused byte): one u32 load and store writes them. Static
 * data, filled once.
 */
const DIGITS3: usize = memory.data(4000, 4);
/** Four decimal digits per entry ("0000".."9999"); emit/out.ts formats with it too. */
export const DIGITS4: usize = memory.data(40000, 4);
let tablesReady = false;

/** Fills the digit tables (idempotent; emit/out.ts's outReset calls it). */
export function putReset(): void {
  if (tablesReady) return;
  for (let i: u32 = 0; i < 10000; i++) {
    const a = DIGITS4 + (<usize>i << 2);
    store<u8>(a, <u8>(48 + i / 1000));
    store<u8>(a, <u8>(48 + (i / 100) % 10), 1);
    store<u8>(a, <u8>(48 + (i / 10) % 10), 2);
    store<u8>(a, <u8>(48 + i % 10), 3);
  }
  for (let i: u32 = 0; i < 1000; i++) {
    const a = DIGITS3 + (<usize>i << 2);
    store<u8>(a, <u8>(48 + i / 100));
    store<u8>(a, <u8>(48 + (i / 10) % 10), 1);
    store<u8>(a, <u8>(48 + i % 10), 2);
    store<u8>(a, 0, 3);
  }
  // Each id table's entry i starts holding the value i, the one of its values the slot takes first (none is empty).
  for (let i: u32 = 0; i < ID_SLOTS; i++) {
    idFill(CORR_IDS + (<usize>i << 4), i);
    idFill(EXTERNAL_IDS + (<usize>i << 4), i);
  }
  tablesReady = true;
}

/** Writes v < 1000 as exactly three digits (zero-padded). */
// @ts-ignore: decorator
@inline export function put3(q: usize, v: u32): usize {
  store<u32>(q, load<u32>(DIGITS3 + (<usize>v << 2)));
  return q + 3;
}

/** Writes v < 10000 without leading zeros: one table load, shifted past the zeros, one store. */
// @ts-ignore: decorator
@inline function putSmall(q: usize, v: u32): usize {
  const n: u32 = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : 4;
  store<u32>(q, load<u32>(DIGITS4 + (<usize>v << 2)) >> ((4 - n) << 3));
  return q + n;
}

/** Writes v ≥ 10000 (not inlined: the rarer, longer case). */
function putU32Big(q: usize, v: u32): usize {
  if (v < 100000000) {
    // 5..8 digits: the high part without zeros, the low four from the table.
    const hi = v / 10000;
    const lo = v - hi * 10000;
    q = putSmall(q, hi);
    store<u32>(q, load<u32>(DIGITS4 + (<usize>lo << 2)));
    return q + 4;
  }
  // 9..10 digits.
  const hi = v / 100000000;
  const lo = v - hi * 100000000;
  q = putSmall(q, hi);
  const a = lo / 10000;
  store<u32>(q, load<u32>(DIGITS4 + (<usize>a << 2)));
  store<u32>(q + 4, load<u32>(DIGITS4 + (<usize>(lo - a * 10000) << 2)));
  return q + 8;
}

/** Writes a u32 in decimal (≤ 10 bytes, plus 4 of slack). */
// @ts-ignore: decorator
@inline export function putU32(q: usize, v: u32): usize {
  if (v < 10000) return putSmall(q, v);
  return putU32Big(q, v);
}

/** Writes a u64 ≥ 2^32 in decimal: 32-bit halves of at most 10 and exactly 10 digits. */
function putU64Big(q: usize, v: u64): usize {
  const hi = v / 10000000000;
  const lo = v - hi * 10000000000;
  if (hi != 0) {
    q = hi > 0xffffffff ? putU64Big(q, hi) : putU32(q, <u32>hi);
    // lo < 10^10: its top two digits, then eight.
    const top = <u32>(lo / 100000000);
    const rest = <u32>(lo - <u64>top * 100000000);
    store<u16>(q, <u16>(load<u32>(DIGITS4 + (<usize>top << 2)) >> 16));
    const a = rest / 10000;
    store<u32>(q + 2, load<u32>(DIGITS4 + (<usize>a << 2)));
    store<u32>(q + 6, load<u32>(DIGITS4 + (<usize>(rest - a * 10000) << 2)));
    return q + 10;
  }
  // 2^32 ≤ v < 10^10.
  const top = <u32>(v / 100000000);
  const rest = <u32>(v - <u64>top * 100000000);
  q = putSmall(q, top);
  const a = rest / 10000;
  store<u32>(q, load<u32>(DIGITS4 + (<usize>a << 2)));
  store<u32>(q + 4, load<u32>(DIGITS4 + (<usize>(rest - a * 10000) << 2)));
  return q + 8;
}

/** Writes a u64 in decimal (≤ 20 bytes, plus 4 of slack). */
// @ts-ignore: decorator
@inline export function putU64(q: usize, v: u64): usize {
  if (v <= 0xffffffff) return putU32(q, <u32>v);
  return putU64Big(q, v);
}

/** Writes ns as µs with exactly three decimals (Kineto's fmtTs), any size. */
// @ts-ignore: decorator
@inline export function putMicros(q: usize, ns: u64): usize {
  if (ns <= 0xffffffff) {
    const x = <u32>ns;
    const us = x / 1000;
    q = putU32(q, us);
    store<u8>(q, 46);
    return put3(q + 1, x - us * 1000);
  }
  return putMicrosBig(q, ns);
}

function putMicrosBig(q: usize, ns: u64): usize {
  const us = ns / 1000;
  q = putU64(q, us);
  store<u8>(q, 46);
  return put3(q + 1, <u32>(ns - us * 1000));
}

// ---- Ids ------------------------------------------------------------------------------------------------------------

/**
 * Decimal text of recently written ids, one table per kind of id: a correlation id is written up to four times (its
 * host call's args, that call's flow event, its device op's args and that op's flow event), an external id twice,
 * a few records apart. Direct-mapped by the value's low bits; an entry is 16 bytes: the digits @0 (≤ 10), their
 * count u8 @10, the value u32 @12. A pure function of the value: static, never cleared.
 */
const ID_SLOTS: u32 = 256;
/** Correlation ids (and the flow ids made from them). */
export const CORR_IDS: usize = memory.data(<i32>ID_SLOTS * 16, 16);
/** External (framework op) ids. */
export const EXTERNAL_IDS: usize = memory.data(<i32>ID_SLOTS * 16, 16);

/** Makes entry `s` hold the text of `v`. */
function idFill(s: usize, v: u32): void {
  const n = putU32(s, v) - s;
  store<u8>(s, <u8>n, 10);
  store<u32>(s, v, 12);
}

/**
 * Writes `v` < 2^32 at q and keeps its text in entry `s` of `table` (not inlined: the miss). Ids mostly count up: when
 * the table holds v - 1 and its last digit is not 9, v's text is that one with the last digit raised (not for v = 0,
 * whose v - 1 wraps to 2^32 - 1).
 */
function putIdMiss(q: usize, v: u32, s: usize, table: usize): usize {
  const ps = table + ((<usize>(v - 1) & (ID_SLOTS - 1)) << 4);
  const n = <usize>load<u8>(ps, 10);
  const last = load<u8>(ps + n - 1);
  if (((load<u32>(ps, 12) ^ (v - 1)) | <u32>(last == 57) | <u32>(v == 0)) == 0) {
    v128.store(s, v128.load(ps)); // the digits and their count (n, the same), then this entry's own value
    store<u8>(s + n - 1, last + 1);
    store<u32>(s, v, 12);
    v128.store(q, v128.load(s));
    return q + n;
  }
  const e = putU32(q, v);
  v128.store(s, v128.load(q));
  store<u8>(s, <u8>(e - q), 10);
  store<u32>(s, v, 12);
  return e;
}

/**
 * Writes id `v` in decimal like {@link putU64}, from id table `table` (CORR_IDS or EXTERNAL_IDS) when it holds it:
 * one 16-byte copy (up to 16 bytes stored, as putU64's slack).
 */
// @ts-ignore: decorator
@inline export function putId(q: usize, v: u64, table: usize): usize {
  if (v > 0xffffffff) return putU64Big(q, v);
  const s = table + ((<usize>v & (ID_SLOTS - 1)) << 4);
  if (load<u32>(s, 12) != <u32>v) return putIdMiss(q, <u32>v, s, table);
  v128.store(q, v128.load(s));
  return q + <usize>load<u8>(s, 10);
}

// ---- Timestamps ----------------------------------------------------------------------------------------------------

/**
 * Timestamps are 10–13 digits of µs: formatted from a per-window base instead of by 64-bit division. A window is
 * one second of the time axis ([s·10^9, (s+1)·10^9) ns); its decimal text (`s`, the µs digits above the last six)
 * is kept, and a time inside it is the text plus a 32-bit delta written as six µs digits, a point and three.
 * Host and device times interleave (launches lead their kernels by up to milliseconds): two windows are kept.
 */
const WIN_TEXT: usize = memory.data(64, 16); // two × 32 bytes: the seconds' digits of window 0 and 1
// Window starts (ns). No "empty" marker: any marker value would match the times just after it (the test is a
// wrapping subtraction), so both start as the valid window [0, 10^9) whose text is empty.
let win0: u64 = 0;
let win1: u64 = 0;
let win0Len: usize = 0;
let win1Len: usize = 0;
let winNext: u32 = 0; // which window the next miss replaces

/** Resets the timestamp windows to [0, 10^9) (the text they hold is a pure function of the window: optional). */
export function tsReset(): void {
  win0 = 0;
  win1 = 0;
  win0Len = 0;
  win1Len = 0;
  winNext = 0;
}

/** Fills window `w` for time `ns`; returns its start. */
function tsWindow(w: u32, ns: u64): u64 {
  const s = ns / 1000000000;
  const start = s * 1000000000;
  const text = WIN_TEXT + (<usize>w << 5);
  // Zero seconds: no prefix (and then the µs digits are written without padding).
  const len: usize = s == 0 ? 0 : putU64(text, s) - text;
  if (w == 0) {
    win0 = start;
    win0Len = len;
  } else {
    win1 = start;
    win1Len = len;
  }
  return start;
}

/** Writes the delta `d` < 10^9 ns of a window whose prefix (`len` bytes at `text`) was already written. */
// @ts-ignore: decorator
@inline function tsTail(q: usize, d: u32, len: usize): usize {
  const us = d / 1000;
  const f = d - us * 1000;
  if (len != 0) {
    const hi = us / 1000;
    q = put3(q, hi);
    q = put3(q, us - hi * 1000);
  } else q = putU32(q, us);
  store<u8>(q, 46);
  return put3(q + 1, f);
}

/** Writes ns as µs with exactly three decimals, like {@link putMicros}, for times (long, slowly changing values). */
export function putTs(q: usize, ns: u64): usize {
  return putTsInline(q, ns);
}

/** {@link putTs} written out at its call site (the event head's ts, once per event). */
// @ts-ignore: decorator
@inline export function putTsInline(q: usize, ns: u64): usize {
  let d = ns - win0;
  if (d < 1000000000) {
    v128.store(q, v128.load(WIN_TEXT));
    return tsTail(q + win0Len, <u32>d, win0Len);
  }
  d = ns - win1;
  if (d < 1000000000) {
    v128.store(q, v128.load(WIN_TEXT, 32));
    return tsTail(q + win1Len, <u32>d, win1Len);
  }
  return putTsMiss(q, ns);
}

/** {@link putTs} for a time in neither window: replaces one (not inlined: the rare case). */
function putTsMiss(q: usize, ns: u64): usize {
  const w = winNext;
  winNext ^= 1;
  const start = tsWindow(w, ns);
  const len = w == 0 ? win0Len : win1Len;
  v128.store(q, v128.load(WIN_TEXT + (<usize>w << 5)));
  return tsTail(q + len, <u32>(ns - start), len);
}

// ---- JSON strings --------------------------------------------------------------------------------------------------

/** Lanes of `v` that a JSON string must escape: control bytes (< 0x20), `"` and `\` (all ones there, else zero). */
// @ts-ignore: decorator
@inline function escapes(v: v128): v128 {
  return v128.or(i8x16.lt_u(v, i8x16.splat(0x20)), v128.or(i8x16.eq(v, i8x16.splat(0x22)), i8x16.eq(v, i8x16.splat(0x5c))));
}

/**
 * Writes [p, p+n) as the inside of a JSON string (the escaping of `O.jsonChars`), copying 16 bytes per step
 * while it checks them. Needs room for 6·n + 16 bytes at q, and may read up to 15 bytes past p+n: the caller checks
 * that p + n + 16 lies inside linear memory ({@link canOverread}).
 */
export function putJsonChars(q: usize, p: usize, n: usize): usize {
  const end = p + n;
  // Whole 32-byte blocks with nothing to escape (nearly every name): one test per block.
  while (p + 32 <= end) {
    const a = v128.load(p);
    const b = v128.load(p, 16);
    if (v128.any_true(v128.or(escapes(a), escapes(b)))) break;
    v128.store(q, a);
    v128.store(q, b, 16);
    p += 32;
    q += 32;
  }
  const left = end - p;
  if (left - 1 < 31) {
    // The last 1–31 bytes in one test (the loop below takes up to two rounds for them): reads at most to p + 32,
    // less than 16 bytes past the end when more than 16 are left; stores at most 16 bytes past the end.
    const a = v128.load(p);
    let m = <u32>i8x16.bitmask(escapes(a));
    if (left > 16) {
      const b = v128.load(p, 16);
      m |= <u32>i8x16.bitmask(escapes(b)) << 16;
      if ((m & ((<u32>1 << <u32>left) - 1)) == 0) {
        v128.store(q, a);
        v128.store(q, b, 16);
        return q + left;
      }
    } else if ((m & ((<u32>1 << <u32>left) - 1)) == 0) {
      v128.store(q, a);
      return q + left;
    }
  }
  while (p < end) {
    const v = v128.load(p);
    v128.store(q, v);
    let m = <u32>i8x16.bitmask(escapes(v));
    const rem = end - p;
    if (rem < 16) m &= (<u32>1 << <u32>rem) - 1;
    if (m == 0) {
      const k = rem < 16 ? rem : 16;
      p += k;
      q += k;
      continue;
    }
    const k = <usize>ctz(m);
    p += k;
    q += k;
    const c = <u32>load<u8>(p);
    p++;
    store<u8>(q, 92);
    if (c == 0x22 || c == 0x5c) {
      store<u8>(q, <u8>c, 1);
      q += 2;
    } else if (c == 10) {
      store<u8>(q, 110, 1);
      q += 2;
    } else if (c == 9) {
      store<u8>(q, 116, 1);
      q += 2;
    } else if (c == 13) {
      store<u8>(q, 114, 1);
      q += 2;
    } else {
      // \u00XX: the two hex digits of a control byte (< 0x20).
      store<u8>(q, 117, 1);
      store<u8>(q, 48, 2);
      store<u8>(q, 48, 3);
      store<u8>(q, <u8>(48 + (c >> 4)), 4);
      const lo = c & 15;
      store<u8>(q, <u8>(lo < 10 ? 48 + lo : 87 + lo), 5);
      q += 6;
    }
  }
  return q;
}

/** True when `n` bytes at p can be read with up to 16 bytes of over-read without leaving linear memory. */
// @ts-ignore: decorator
@inline export function canOverread(p: usize, n: usize): bool {
  return p + n + 16 <= (<usize>memory.size() << 16);
}
