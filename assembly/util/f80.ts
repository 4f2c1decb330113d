/**
 * x87 80-bit extended precision (`long double` on x86-64 Linux) → integer nanoseconds.
 *
 * Synapse reports timestamps and durations as `long double` microseconds. The 10-byte little-endian layout is:
 * bytes 0..7 = 64-bit significand with an explicit integer bit (bit 63), bytes 8..9 = sign (bit 15) and a 15-bit
 * exponent biased by 16383. A finite value is `m × 2^(e − 16383 − 63)` (normal, e ≥ 1, integer bit set) or
 * `m × 2^(1 − 16383 − 63)` (denormal, e = 0, integer bit clear).
 *
 * Rounding rule (exactly what C on x86-64 computes for `(uint64_t)roundl(x * 1000.0L)`):
 * 1. the product `x × 1000` is rounded to the 64-bit significand, round to nearest, ties to even (x87 default
 *    precision and rounding control);
 * 2. that product is rounded to an integer, halves away from zero (`roundl`/`llroundl`).
 * The result is returned as u64 ns. Non-finite, invalid, negative and too-large inputs return 0 and set
 * {@link f80Status} to a non-zero status (`F80_*`), which callers turn into a counted warning.
 *
 * Negative values: −0 decodes to 0 (status OK); any other negative value is `F80_NEGATIVE` (times and durations
 * are never negative). Encodings the 80387 and later reject (unnormals: e ≠ 0 with the integer bit clear;
 * pseudo-infinity/pseudo-NaN: e = 32767 with the integer bit clear) and pseudo-denormals (e = 0 with the integer
 * bit set, which no compiler or library writes) are `F80_INVALID`.
 */

/** Decoded fine. */
export const F80_OK: i32 = 0;
/** Negative non-zero value (ns cannot be negative). */
export const F80_NEGATIVE: i32 = 1;
/** +∞ or −∞. */
export const F80_INFINITY: i32 = 2;
/** Quiet or signalling NaN (including the x87 "real indefinite"). */
export const F80_NAN: i32 = 3;
/** Unnormal, pseudo-denormal, pseudo-infinity or pseudo-NaN encoding. */
export const F80_INVALID: i32 = 4;
/** The rounded value is ≥ 2^64 ns. */
export const F80_OVERFLOW: i32 = 5;

/** Status of the last {@link f80ToNs} call (`F80_*`). */
export let f80Status: i32 = F80_OK;

const INT_BIT: u64 = 0x8000000000000000;

/**
 * Decodes the 10-byte x87 long double at `p` (microseconds) into nanoseconds (see the module rule), setting
 * {@link f80Status}. Returns 0 when the status is not `F80_OK`. `p` needs no alignment.
 */
export function f80ToNs(p: usize): u64 {
  const m = load<u64>(p);
  const se = <u32>load<u16>(p, 8);
  const e = <i32>(se & 0x7fff);
  const neg = (se & 0x8000) != 0;
  if (e == 0x7fff) {
    if ((m & INT_BIT) == 0) { f80Status = F80_INVALID; return 0; }
    f80Status = (m << 1) == 0 ? F80_INFINITY : F80_NAN;
    return 0;
  }
  if (e == 0) {
    if ((m & INT_BIT) != 0) { f80Status = F80_INVALID; return 0; }
    if (m == 0) { f80Status = F80_OK; return 0; }
    // Denormal: |x| < 2^-16382, far below 0.5 ns after ×1000.
    f80Status = neg ? F80_NEGATIVE : F80_OK;
    return 0;
  }
  if ((m & INT_BIT) == 0) { f80Status = F80_INVALID; return 0; }
  if (neg) { f80Status = F80_NEGATIVE; return 0; }

  // P = m × 1000 as a 128-bit number (hi, lo); m ≥ 2^63 so P ∈ [2^72, 2^74).
  const a = (m & 0xffffffff) * 1000; // < 2^42
  const b = (m >> 32) * 1000; // < 2^42
  const lo = a + (b << 32);
  const hi = (b >> 32) + <u64>(lo < a ? 1 : 0);
  // Shift k so that P >> k has exactly 64 bits: P's bit length is 64 + k, hi < 2^10.
  const k = <i32>(64 - clz<u64>(hi));
  let q = (hi << (64 - k)) | (lo >> k);
  const rem = lo & ((<u64>1 << k) - 1);
  const half = <u64>1 << (k - 1);
  let ex = k + e - 16446; // value = q × 2^ex
  if (rem > half || (rem == half && (q & 1) != 0)) {
    q += 1;
    if (q == 0) { q = INT_BIT; ex += 1; }
  }
  if (ex >= 1) { f80Status = F80_OVERFLOW; return 0; }
  f80Status = F80_OK;
  if (ex == 0) return q;
  const s = -ex;
  if (s > 64) return 0; // q × 2^-s < 0.5
  if (s == 64) return 1; // q ≥ 2^63 → value ∈ [0.5, 1): half rounds away from zero
  return (q >> s) + ((q >> (s - 1)) & 1);
}

/**
 * Decodes `n` packed 10-byte long doubles at `src` into u64 ns at `dstNs` and one status byte each at `dstStatus`
 * (for host-side tools and the bit-exactness test). Returns the number of values with a non-OK status.
 */
export function f80ToNsBatch(src: usize, n: u32, dstNs: usize, dstStatus: usize): u32 {
  let bad: u32 = 0;
  for (let i: u32 = 0; i < n; i++) {
    const ns = f80ToNs(src + <usize>i * 10);
    store<u64>(dstNs + (<usize>i << 3), ns);
    store<u8>(dstStatus + <usize>i, <u8>f80Status);
    if (f80Status != F80_OK) bad++;
  }
  return bad;
}
