/**
 * Protocol-buffers wire encoding into the output window (emit/out.ts): varints, tags, length prefixes, and the
 * matching size functions. A message is written by first computing its exact size with the `size*` functions (the
 * length prefix must come before the content) and then writing the same fields with the `put*` functions; the two
 * families must agree byte for byte (emit/xspace.ts checks this per line and aborts on a mismatch).
 *
 * Only what XSpace needs: varint (int64/uint64, two's complement for negatives), fixed64 (double) and
 * length-delimited (string, bytes, sub-message). Field numbers must be < 16 (one-byte tags) except where
 * {@link tagSize} says otherwise.
 */
import * as O from "./out";

/** Wire types. */
export const enum Wire {
  VARINT = 0,
  FIXED64 = 1,
  LEN = 2,
}

/** Bytes of v as a varint (1..10). */
// @ts-ignore: decorator
@inline export function varintSize(v: u64): u32 {
  // 1 + floor(bits / 7), where bits = 64 - clz(v | 1).
  return <u32>((<u64>(63 - clz<u64>(v | 1)) * 9 + 73) >> 6);
}

/** Bytes of the tag of field `f`. */
// @ts-ignore: decorator
@inline export function tagSize(f: u32): u32 {
  return f < 16 ? 1 : f < 2048 ? 2 : 3;
}

/** Size of a varint field (tag + value), always written (oneof members, or callers that test for 0 first). */
// @ts-ignore: decorator
@inline export function sizeVarintField(f: u32, v: u64): u32 {
  return tagSize(f) + varintSize(v);
}

/** Size of a length-delimited field whose content is `n` bytes. */
// @ts-ignore: decorator
@inline export function sizeLenField(f: u32, n: u64): u64 {
  return <u64>tagSize(f) + <u64>varintSize(n) + n;
}

/** Writes v as a varint at O.pos. Caller reserved ≥ 10 bytes. */
// @ts-ignore: decorator
@inline export function putVarint(v: u64): void {
  let p = O.pos;
  while (v >= 0x80) {
    store<u8>(p, <u8>(v | 0x80));
    v >>= 7;
    p++;
  }
  store<u8>(p, <u8>v);
  O.pos = p + 1;
}

/** Writes the tag of field `f` with wire type `w`. Caller reserved ≥ 3 bytes. */
// @ts-ignore: decorator
@inline export function putTag(f: u32, w: Wire): void {
  putVarint(<u64>((f << 3) | <u32>w));
}

/** Writes a varint field. Caller reserved ≥ 13 bytes. */
// @ts-ignore: decorator
@inline export function putVarintField(f: u32, v: u64): void {
  putTag(f, Wire.VARINT);
  putVarint(v);
}

/** Writes a double field (fixed64). Caller reserved ≥ 11 bytes. */
// @ts-ignore: decorator
@inline export function putDoubleField(f: u32, v: f64): void {
  putTag(f, Wire.FIXED64);
  store<f64>(O.pos, v);
  O.pos += 8;
}

/** Writes the tag and length prefix of a length-delimited field; the caller writes the `n` content bytes. */
export function putLenPrefix(f: u32, n: u64): void {
  O.need(16);
  putTag(f, Wire.LEN);
  putVarint(n);
}

/** Writes a string/bytes field with content [p, p+n) (any length; flushes as needed). */
export function putBytesField(f: u32, p: usize, n: u32): void {
  putLenPrefix(f, n);
  O.raw(p, n);
}
