/**
 * The output window: emitters write bytes straight into a fixed window in linear memory and hand full windows to
 * the host through the imported `env.rt_write(ptr, len)` (the host copies or writes them synchronously before the
 * call returns, so the window is reused). Number and JSON-string formatting write bytes without temporary strings.
 */

import { DIGITS4, putReset } from "./put";
import { regrow } from "../util/regrow";

// @ts-ignore: decorator
@external("env", "rt_write")
declare function hostWrite(ptr: usize, len: u32): void;

/** Window size. Large enough that per-event `need()` checks rarely flush. */
export const OUT_CAP: usize = 1 << 20;
/** Bytes one event's fixed parts may need, names excluded (they are written in pieces). */
export const EVENT_RESERVE: usize = 4096;

let outBuf: usize = 0;
let outEnd: usize = 0;
/** Next write position (module-global so hot writers can use it directly). */
export let pos: usize = 0;
/** Total bytes handed to the host. */
export let written: u64 = 0;

const DIGITS: usize = memory.data<u8>([
  48,48,48,49,48,50,48,51,48,52,48,53,48,54,48,55,48,56,48,57,49,48,49,49,49,50,49,51,49,52,49,53,49,54,49,55,49,56,49,57,
  50,48,50,49,50,50,50,51,50,52,50,53,50,54,50,55,50,56,50,57,51,48,51,49,51,50,51,51,51,52,51,53,51,54,51,55,51,56,51,57,
  52,48,52,49,52,50,52,51,52,52,52,53,52,54,52,55,52,56,52,57,53,48,53,49,53,50,53,51,53,52,53,53,53,54,53,55,53,56,53,57,
  54,48,54,49,54,50,54,51,54,52,54,53,54,54,54,55,54,56,54,57,55,48,55,49,55,50,55,51,55,52,55,53,55,54,55,55,55,56,55,57,
  56,48,56,49,56,50,56,51,56,52,56,53,56,54,56,55,56,56,56,57,57,48,57,49,57,50,57,51,57,52,57,53,57,54,57,55,57,56,57,57,
]);

/** Allocates the window; call after heap.reset(). */
export function outReset(): void {
  putReset();
  // 64 spare bytes past outEnd: SIMD stores may overrun the logical end by up to 15 bytes.
  outBuf = heap.alloc(OUT_CAP + 64);
  outEnd = outBuf + OUT_CAP;
  pos = outBuf;
  written = 0;
  mode = TO_HOST;
  capBuf = 0;
  capCap = 0;
  capLen = 0;
}

/**
 * Where {@link flush} sends the window: to the host ({@link TO_HOST}), nowhere ({@link DROP}: a pass whose output
 * nobody reads, emit/timeline_details.ts), or to the end of the capture buffer ({@link CAPTURE}: one event's text
 * kept whole, however many flushes it takes).
 */
export const TO_HOST: u32 = 0;
export const DROP: u32 = 1;
export const CAPTURE: u32 = 2;
let mode: u32 = TO_HOST;
let capBuf: usize = 0;
let capCap: usize = 0;
/** Bytes in the capture buffer ({@link captured}). */
export let capLen: usize = 0;

/** Sets where {@link flush} sends the window from now on (call {@link flush} first to settle what it holds). */
export function outMode(m: u32): void {
  mode = m;
  if (m == CAPTURE) capLen = 0;
}

/** Start of the bytes captured since {@link outMode}(CAPTURE) ({@link capLen} of them; valid until the next capture). */
export function captured(): usize {
  return capBuf;
}

function capture(p: usize, n: usize): void {
  if (capLen + n > capCap) {
    let cap = capCap == 0 ? <usize>4096 : capCap;
    while (cap < capLen + n) cap <<= 1;
    capBuf = regrow(capBuf, capLen, cap);
    capCap = cap;
  }
  memory.copy(capBuf + capLen, p, n);
  capLen += n;
}

/** Hands the bytes written so far to the host (or drops or captures them: {@link outMode}). */
export function flush(): void {
  const n = <u32>(pos - outBuf);
  if (n != 0) {
    if (mode == TO_HOST) hostWrite(outBuf, n);
    else if (mode == CAPTURE) capture(outBuf, n);
    written += n;
  }
  pos = outBuf;
}

/** Makes sure `n` (≤ OUT_CAP - 32) bytes, plus the 16-byte slack {@link ascii} may overwrite, fit at `pos`. */
// @ts-ignore: decorator
@inline export function need(n: usize): void {
  if (pos + n + 32 > outEnd) flush();
}

