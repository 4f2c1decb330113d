/**
 * UTF-8 validation and repair: every output wants valid UTF-8, and names come from untrusted dumps.
 */
import { arenaAlloc } from "../util/arena";

/** Length of the valid UTF-8 sequence at p (1-4), or 0 when the bytes at p are not a valid sequence. */
// @ts-ignore: decorator
@inline function seqLen(p: usize, end: usize): u32 {
  const b0 = <u32>load<u8>(p);
  if (b0 < 0x80) return 1;
  if (b0 < 0xc2) return 0;
  if (b0 < 0xe0) {
    if (p + 2 > end) return 0;
    return (<u32>load<u8>(p, 1) & 0xc0) == 0x80 ? 2 : 0;
  }
  if (b0 < 0xf0) {
    if (p + 3 > end) return 0;
    const b1 = <u32>load<u8>(p, 1);
    const b2 = <u32>load<u8>(p, 2);
    if ((b1 & 0xc0) != 0x80 || (b2 & 0xc0) != 0x80) return 0;
    if (b0 == 0xe0 && b1 < 0xa0) return 0; // overlong
    if (b0 == 0xed && b1 >= 0xa0) return 0; // surrogates
    return 3;
  }
  if (b0 < 0xf5) {
    if (p + 4 > end) return 0;
    const b1 = <u32>load<u8>(p, 1);
    if ((b1 & 0xc0) != 0x80 || (<u32>load<u8>(p, 2) & 0xc0) != 0x80 || (<u32>load<u8>(p, 3) & 0xc0) != 0x80) return 0;
    if (b0 == 0xf0 && b1 < 0x90) return 0;
    if (b0 == 0xf4 && b1 >= 0x90) return 0;
    return 4;
  }
  return 0;
}

/** True when [p, p+n) is valid UTF-8. */
export function isValidUtf8(p: usize, n: usize): bool {
  const end = p + n;
  while (p < end) {
    if (load<u8>(p) < 0x80) {
      p++;
      continue;
    }
    const l = seqLen(p, end);
    if (l == 0) return false;
    p += l;
  }
  return true;
}

/** Result length of the last {@link repairUtf8}. */
export let repairedLen: u32 = 0;

/**
 * Returns [p, p+n) itself when it is valid UTF-8, else a repaired copy in the arena with each invalid byte replaced
 * by U+FFFD. The length is in {@link repairedLen}.
 */
export function repairUtf8(p: usize, n: usize): usize {
  if (isValidUtf8(p, n)) {
    repairedLen = <u32>n;
    return p;
  }
  const out = arenaAlloc(n * 3);
  const end = p + n;
  let q = out;
  while (p < end) {
    const l = seqLen(p, end);
    if (l == 0) {
      store<u8>(q, 0xef);
      store<u8>(q, 0xbf, 1);
      store<u8>(q, 0xbd, 2);
      q += 3;
      p += 1;
    } else {
      memory.copy(q, p, l);
      q += l;
      p += l;
    }
  }
  repairedLen = <u32>(q - out);
  return out;
}
