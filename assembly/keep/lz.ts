/**
 * A byte-oriented LZ77 block codec (the LZ4 family's sequence layout), for bytes a host keeps in memory between
 * passes (the viewer keeps the dump it read once: web/file_source.ts). Built for speed on both sides, not for
 * ratio: no entropy coding, the last two match distances then one hash probe per position, 16-bit offsets. A CUPTI
 * dump (fixed-size records, mostly zeros and repeated fields) shrinks 2.8–3.8× (docs/performance/viewer.md, "The kept
 * file, packed").
 *
 * A packed block is a run of sequences, each:
 *   token u8          high nibble: literal count (15: more follows), low nibble: match length − 4 (15: more)
 *   [count bytes]     while 255: add 255 and continue; the last one (< 255) is added and ends the count
 *   literals          that many bytes, copied as they are
 *   offset u16 LE     1..65535 back from the current output position (absent once the output is complete)
 *   [length bytes]    the match length's continuation, as for the literal count
 * The unpacked length is known to the decoder (the caller keeps it): the block ends when the output is complete
 * right after a sequence's literals. The encoder always ends with literals (no match starts in the last 12 bytes),
 * so a well-formed block's last sequence has no offset.
 */

/** Shortest match the encoder emits (bytes). */
const MIN_MATCH: u32 = 4;
/** No match starts within this many bytes of the end (the matcher loads 8 bytes at a time). */
const MATCH_START_LIMIT: usize = 12;
/** The last bytes are always literals. */
const LAST_LITERALS: usize = 5;
/** Bits of the hash table's index (4 bytes per entry: 256 KiB). */
export const HASH_BITS: u32 = 16;
/** Largest match distance (bytes). */
const MAX_OFFSET: usize = 65535;
/** Bytes the decoder may write past the output's end and read past the input's end (wide copies). */
export const SLACK: usize = 32;

/** Most bytes {@link pack} writes for `n` input bytes. */
export function packBound(n: u32): u32 {
  return n + n / 255 + 16;
}

// @ts-ignore: decorator
@inline function hash4(v: u32): usize {
  return <usize>((v * 2654435761) >>> (32 - HASH_BITS));
}

/** Writes a count's continuation bytes (count ≥ 15 already in the token). */
// @ts-ignore: decorator
@inline function putCount(op: usize, rest: usize): usize {
  while (rest >= 255) {
    store<u8>(op, 255);
    op++;
    rest -= 255;
  }
  store<u8>(op, <u8>rest);
  return op + 1;
}

/** Writes literals [from, to) with their token; returns the output position and the token's address. */
// @ts-ignore: decorator
@inline function putLiterals(op: usize, from: usize, to: usize, matchNibble: u32): usize {
  const n = to - from;
  if (n >= 15) {
    store<u8>(op, <u8>(0xf0 | matchNibble));
    op = putCount(op + 1, n - 15);
  } else {
    store<u8>(op, <u8>((<u32>n << 4) | matchNibble));
    op++;
  }
  if (n <= 16) {
    // Most literal runs are short: one wide copy (both areas have slack after them) instead of a memory.copy call.
    v128.store(op, v128.load(from));
  } else {
    memory.copy(op, from, n);
  }
  return op + n;
}

/**
 * Packs the `n` bytes at `src` into `dst` (room for {@link packBound}(n) bytes); `table` is the matcher's hash
 * table (4 << HASH_BITS bytes, any contents: cleared here). Reads up to 8 bytes past `src + n` are never made.
 * Returns the packed length.
 */