// @ts-ignore: decorator
@inline export function byte(b: u32): void {
  store<u8>(pos, <u8>b);
  pos++;
}

/** Writes raw bytes of any length (flushing as needed). */
export function raw(p: usize, n: usize): void {
  while (n > 0) {
    let room = outEnd - pos;
    if (room == 0) {
      flush();
      room = OUT_CAP;
    }
    const k = n < room ? n : room;
    memory.copy(pos, p, k);
    pos += k;
    p += k;
    n -= k;
  }
}

/**
 * Writes an ASCII AS string (compile-time constants: keys, punctuation). Caller reserved room via need() for the
 * string plus 16 bytes of slack: the copy narrows UTF-16 to bytes 16 characters at a time with SIMD and may write
 * up to 15 bytes past the end (they are overwritten by what follows). Reading up to 31 bytes past the string is
 * safe: literals live in the static data segment, far below the end of memory.
 */
export function ascii(s: string): void {
  const n = <usize>s.length;
  let src = changetype<usize>(s);
  let dst = pos;
  const end = dst + n;
  while (dst < end) {
    v128.store(dst, i8x16.narrow_i16x8_u(v128.load(src), v128.load(src, 16)));
    src += 32;
    dst += 16;
  }
  pos += n;
}

/** Number of decimal digits of v. */
// @ts-ignore: decorator
@inline function digits64(v: u64): u32 {
  let n: u32 = 1;
  let t: u64 = 10;
  // 10^19 still fits in u64; the loop stops at 20 digits before t could overflow twice.
  while (n < 20 && v >= t) {
    n++;
    t *= 10;
  }
  return n;
}

/** Number of decimal digits of a u32. */
// @ts-ignore: decorator
@inline function digits32(v: u32): u32 {
  if (v < 100000) {
    if (v < 100) return v < 10 ? 1 : 2;
    return v < 1000 ? 3 : v < 10000 ? 4 : 5;
  }
  if (v < 10000000) return v < 1000000 ? 6 : 7;
  return v < 100000000 ? 8 : v < 1000000000 ? 9 : 10;
}

/** Writes the `n` low digits of v (n = its digit count, or more for zero padding) ending at q. */
// @ts-ignore: decorator
@inline function digitsAt(q: usize, v: u32, n: u32): void {
  const start = q - n;
  // Four digits per step from a 40 KB table: half the divisions of a two-digit table.
  while (v >= 10000) {
    const r = <usize>(v % 10000);
    v /= 10000;
    q -= 4;
    store<u32>(q, load<u32>(DIGITS4 + (r << 2)));
  }
  if (v >= 100) {
    const r = <usize>(v % 100);
    v /= 100;
    q -= 2;
    store<u16>(q, load<u16>(DIGITS + (r << 1)));
  }
  if (v >= 10) {
    q -= 2;
    store<u16>(q, load<u16>(DIGITS + (<usize>v << 1)));
  } else {
    q -= 1;
    store<u8>(q, <u8>(48 + v));
  }
  while (q > start) {
    q--;
    store<u8>(q, 48);
  }
}

/** Writes v in decimal. Caller reserved ≥ 20 bytes. */
// @ts-ignore: decorator
@inline export function u64dec(v: u64): void {
  // Most numbers in a trace are small (device, stream, context, grid): one or two stores, no call.
  if (v < 10) {
    store<u8>(pos, <u8>(48 + v));
    pos++;
  } else if (v < 100) {
    store<u16>(pos, load<u16>(DIGITS + (<usize>v << 1)));
    pos += 2;
  } else u64decAny(v);
}

/** Writes v (any size) in decimal. */
function u64decAny(v: u64): void {
  // 32-bit division is several times cheaper than 64-bit: split large values into 8-digit halves.
  if (v <= 0xffffffff) {
    const x = <u32>v;
    const n = digits32(x);
    digitsAt(pos + n, x, n);
    pos += n;
    return;
  }
  const hi = v / 100000000;
  const lo = <u32>(v - hi * 100000000);
  u64decAny(hi);
  // The low 8 digits: exactly two table entries.
  store<u32>(pos, load<u32>(DIGITS4 + (<usize>(lo / 10000) << 2)));
  store<u32>(pos + 4, load<u32>(DIGITS4 + (<usize>(lo % 10000) << 2)));
  pos += 8;
}

