/**
 * Vendor arguments of one event: a short list of (key, typed value) pairs a decoder attaches to an {@link Ev}
 * (`argsPtr`/`argsLen`) for what the normalized fields have no place for — Synapse's recipe id and name, stream and
 * event handles, data type and `extraArgs`. Emitters write them as they are (Chrome JSON args); the list is valid
 * only while the event is being emitted (one scratch buffer, rebuilt per event).
 *
 * Layout, entry after entry (no alignment): u8 type ({@link ARG_U64}, {@link ARG_STR}, {@link ARG_F64},
 * {@link ARG_HEX}), u8 0, u16 key length K, u32 value length V (8 for numbers), K key bytes, V value bytes. Keys and
 * string values are valid UTF-8 (repaired when they are not).
 */
import { repairUtf8, repairedLen } from "./utf8";

/** Unsigned 64-bit integer value. */
export const ARG_U64: u8 = 0;
/** UTF-8 string value. */
export const ARG_STR: u8 = 1;
/** IEEE double value. */
export const ARG_F64: u8 = 2;
/** Unsigned 64-bit integer written as a "0x…" hex string (handles, addresses). */
export const ARG_HEX: u8 = 3;

let buf: usize = 0;
let cap: u32 = 0;
let len: u32 = 0;

/** Forgets the scratch buffer (after heap.reset()). */
export function argsReset(): void {
  buf = 0;
  cap = 0;
  len = 0;
}

/** Starts a new list (the previous one becomes invalid). */
export function argsBegin(): void {
  len = 0;
}

/** Start of the current list. */
export function argsPtr(): usize {
  return buf;
}

/** Bytes in the current list. */
export function argsLen(): u32 {
  return len;
}

function room(n: u32): void {
  if (len + n <= cap) return;
  let c = cap == 0 ? <u32>1024 : cap;
  while (c < len + n) c <<= 1;
  const b = heap.alloc(c);
  if (buf != 0) {
    memory.copy(b, buf, len);
    heap.free(buf);
  }
  buf = b;
  cap = c;
}

function entry(type: u8, kp: usize, kn: u32, vn: u32): usize {
  const k = repairUtf8(kp, kn);
  const kl = min(repairedLen, <u32>0xffff);
  room(8 + kl + vn);
  const e = buf + len;
  store<u8>(e, type);
  store<u8>(e, 0, 1);
  store<u16>(e, <u16>kl, 2);
  store<u32>(e, vn, 4);
  memory.copy(e + 8, k, kl);
  len += 8 + kl + vn;
  return e + 8 + kl;
}

/** Appends key [kp, kp+kn) with an unsigned integer value. */
export function argU64(kp: usize, kn: u32, v: u64): void {
  store<u64>(entry(ARG_U64, kp, kn, 8), v);
}

/** Appends key [kp, kp+kn) with an unsigned integer value written as hex ("0x1f"). */
export function argHex(kp: usize, kn: u32, v: u64): void {
  store<u64>(entry(ARG_HEX, kp, kn, 8), v);
}

/** Appends key [kp, kp+kn) with a double value. */
export function argF64(kp: usize, kn: u32, v: f64): void {
  store<f64>(entry(ARG_F64, kp, kn, 8), v);
}

/** Appends key [kp, kp+kn) with the string [vp, vp+vn) (repaired to valid UTF-8). */
export function argStr(kp: usize, kn: u32, vp: usize, vn: u32): void {
  const v = repairUtf8(vp, vn);
  const vl = repairedLen;
  // The key is copied first: repairing it may allocate, the value pointer stays valid either way.
  const at = entry(ARG_STR, kp, kn, vl);
  memory.copy(at, v, vl);
}

// ---- Reading (emitters) ----------------------------------------------------------------------------------------------

/** Type of the entry at `a`. */
// @ts-ignore: decorator
@inline export function argType(a: usize): u8 {
  return load<u8>(a);
}
/** Key bytes of the entry at `a`. */
// @ts-ignore: decorator
@inline export function argKey(a: usize): usize {
  return a + 8;
}
/** Key length of the entry at `a`. */
// @ts-ignore: decorator
@inline export function argKeyLen(a: usize): u32 {
  return <u32>load<u16>(a, 2);
}
/** Value bytes of the entry at `a` (u64/f64 for numbers). */
// @ts-ignore: decorator
@inline export function argValue(a: usize): usize {
  return a + 8 + <usize>load<u16>(a, 2);
}
/** Value length of the entry at `a`. */
// @ts-ignore: decorator
@inline export function argValueLen(a: usize): u32 {
  return load<u32>(a, 4);
}
/** The entry after the one at `a`. */
// @ts-ignore: decorator
@inline export function argNext(a: usize): usize {
  return a + 8 + <usize>load<u16>(a, 2) + <usize>load<u32>(a, 4);
}

/** Whether the last {@link findU64} found its key. */
export let found: bool = false;

/**
 * The value of the first unsigned-integer entry keyed [kp, kp+kn) in the list of `n` bytes at `list` (sets
 * {@link found}; 0 when there is none). A scan: lists are a few entries long.
 */
export function findU64(list: usize, n: u32, kp: usize, kn: u32): u64 {
  let a = list;
  const end = list + n;
  while (a < end) {
    if (argType(a) == ARG_U64 && argKeyLen(a) == kn && memory.compare(argKey(a), kp, kn) == 0) {
      found = true;
      return load<u64>(argValue(a));
    }
    a = argNext(a);
  }
  found = false;
  return 0;
}
