/**
 * Greedy LZ77 matcher for DEFLATE (RFC 1951 §4 leaves the method open): at each position a hash of the next
 * HASH_BYTES bytes picks one earlier position (the latest with that hash); a candidate within 32 KiB whose first 4
 * bytes agree is extended 8 bytes at a time up to 258 and taken at once. Positions inside a match are not hashed
 * except the last ones, and a run of positions without a match is crossed in growing steps (every byte still
 * goes out as a literal), which keeps incompressible input fast. Symbols are gathered and counted per block of
 * BLOCK_SYMBOLS and handed to the block writer.
 */
import { writeBlock, literalSymbol, matchSymbol, LIT_FREQ, DIST_FREQ } from "./block";
import { LEN_SLOT, DIST_SLOT_LO, DIST_SLOT_HI } from "./tables";

/** log2 of the hash table's entries (u32 positions). */
export const HASH_BITS: u32 = 16;
/** Bytes hashed per position (4 to 8). */
const HASH_BYTES: u32 = 5;
/** Symbols per block before its Huffman codes are built and it is written. */
export const BLOCK_SYMBOLS: i32 = 32768;
/** Longest stride over unmatched input (bytes). */
export const MAX_STEP: i32 = 32;
/** Misses before the stride grows by one byte (log2). */
const STEP_SHIFT: u32 = 5;

// @ts-ignore: decorator
@inline function hashAt(p: usize): usize {
  if (HASH_BYTES == 4) return <usize>((load<u32>(p) * 0x9e3779b1) >> (32 - HASH_BITS));
  return <usize>(((load<u64>(p) << (64 - 8 * HASH_BYTES)) * 0x9e3779b97f4a7c15) >> (64 - HASH_BITS));
}

/** Appends the byte at `p` as a literal to the `ns` symbols at `syms` and counts it; returns the new count. */
// @ts-ignore: decorator
@inline function literal(syms: usize, ns: i32, p: usize): i32 {
  const b = <usize>load<u8>(p);
  store<u32>(syms + (<usize>ns << 2), literalSymbol(<u32>b));
  const lf = LIT_FREQ + (b << 2);
  store<u32>(lf, load<u32>(lf) + 1);
  return ns + 1;
}

/**
 * Compresses [inp, inp + n) as DEFLATE blocks, the last one final, through the block writer (which must have been
 * started with bitsBegin). `table` is the hash table (4 << HASH_BITS bytes, any content: every candidate is checked
 * against the input), `syms` room for BLOCK_SYMBOLS + MAX_STEP symbols. The input needs 8 readable bytes past its end.
 */
export function deflate(inp: usize, n: usize, table: usize, syms: usize): void {
  memory.fill(table, 0, <usize>4 << HASH_BITS);
  let i: usize = 0;
  let blockStart: usize = 0;
  let ns: i32 = 0;
  let misses: u32 = 0;
  const limit: usize = n >= 8 ? n - 8 : 0;
  while (i < limit) {
    const h = hashAt(inp + i);
    const cand = <usize>load<u32>(table + (h << 2));
    store<u32>(table + (h << 2), <u32>i);
    const dist = i - cand;
    if (dist - 1 < 32768 && load<u32>(inp + cand) == load<u32>(inp + i)) {
      const maxLen = min<usize>(258, n - i);
      let len: usize = 4;
      while (true) {
        if (len + 8 > maxLen) {
          while (len < maxLen && load<u8>(inp + cand + len) == load<u8>(inp + i + len)) len++;
          break;
        }
        const x = load<u64>(inp + cand + len) ^ load<u64>(inp + i + len);
        if (x != 0) {
          len += <usize>(ctz(x) >> 3);
          break;
        }
        len += 8;
      }
      const l = len - 3;
      const lf = LIT_FREQ + ((257 + <usize>load<u8>(LEN_SLOT + l)) << 2);
      store<u32>(lf, load<u32>(lf) + 1);
      const d = dist - 1;
      const ds = <usize>(d < 256 ? load<u8>(DIST_SLOT_LO + d) : load<u8>(DIST_SLOT_HI + (d >> 7)));
      store<u32>(syms + (<usize>ns << 2), matchSymbol(<u32>l, <u32>ds, <u32>d));
      ns++;
      const df = DIST_FREQ + (ds << 2);
      store<u32>(df, load<u32>(df) + 1);
      i += len;
      misses = 0;
      if (i < limit) {
        const j = i - 2;
        store<u32>(table + (hashAt(inp + j) << 2), <u32>j);
      }
    } else {
      const step = min<usize>(1 + (misses++ >> STEP_SHIFT), MAX_STEP);
      const stop = min<usize>(i + step, limit);
      while (i < stop) ns = literal(syms, ns, inp + i++);
    }
    if (ns >= BLOCK_SYMBOLS) {
      writeBlock(syms, ns, inp + blockStart, i - blockStart, false);
      blockStart = i;
      ns = 0;
    }
  }
  // The last bytes (fewer than 8) as literals.
  while (i < n) ns = literal(syms, ns, inp + i++);
  writeBlock(syms, ns, inp + blockStart, n - blockStart, true);
}