/** Writes a signed decimal. Caller reserved ≥ 21 bytes. */
export function i64dec(v: i64): void {
  if (v < 0) {
    byte(45);
    u64dec(<u64>-v);
  } else u64dec(<u64>v);
}

/** Writes ns as µs with exactly three decimals (Kineto's fmtTs): 1234567 → "1234.567". Reserved ≥ 24 bytes. */
export function micros(ns: u64): void {
  u64dec(ns / 1000);
  const r = <usize>(ns % 1000);
  store<u8>(pos, 46);
  store<u8>(pos + 1, <u8>(48 + r / 100));
  store<u16>(pos + 2, load<u16>(DIGITS + ((r % 100) << 1)));
  pos += 4;
}

/**
 * Writes a finite f64 with up to `decimals` fractional digits, trailing zeros trimmed (never NaN or Infinity: those
 * are written as 0; magnitudes from 1e18 up as 1e18). Fewer decimals are written when v × 10^decimals would not fit
 * in 64 bits (e.g. a bandwidth of 1e12 GB/s gets 7 decimals, not 9). Reserved ≥ 48 bytes.
 */
export function fixed(v: f64, decimals: i32): void {
  if (!isFinite(v)) v = 0;
  if (v < 0) {
    byte(45);
    v = -v;
  }
  if (v >= 1e18) {
    u64dec(<u64>1e18);
    return;
  }
  let scale: f64 = 1;
  for (let i = 0; i < decimals; i++) scale *= 10;
  // The scaled value must stay below 2^64 (the conversion below saturates): drop decimals until it does.
  while (decimals > 0 && v * scale >= 1.8e19) {
    decimals--;
    scale /= 10;
  }
  const total = <u64>Math.round(v * scale);
  const s = <u64>scale;
  const ip = total / s;
  let fp = total % s;
  u64dec(ip);
  if (fp == 0) return;
  let d = decimals;
  while (fp % 10 == 0) {
    fp /= 10;
    d--;
  }
  byte(46);
  // Leading zeros of the fraction.
  let lead = d - <i32>digits64(fp);
  while (lead-- > 0) byte(48);
  u64dec(fp);
}

const HEX: usize = memory.data<u8>([48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 97, 98, 99, 100, 101, 102]);

/**
 * Writes [p, p+n) as the inside of a JSON string: `"` and `\` escaped, control bytes as \n \t \r or \u00XX, DEL
 * kept. Input must be valid UTF-8 (session display strings are). Any length; flushes as needed.
 */
export function jsonChars(p: usize, n: usize): void {
  const end = p + n;
  const ctl = i8x16.splat(0x20);
  const quote = i8x16.splat(0x22);
  const bslash = i8x16.splat(0x5c);
  while (p < end) {
    // Fast path: find the run of bytes that need no escaping, 16 at a time (SIMD) while 16 remain, then bytewise;
    // copy the run with one memory.copy.
    let q = p;
    while (q + 16 <= end) {
      const v = v128.load(q);
      const bad = v128.or(i8x16.lt_u(v, ctl), v128.or(i8x16.eq(v, quote), i8x16.eq(v, bslash)));
      if (v128.any_true(bad)) break;
      q += 16;
    }
    while (q < end) {
      const c = load<u8>(q);
      if (c < 0x20 || c == 0x22 || c == 0x5c) break;
      q++;
    }
    if (q > p) raw(p, q - p);
    if (q >= end) return;
    need(6);
    const c = <u32>load<u8>(q);
    store<u8>(pos, 92);
    if (c == 0x22 || c == 0x5c) {
      store<u8>(pos + 1, <u8>c);
      pos += 2;
    } else if (c == 10) {
      store<u8>(pos + 1, 110);
      pos += 2;
    } else if (c == 9) {
      store<u8>(pos + 1, 116);
      pos += 2;
    } else if (c == 13) {
      store<u8>(pos + 1, 114);
      pos += 2;
    } else {
      store<u8>(pos + 1, 117);
      store<u8>(pos + 2, 48);
      store<u8>(pos + 3, 48);
      store<u8>(pos + 4, load<u8>(HEX + (c >> 4)));
      store<u8>(pos + 5, load<u8>(HEX + (c & 15)));
      pos += 6;
    }
    p = q + 1;
  }
}

/** Writes a quoted JSON string of [p, p+n). */
export function jsonString(p: usize, n: usize): void {
  need(1);
  byte(34);
  jsonChars(p, n);
  need(1);
  byte(34);
}