export function pack(src: usize, n: usize, dst: usize, table: usize): usize {
  memory.fill(table, 0, <usize>4 << HASH_BITS);
  let op = dst;
  let anchor = src;
  const end = src + n;
  if (n > MATCH_START_LIMIT) {
    const startLimit = end - MATCH_START_LIMIT;
    const matchLimit = end - LAST_LITERALS;
    let ip = src + 1;
    let misses: u32 = 0;
    // The last two match distances, tried before the hash (zstd's repeat offsets): fixed-size records repeat their
    // fields at the record's size or at the distance to the last record of the same kind, where the one-probe hash
    // often holds a nearer, shorter match (or none): the bench dump packs 3.07 → 3.76×, the H100 sample 2.49 → 2.82×.
    let lastDist: usize = 0;
    let prevDist: usize = 0;
    while (ip < startLimit) {
      const seq = load<u32>(ip);
      let ref: usize;
      if (lastDist != 0 && ip - src >= lastDist && load<u32>(ip - lastDist) == seq) {
        ref = ip - lastDist;
      } else if (prevDist != 0 && ip - src >= prevDist && load<u32>(ip - prevDist) == seq) {
        ref = ip - prevDist;
      } else {
        const slot = table + (hash4(seq) << 2);
        // Entries are positions + 1 (0: empty), relative to src.
        const e = <usize>load<u32>(slot);
        store<u32>(slot, <u32>(ip - src + 1));
        ref = src + e - 1;
        if (e == 0 || ip - ref > MAX_OFFSET || load<u32>(ref) != seq) {
          // No match: step further the longer the data stays incompressible (LZ4's acceleration).
          ip += 1 + <usize>(misses++ >> 6);
          continue;
        }
      }
      misses = 0;
      // Extend backwards over bytes not yet emitted, then forwards 8 bytes at a time.
      while (ip > anchor && ref > src && load<u8>(ip - 1) == load<u8>(ref - 1)) {
        ip--;
        ref--;
      }
      const dist = ip - ref;
      if (dist != lastDist) {
        prevDist = lastDist;
        lastDist = dist;
      }
      let mp = ip + MIN_MATCH;
      let tail = true;
      while (mp + 8 <= matchLimit) {
        const x = load<u64>(mp) ^ load<u64>(mp - dist);
        if (x != 0) {
          mp += <usize>(ctz(x) >> 3);
          tail = false;
          break;
        }
        mp += 8;
      }
      if (tail) {
        while (mp < matchLimit && load<u8>(mp) == load<u8>(mp - dist)) mp++;
      }
      const mlen = mp - ip - MIN_MATCH;
      op = putLiterals(op, anchor, ip, mlen >= 15 ? 15 : <u32>mlen);
      store<u16>(op, <u16>dist);
      op += 2;
      if (mlen >= 15) op = putCount(op, mlen - 15);
      ip = mp;
      anchor = ip;
      // The position just before the match's end seeds the table for what follows.
      if (ip - 2 > src) store<u32>(table + (hash4(load<u32>(ip - 2)) << 2), <u32>(ip - 2 - src + 1));
    }
  }
  return putLiterals(op, anchor, end, 0) - dst;
}

/**
 * Reads a count's continuation bytes at `ip` (each 255 adds and continues, the first below 255 adds and ends):
 * returns (the sum << 32) | the bytes read, or u64.MAX_VALUE when they run past `inEnd` or sum to 2^32 or more.
 */
// @ts-ignore: decorator
@inline function readCount(ip: usize, inEnd: usize): u64 {
  let p = ip;
  let sum: u64 = 0;
  let b: u32;
  do {
    if (p >= inEnd) return u64.MAX_VALUE;
    b = load<u8>(p++);
    sum += b;
  } while (b == 255 && sum <= 0xffff_ffff);
  // A count of 2^32 or more is longer than any block: malformed.
  return sum > 0xffff_ffff ? u64.MAX_VALUE : (sum << 32) | <u64>(p - ip);
}

/**
 * Unpacks the block of `m` bytes at `src` into exactly `n` bytes at `dst`. Both areas need {@link SLACK} bytes of
 * room after them (wide copies). Returns `n`, or -1 when the block is malformed (a count past either end, an offset
 * of 0 or before `dst`, or input left over): nothing outside `dst .. dst + n + SLACK` is written either way.
 */
export function unpack(src: usize, m: usize, dst: usize, n: usize): isize {
  let ip = src;
  let op = dst;
  const inEnd = src + m;
  const outEnd = dst + n;
  while (true) {
    if (ip >= inEnd) return -1;
    const token = <u32>load<u8>(ip++);
    let lit = <usize>(token >> 4);
    if (lit == 15) {
      const c = readCount(ip, inEnd);
      if (c == u64.MAX_VALUE) return -1;
      lit += <usize>(c >> 32);
      ip += <usize>(c & 0xffffffff);
    }
    if (lit > inEnd - ip || lit > outEnd - op) return -1;
    if (lit <= 16) {
      // Short literal runs (most of them): one wide copy, within the slack.
      v128.store(op, v128.load(ip));
    } else {
      memory.copy(op, ip, lit);
    }
    ip += lit;
    op += lit;
    if (op == outEnd) return ip == inEnd ? <isize>n : -1;
    if (inEnd - ip < 2) return -1;
    const off = <usize>load<u16>(ip);
    ip += 2;
    let len = <usize>(token & 15);
    if (len == 15) {
      const c = readCount(ip, inEnd);
      if (c == u64.MAX_VALUE) return -1;
      len += <usize>(c >> 32);
      ip += <usize>(c & 0xffffffff);
    }
    len += MIN_MATCH;
    if (off == 0 || off > op - dst || len > outEnd - op) return -1;
    let from = op - off;
    const stop = op + len;
    if (off < 16) {
      // A short period (a run of zeros: offset 1): write one period's multiple ≥ 16 bytes byte by byte; from then
      // on the bytes 16+ back repeat with that multiple as the distance, so the wide copy below is exact.
      const d = off * ((16 + off - 1) / off);
      const first = op + (d < len ? d : len);
      while (op < first) {
        store<u8>(op, load<u8>(from));
        op++;
        from++;
      }
      from = op - d;
    }
    while (op < stop) {
      v128.store(op, v128.load(from));
      op += 16;
      from += 16;
    }
    op = stop;
  }
}
